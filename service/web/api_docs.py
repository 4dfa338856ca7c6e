"""The API's OpenAPI document as a page people read, rendered by the app itself.

Each operation lists its parameters, request body and answers; a schema becomes a
short description of its type with its fields nested below it, and a reference to
a named schema links to that schema, described once at the end of the page. The
union of every game's actions, which the document repeats in each request that
carries actions, is described once too, as the schema `Action`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from service.web.action_forms import action_schema

Schema = dict[str, Any]
METHOD_ORDER = ("get", "post", "put", "delete")
# Deeper than any schema of the document: a guard against a schema that refers to itself.
MAX_DEPTH = 8
ACTION = "Action"
LIMITS = (
    ("minimum", "at least {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("maxItems", "at most {} items"),
    ("pattern", "matching {}"),
    ("format", "format {}"),
)


@dataclass(frozen=True)
class Node:
    """A schema in words: its summary, a named schema it refers to, and its fields."""

    summary: str
    ref: str | None = None
    description: str = ""
    fields: list[tuple[str, bool, Node]] = field(default_factory=list)


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    anchor: str
    summary: str
    description: str
    parameters: list[Schema]
    body: Node | None
    answers: list[tuple[str, str, Node | None]]
    errors: list[str]  # the error statuses it may answer, each described once on the page


def _type_words(schema: Schema) -> str:
    if "const" in schema:
        return f"exactly {json.dumps(schema['const'])}"
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(value) for value in schema["enum"])
    kind = schema.get("type", "any value")
    words = " or ".join(kind) if isinstance(kind, list) else kind
    limits = [text.format(schema[key]) for key, text in LIMITS if key in schema]
    return ", ".join([words, *limits])


def _is_action_union(schema: Schema) -> bool:
    return any("if" in rule for rule in schema.get("allOf", ()))


def describe(schema: Schema, depth: int = 0, *, link_actions: bool = True) -> Node:
    """The schema in words, its fields and array items nested below it."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return Node(name, ref=name)
    if link_actions and _is_action_union(schema):
        return Node(ACTION, ref=ACTION)
    if depth > MAX_DEPTH:
        return Node(_type_words(schema))
    fields: list[tuple[str, bool, Node]] = []
    required = set(schema.get("required", ()))
    for name, sub in schema.get("properties", {}).items():
        fields.append((name, name in required, describe(sub, depth + 1)))
    if "items" in schema:
        fields.append(("each item", True, describe(schema["items"], depth + 1)))
    for choice in ("anyOf", "oneOf"):
        for number, sub in enumerate(schema.get(choice, ()), start=1):
            fields.append((f"or, form {number}", False, describe(sub, depth + 1)))
    for rule in schema.get("allOf", ()):
        fields.append(_conditional(rule, depth))
    return Node(_type_words(schema), description=schema.get("description", ""), fields=fields)


def _conditional(rule: Schema, depth: int) -> tuple[str, bool, Node]:
    """One `if type is X then these fields` rule of a union of actions."""
    when = rule.get("if", {}).get("properties", {}).get("type", {}).get("const")
    label = f"when type is {json.dumps(when)}" if when is not None else "also"
    return (label, False, describe(rule.get("then", rule), depth + 1))


def _body(entry: Schema) -> Node | None:
    body = entry.get("requestBody")
    if body is None:
        return None
    node = describe(body["content"]["application/json"]["schema"])
    return Node(node.summary, node.ref, body.get("description", ""), node.fields)


def _is_error(status: str) -> bool:
    return int(status) >= 400


def _answers(entry: Schema) -> list[tuple[str, str, Node | None]]:
    answers = []
    for status, answer in entry["responses"].items():
        if _is_error(status):
            continue
        schema = answer.get("content", {}).get("application/json", {}).get("schema")
        answers.append((status, answer["description"], describe(schema) if schema else None))
    return answers


def errors(document: Schema) -> list[tuple[str, str]]:
    """Every error status the API answers, with its description (the same for every
    operation, so the page gives it once)."""
    found: dict[str, str] = {}
    for methods in document["paths"].values():
        for entry in methods.values():
            for status, answer in entry["responses"].items():
                if _is_error(status):
                    found.setdefault(status, answer["description"])
    return sorted(found.items())


def operations(document: Schema) -> list[Operation]:
    """Every operation of the document, in the order of its paths."""
    found = []
    for path, methods in document["paths"].items():
        for method in sorted(methods, key=METHOD_ORDER.index):
            entry = methods[method]
            found.append(
                Operation(
                    method=method.upper(),
                    path=path,
                    anchor=entry["operationId"],
                    summary=entry["summary"],
                    description=entry.get("description", ""),
                    parameters=entry.get("parameters", []),
                    body=_body(entry),
                    answers=_answers(entry),
                    errors=sorted(status for status in entry["responses"] if _is_error(status)),
                )
            )
    return found


def schemas(document: Schema) -> list[tuple[str, Node]]:
    """The document's named schemas, then the actions every game's requests carry."""
    named = [(name, describe(schema)) for name, schema in document["components"]["schemas"].items()]
    return [*named, (ACTION, describe(action_schema(), link_actions=False))]
