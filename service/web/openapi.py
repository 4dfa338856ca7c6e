"""The API's OpenAPI 3.1 document, generated from the routes themselves.

Each route declares its path parameters, request body and responses once, through
`Api.route`. The same declarations validate what arrives (a body or a path value
that breaks its schema never reaches the view) and build the document served at
`/api/v1/openapi.json`, so the document cannot drift from what the code accepts.
Schemas are plain JSON Schema 2020-12, which is what OpenAPI 3.1 speaks.

A body whose schema depends on a path value (a run's length is the game's) is
declared per value (`PerValue`): the document then gives each value a path of its
own, the value written in place of the parameter, with its own body schema, since
no schema of a body can refer to the path it is sent to.

A part of a schema that follows what may change while the process runs (the set of
registered games) is `Lazy`: it is built when the document or a validator is, and
built again once the Api's `revision` changes, so the document and the checks follow
a game registered after the routes were declared.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from functools import wraps
from typing import Any

import jsonschema_rs
from flask import Blueprint, request

from service.web.errors import ApiError
from service.web.json_body import MAX_BODY_DEPTH, read_json_body

Schema = dict[str, Any]
View = Callable[..., Any]

ERROR_DESCRIPTIONS = {
    400: f"Bad input: malformed JSON (or nested over {MAX_BODY_DEPTH} levels), a number that is "
    "not an integer, a string that is not Unicode text, a value of the wrong type or shape "
    "(an action's included), an invalid seed",
    403: "Refused: a write that is not JSON or not from this site, a line of play on a "
    "daily whose day is not over (whoever asks: `line_opens_at` and Retry-After say when it "
    "opens), or what only a league's maker may do",
    404: "No such game, puzzle, daily, attempt, run, league, invite or member (or not yours, "
    "or not public yet: a league is shown to its members only)",
    409: "Conflict: the answer says the current state (an attempt's, or that the daily is "
    "over), or a cap is reached (a league's members, a player's leagues)",
    413: "The request body is larger than the documented limit",
    422: "An illegal run: the answer names the action index and the rule broken",
    429: "Too many requests: wait the number of seconds in Retry-After",
    503: "The solver's queue is full, or the database stayed busy for a few seconds (locked "
    "by another writer, or every connection of the process taken): nothing was done; retry "
    "after the seconds in Retry-After",
}

ERROR_SCHEMA: Schema = {
    "type": "object",
    "required": ["error", "status"],
    "properties": {
        "error": {"type": "string", "description": "What was wrong, in words"},
        "status": {"type": "integer", "description": "The HTTP status code"},
        "index": {"type": "integer", "description": "422: the index of the illegal action"},
        "reason": {"type": "string", "description": "422: the rule the action broke"},
        "retry_after": {
            "type": "integer",
            "description": "429 and 503, and 403 for a line not public yet: seconds to wait",
        },
        "line_opens_at": {
            "type": "string",
            "format": "date-time",
            "description": "403 for a line not public yet: when it opens (00:00 UTC)",
        },
    },
}

_FLASK_PLACEHOLDER = re.compile(r"<(?:\w+:)?(\w+)>")


@dataclass(frozen=True)
class Lazy:
    """A part of a schema (or of a message) built from what may change while the process
    runs: built again whenever the document or a validator is (see `resolved`)."""

    build: Callable[[], Any]


def resolved(value: Any) -> Any:
    """value with every Lazy part in it built, at any depth."""
    if isinstance(value, Lazy):
        return resolved(value.build())
    if isinstance(value, dict):
        return {key: resolved(item) for key, item in value.items()}
    if isinstance(value, list):
        return [resolved(item) for item in value]
    return value


class Validators:
    """Validators of schemas that may hold Lazy parts, each compiled when first used and
    compiled again once revision() changes."""

    def __init__(self, revision: Callable[[], Hashable]) -> None:
        self._revision = revision
        self._compiled_at: Hashable = None
        self._compiled: dict[Hashable, jsonschema_rs.Validator] = {}

    def of(self, key: Hashable, schema: Schema | Lazy) -> jsonschema_rs.Validator:
        """The validator of schema (its Lazy parts built when compiled), known by key."""
        revision = self._revision()
        if revision != self._compiled_at:
            self._compiled, self._compiled_at = {}, revision
        validator = self._compiled.get(key)
        if validator is None:
            validator = jsonschema_rs.validator_for(resolved(schema))
            self._compiled[key] = validator
        return validator


@dataclass(frozen=True)
class PathParam:
    """A path parameter: its schema, and the status answered when a value breaks it (the
    message may be Lazy)."""

    name: str
    schema: Schema | Lazy
    description: str
    invalid_status: int = 400
    invalid_message: str | Lazy = "invalid {name} {value!r}"

    def refusal(self, value: str) -> ApiError:
        message = resolved(self.invalid_message).format(name=self.name, value=value)
        return ApiError(self.invalid_status, message)

    def document(self) -> Schema:
        return {
            "name": self.name,
            "in": "path",
            "required": True,
            "description": self.description,
            "schema": resolved(self.schema),
        }


@dataclass(frozen=True)
class QueryParam(PathParam):
    """An optional parameter of the query string, checked like a path parameter when given."""

    def document(self) -> Schema:
        return {**super().document(), "in": "query", "required": False}


@dataclass(frozen=True)
class Link:
    """An operation the answer leads to, with its parameters taken from the answer or the
    request (OpenAPI runtime expressions): clients and testing tools follow it."""

    operation_id: str
    parameters: dict[str, str]


@dataclass(frozen=True)
class Answer:
    """A documented response: its description, body schema, headers and links."""

    description: str
    schema: Schema | None = None
    headers: dict[str, str] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)

    def document(self) -> Schema:
        entry: Schema = {"description": self.description}
        if self.schema is not None:
            entry["content"] = {"application/json": {"schema": self.schema}}
        if self.headers:
            entry["headers"] = {
                name: {"description": text, "schema": {"type": "string"}}
                for name, text in self.headers.items()
            }
        if self.links:
            entry["links"] = {
                name: {"operationId": link.operation_id, "parameters": link.parameters}
                for name, link in self.links.items()
            }
        return entry


@dataclass(frozen=True)
class PerValue:
    """A body schema for each value of one path parameter (say each game): bodies is, or
    builds, {value: schema}."""

    param: str
    bodies: dict[str, Schema] | Lazy


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    view_name: str
    summary: str
    description: str
    params: tuple[PathParam, ...]
    query: tuple[QueryParam, ...]
    body: Schema | PerValue | None
    responses: dict[int, Answer]

    def document(self, body_limit: int) -> dict[str, Schema]:
        """The operation's entry under each of its paths: one path, or one per value of the
        parameter its body depends on."""
        if not isinstance(self.body, PerValue):
            return {self.path: self._entry(self.view_name, self.params, self.body, body_limit)}
        fixed = self.body.param
        params = tuple(param for param in self.params if param.name != fixed)
        return {
            self.path.replace(f"{{{fixed}}}", value): self._entry(
                f"{self.view_name}_{value.replace('-', '_')}", params, body, body_limit
            )
            for value, body in resolved(self.body.bodies).items()
        }

    def _entry(
        self,
        operation_id: str,
        params: tuple[PathParam, ...],
        body: Schema | None,
        body_limit: int,
    ) -> Schema:
        entry: Schema = {
            "operationId": operation_id,
            "summary": self.summary,
            "responses": {
                str(status): resolved(response.document())
                for status, response in sorted(self.responses.items())
            },
        }
        if self.description:
            entry["description"] = self.description
        if params or self.query:
            entry["parameters"] = [param.document() for param in (*params, *self.query)]
        if body is not None:
            entry["requestBody"] = {
                "description": f"JSON of at most {body_limit} bytes (a larger body is a 413)",
                "required": True,
                "content": {"application/json": {"schema": resolved(body)}},
            }
        return entry


def _error_responses(statuses: Iterable[int]) -> dict[int, Answer]:
    error_ref = {"$ref": "#/components/schemas/Error"}
    responses = {}
    for status in statuses:
        retry = status in (403, 429, 503)
        headers = {"Retry-After": "Seconds until a new request may pass"} if retry else {}
        responses[status] = Answer(ERROR_DESCRIPTIONS[status], error_ref, headers)
    return responses


class Api:
    """A blueprint's routes with the schemas they declare, and the document built from them.

    revision() changes whenever a Lazy part of a schema may build to something else."""

    def __init__(
        self,
        blueprint: Blueprint,
        *,
        title: str,
        version: str,
        description: str,
        revision: Callable[[], Hashable] = lambda: None,
    ):
        self.blueprint = blueprint
        self.info = {"title": title, "version": version, "description": description}
        self.schemas: dict[str, Schema] = {"Error": ERROR_SCHEMA}
        self.params: dict[str, PathParam] = {}
        self.operations: list[Operation] = []
        self.validators = Validators(revision)

    def schema(self, name: str, schema: Schema) -> Schema:
        """Register a named schema of the document; returns the reference to it."""
        self.schemas[name] = schema
        return {"$ref": f"#/components/schemas/{name}"}

    def path_param(self, param: PathParam) -> None:
        self.params[param.name] = param

    def route(
        self,
        rule: str,
        method: str,
        *,
        summary: str,
        responses: dict[int, Answer],
        body: Schema | PerValue | None = None,
        errors: Iterable[int] = (),
        query: Iterable[QueryParam] = (),
    ) -> Callable[[View], View]:
        """Register a view for (rule, method) with what it accepts and answers.

        Path values are checked against their parameter's schema and a declared body
        is read, validated and passed to the view as `body`. A declared query parameter is
        checked when given and passed to the view by name (None when not given).
        """
        params = tuple(self.params[name] for name in _FLASK_PLACEHOLDER.findall(rule))
        queried = tuple(query)
        if isinstance(body, PerValue):
            assert body.param in (param.name for param in params), f"{rule} has no {body.param}"
        # A route that reads or writes the database may find it locked: a 503 to retry.
        checked_params = (*params, *queried)
        error_statuses = set(errors) | {param.invalid_status for param in checked_params} | {503}
        if body is not None:
            # Every write: a malformed body, a body not JSON or not same-origin, a body too big.
            error_statuses |= {400, 403, 413}

        def register(view: View) -> View:
            self.operations.append(
                Operation(
                    method=method.lower(),
                    path=_FLASK_PLACEHOLDER.sub(r"{\1}", rule),
                    view_name=view.__name__,
                    summary=summary,
                    description=(view.__doc__ or "").strip(),
                    params=params,
                    query=queried,
                    body=body,
                    responses={**_error_responses(sorted(error_statuses)), **responses},
                )
            )
            checked = _checked_view(view, params, queried, body, self.validators)
            self.blueprint.add_url_rule(rule, view.__name__, checked, methods=[method])
            return view

        return register

    def document(self, body_limit: int) -> Schema:
        """The OpenAPI document; body_limit is the app's request body limit in bytes."""
        paths: dict[str, Schema] = {}
        for operation in self.operations:
            for path, entry in operation.document(body_limit).items():
                paths.setdefault(path, {})[operation.method] = entry
        return {
            "openapi": "3.1.0",
            "info": self.info,
            "servers": [{"url": self.blueprint.url_prefix or "/"}],
            "paths": paths,
            "components": {"schemas": resolved(self.schemas)},
        }


