"""The JSON form of every game's actions, as a JSON Schema the API checks requests against.

The contract's actions are JSON objects whose `type` names them and whose other fields
are integers, strings or null. Python treats `true` as the integer 1, so an engine
comparing values would take `{"gear": true}` for `{"gear": 1}`; the schema keeps such
forms out before any engine sees them, and so the document says what a request may
hold. It checks the form only, as each engine declares it (`Game.action_forms`):
which values are legal stays the engines' call (a 422 naming the rule), and so does
an unknown type or a missing or extra field.
"""

from __future__ import annotations

from typing import Any

from puzzles import GAMES
from puzzles.base import FieldForm

Schema = dict[str, Any]

FORM_SCHEMAS: dict[FieldForm, Schema] = {
    "integer": {"type": "integer"},
    "string": {"type": "string"},
    "string or null": {"type": ["string", "null"]},
}


def action_schema() -> Schema:
    """One schema for the actions of every game: each action type's fields have their form.

    Action types are unique across games, so one schema serves every game's routes.
    """
    forms = {kind: fields for game in GAMES.values() for kind, fields in game.action_forms.items()}
    named = {"type": "object", "required": ["type"]}
    return {
        "description": "An action as the game's legal_actions lists it: an object whose "
        "`type` names it, its other fields integers, strings or null",
        **named,
        "properties": {"type": {"type": "string"}},
        "additionalProperties": {"type": ["integer", "string", "null"]},
        "allOf": [
            {
                "if": {**named, "properties": {"type": {"const": kind}}},
                "then": {"properties": {name: FORM_SCHEMAS[form] for name, form in fields.items()}},
            }
            for kind, fields in forms.items()
            if fields
        ],
    }
