"""The OpenAPI document describes every route, and the API keeps to it (schemathesis, with
the project's schemathesis.toml: what JSON Schema cannot say is listed, with its tests, in
tests/schemathesis_hooks.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import jsonschema_rs
import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.definitions import OPENAPI_31_VALIDATOR

from puzzles import GAMES
from service.web.api import api
from service.web.api.attempts import APPEND_BODY, START_BODY
from service.web.api.dailies import ACTIONS_BODY
from service.web.api.puzzles import ASK_BODY
from service.web.api.runs import RUN_BODY
from service.web.openapi import resolved
from tests.api_support import client_of

ROOT = Path(__file__).resolve().parent.parent
# The document's operations (a path per game where a body's schema is the game's), each
# with valid (positive) requests; those that take input also with invalid ones.
CASES = [
    (method.upper(), path, mode)
    for path, operations in api.document(64 * 1024)["paths"].items()
    for method, operation in operations.items()
    for mode in GenerationMode
    if mode is GenerationMode.POSITIVE or "parameters" in operation or "requestBody" in operation
]
MAX_EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    positive_data_acceptance,
    negative_data_rejection,
]
GAME_IN_PATH = re.compile("/(" + "|".join(map(re.escape, GAMES)) + ")(?=/|$)")


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


def test_every_link_leads_to_an_operation_with_the_parameters_it_sets(document: dict):
    operations = {
        operation["operationId"]: operation
        for operations in document["paths"].values()
        for operation in operations.values()
    }
    links = [
        link
        for operation in operations.values()
        for answer in operation["responses"].values()
        for link in answer.get("links", {}).values()
    ]
    assert len(links) >= 7
    for link in links:
        target = operations[link["operationId"]]
        assert set(link["parameters"]) == {param["name"] for param in target["parameters"]}


def test_every_api_route_is_documented(app: Flask, document: dict):
    routes = {
        (rule.rule.removeprefix("/api/v1"), method.lower())
        for rule in app.url_map.iter_rules()
        if rule.endpoint.startswith("api.")
        for method in rule.methods - {"HEAD", "OPTIONS"}
    }
    documented = {
        (GAME_IN_PATH.sub("/{game}", path).replace("{", "<").replace("}", ">"), method)
        for path, operations in document["paths"].items()
        for method in operations
    }
    assert documented == routes


def tiebreak_fields(node: object, path: str = "") -> Iterator[tuple[str, dict]]:
    """Every number of the document named tiebreak or ending in _tiebreak, by its path (not
    GET /games' description of each game's tie-break)."""
    if isinstance(node, dict):
        for key, value in node.items():
            named = key == "tiebreak" or key.endswith("_tiebreak")
            if named and value.get("type") != "object":
                yield f"{path}/{key}", value
            yield from tiebreak_fields(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from tiebreak_fields(value, f"{path}/{index}")


def test_every_tiebreak_says_what_it_counts_in_each_game(document: dict):
    fields = dict(tiebreak_fields(document["components"]["schemas"]))
    holders = {path.split("/")[1] for path in fields}
    assert holders == {
        "Analysis", "Attempt", "History", "LeagueDayStanding", "Leaderboard", "Me", "ParLine",
        "PlayState", "Puzzle", "Rally", "Run", "RunStep", "Solution",
    }  # fmt: skip
    assert len(fields) == 20
    for path, schema in fields.items():
        for game in GAMES.values():
            assert f"{game.title}: {game.tiebreak_rule.describe()}" in schema["description"], path


def body_of(document: dict, path: str) -> dict:
    return document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


def test_the_bodies_validated_are_the_bodies_documented(document: dict):
    assert body_of(document, "/daily/{day}/{game}/attempt") == START_BODY
    assert body_of(document, "/attempts/{attempt_id}/actions") == resolved(APPEND_BODY)
    assert body_of(document, "/puzzles/{game}/{seed}") == ASK_BODY
    for game in GAMES:
        run_body = resolved(RUN_BODY.bodies)[game]
        actions_body = resolved(ACTIONS_BODY.bodies)[game]
        assert body_of(document, f"/puzzles/{game}/{{seed}}/runs") == run_body
        assert body_of(document, f"/play/{game}/{{seed}}") == actions_body
        assert body_of(document, f"/daily/{{day}}/{game}/play") == actions_body


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_game_has_its_own_limit_on_a_runs_length(
    game: str, document: dict, client: FlaskClient
):
    """No schema of a body can refer to the path it is sent to: each game gets a path of
    its own, whose body allows the game's longest run and no more."""
    longest = GAMES[game].max_actions
    for path in (f"/puzzles/{game}/{{seed}}/runs", f"/play/{game}/{{seed}}"):
        actions = body_of(document, path)["properties"]["actions"]
        assert actions["maxItems"] == longest
    too_long = [{"type": "start"}] * (longest + 1)
    refused = client.post(f"/api/v1/play/{game}/limits", json={"actions": too_long})
    assert refused.status_code == 400
    assert f"has more than {longest} items" in refused.get_json()["error"]


def test_the_body_limit_is_documented(make_app):
    app = make_app(RALLY_MAX_BODY_BYTES="4321")
    document = client_of(app).get("/api/v1/openapi.json").get_json()
    runs = document["paths"]["/puzzles/crazy-rally/{seed}/runs"]["post"]
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
    config = SchemathesisConfig.from_path(ROOT / "schemathesis.toml")
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", app, config=config)
    operation = schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    def keeps_to_the_document(case: schemathesis.Case) -> None:
        case.call_and_validate(checks=CHECKS)

    keeps_to_the_document()