def _body_validator(
    view_name: str, body: Schema | PerValue | None, validators: Validators
) -> Callable[[dict[str, str]], jsonschema_rs.Validator | None]:
    """The validator of a request's body, given its (checked) path values."""
    if body is None:
        return lambda _values: None
    if not isinstance(body, PerValue):
        return lambda _values: validators.of(("body", view_name), body)

    def per_value(values: dict[str, str]) -> jsonschema_rs.Validator:
        value = values[body.param]
        return validators.of(("body", view_name, value), Lazy(lambda: resolved(body.bodies)[value]))

    return per_value


def _check_param(param: PathParam, value: str, validators: Validators) -> None:
    """Refuse a path or query value its parameter's schema does not allow."""
    if not validators.of(("param", param.name), param.schema).is_valid(value):
        raise param.refusal(value)


def _checked_view(
    view: View,
    params: tuple[PathParam, ...],
    query: tuple[QueryParam, ...],
    body: Schema | PerValue | None,
    validators: Validators,
) -> View:
    body_validator = _body_validator(view.__name__, body, validators)

    @wraps(view)
    def checked(**values: Any) -> Any:
        for param in params:
            _check_param(param, values[param.name], validators)
        for param in query:
            given = request.args.get(param.name)
            if given is not None:
                _check_param(param, given, validators)
            values[param.name] = given
        validator = body_validator(values)
        if validator is not None:
            values["body"] = read_json_body(validator)
        return view(**values)

    return checked
