"""The OpenAPI document describes every route, and the API keeps to it (schemathesis)."""

from __future__ import annotations

import jsonschema_rs
import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from service.api import api
from service.api.attempts import APPEND_BODY, START_BODY
from service.api.dailies import ACTIONS_BODY
from service.api.runs import RUN_BODY
from tests.api_support import client_of

# Every operation with valid (positive) requests; those that take input also with invalid ones.
CASES = [
    (operation.method.upper(), operation.path, mode)
    for operation in api.operations
    for mode in GenerationMode
    if mode is GenerationMode.POSITIVE or operation.params or operation.body is not None
]
MAX_EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def document(app: Flask) -> dict:
    response = client_of(app).get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def test_the_document_is_valid_openapi_3_1(document: dict):
    assert [error.message for error in OPENAPI_31_VALIDATOR.iter_errors(document)] == []
    schemas = [
        *document["components"]["schemas"].values(),
        *(
            operation["requestBody"]["content"]["application/json"]["schema"]
            for operations in document["paths"].values()
            for operation in operations.values()
            if "requestBody" in operation
        ),
    ]
    for schema in schemas:
        jsonschema_rs.meta.validate(schema)


def test_every_api_route_is_documented(app: Flask, document: dict):
    routes = {
        (rule.rule.removeprefix("/api/v1"), method.lower())
        for rule in app.url_map.iter_rules()
        if rule.endpoint.startswith("api.")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    documented = {
        (path.replace("{", "<").replace("}", ">"), method)
        for path, operations in document["paths"].items()
        for method in operations
    }
    assert documented == routes


def test_the_bodies_validated_are_the_bodies_documented(document: dict):
    def body_of(path: str) -> dict:
        return document["paths"][path]["post"]["requestBody"]["content"]["application/json"]

    assert body_of("/puzzles/{game}/{seed}/runs")["schema"] == RUN_BODY
    assert body_of("/play/{game}/{seed}")["schema"] == ACTIONS_BODY
    assert body_of("/daily/{day}/{game}/play")["schema"] == ACTIONS_BODY
    assert body_of("/daily/{day}/{game}/attempt")["schema"] == START_BODY
    assert body_of("/attempts/{attempt_id}/actions")["schema"] == APPEND_BODY


def test_the_body_limit_is_documented(make_app):
    app = make_app(RALLY_MAX_BODY_BYTES="4321")
    document = client_of(app).get("/api/v1/openapi.json").get_json()
    runs = document["paths"]["/puzzles/{game}/{seed}/runs"]["post"]
    assert "4321" in runs["requestBody"]["description"]
    assert "413" in runs["responses"]


@pytest.mark.parametrize(("method", "path", "mode"), CASES, ids=[" ".join(c) for c in CASES])
@pytest.mark.slow
def test_the_api_keeps_to_its_document(method: str, path: str, mode: GenerationMode, make_app):
    """Generated requests, valid (positive) and invalid (negative), get no server error and
    only documented answers."""
    # Limits high enough that generated requests explore the API rather than the 429.
    app = make_app(
        RALLY_WRITES_PER_MINUTE="1000000",
        RALLY_NEW_SEEDS_PER_HOUR="1000000",
        RALLY_ATTEMPTS_PER_ADDRESS="1000000",
        RALLY_NEW_PLAYERS_PER_HOUR="1000000",
    )
    operation = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app)[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    def keeps_to_the_document(case: schemathesis.Case) -> None:
        case.call_and_validate(checks=CHECKS)

    keeps_to_the_document()
