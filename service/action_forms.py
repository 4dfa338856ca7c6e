"""The JSON form of every game's actions, as a JSON Schema the API checks requests against.

The contract's actions are JSON objects whose fields are integers or strings. Python
treats `true` as the integer 1, so an engine comparing values would take `{"gear":
true}` for `{"gear": 1}`; the schema keeps such forms out before any engine sees them.
It checks the form only: which values are legal stays the engines' call (a 422 naming
the rule), and so does an unknown type or a missing or extra field.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]

INTEGER: Schema = {"type": "integer"}
TEXT: Schema = {"type": "string"}
TEXT_OR_NULL: Schema = {"type": ["string", "null"]}

# Game -> action type -> the form of each field besides "type".
FIELD_FORMS: dict[str, dict[str, dict[str, Schema]]] = {
    "rallye-raser": {
        "gear": {"gear": INTEGER},
        "roll": {},
        "reroll": {},
        "place": {"die": INTEGER, "row": INTEGER, "lane": TEXT},
        "reserve": {"die": INTEGER},
        "place_reserve": {"row": INTEGER, "lane": TEXT},
        "modify": {"step": INTEGER, "delta": INTEGER},
        "control": {"step": INTEGER, "delta": INTEGER},
        "move": {},
    },
    "crazy-rally": {
        "apply": {"card": TEXT},
        "start": {},
        "drive": {"card": TEXT, "mode": TEXT, "event": TEXT_OR_NULL},
    },
}


def action_schema() -> Schema:
    """One schema for the actions of every game: each action type's fields have their form.

    Action types are unique across games, so one schema serves every game's routes.
    """
    forms = {kind: fields for by_kind in FIELD_FORMS.values() for kind, fields in by_kind.items()}
    named = {"type": "object", "required": ["type"]}
    return {
        "description": "An action as the game's legal_actions lists it: an object whose "
        "`type` names it, its other fields integers or strings",
        "allOf": [
            {
                "if": {**named, "properties": {"type": {"const": kind}}},
                "then": {"properties": fields},
            }
            for kind, fields in forms.items()
            if fields
        ],
    }
