"""What the API says about itself: the games and the OpenAPI document."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, jsonify

from puzzles import GAMES
from puzzles.base import BETTER_SIGNS, TiebreakRule
from service.web.api.common import GAME_NAME, api
from service.web.openapi import Answer

TIEBREAK_RULE = {
    "type": "object",
    "description": "What the game's tie-break counts and which way is better. Every "
    "tie-break the API gives is higher when better: the count itself, or minus the count "
    "when fewer is better (sign)",
    "required": ["counts", "better", "sign", "description"],
    "properties": {
        "counts": {"type": "string", "description": "What it counts: rounds, final speed"},
        "better": {
            "enum": sorted(BETTER_SIGNS),
            "description": "Which way of the count is better",
        },
        "sign": {
            "enum": sorted(set(BETTER_SIGNS.values())),
            "description": "A tie-break is sign times the count (so the count is sign times "
            "the tie-break): -1 when fewer or lower is better, else 1",
        },
        "description": {
            "type": "string",
            "description": "The same in words: rounds, fewer is better, given as minus the rounds",
        },
    },
}
GAMES_LIST = api.schema(
    "Games",
    {
        "type": "object",
        "required": ["games"],
        "properties": {
            "games": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "title", "rules_version", "max_actions", "tiebreak"],
                    "properties": {
                        "name": GAME_NAME,
                        "title": {"type": "string"},
                        "rules_version": {"type": "string"},
                        "max_actions": {"type": "integer"},
                        "tiebreak": TIEBREAK_RULE,
                    },
                },
            }
        },
    },
)


def tiebreak_rule_json(rule: TiebreakRule) -> dict[str, Any]:
    """A game's tie-break as GET /games shows it."""
    return {
        "counts": rule.counts,
        "better": rule.better,
        "sign": rule.sign,
        "description": rule.describe(),
    }


@api.route("/games", "GET", summary="The games", responses={200: Answer("Every game", GAMES_LIST)})
def list_games() -> Response:
    """Every game with its title, current rules version, longest possible run and what its
    tie-break counts."""
    return jsonify(
        {
            "games": [
                {
                    "name": name,
                    "title": game.title,
                    "rules_version": game.rules_version,
                    "max_actions": game.max_actions,
                    "tiebreak": tiebreak_rule_json(game.tiebreak_rule),
                }
                for name, game in sorted(GAMES.items())
            ]
        }
    )


@api.route(
    "/openapi.json",
    "GET",
    summary="This document",
    responses={200: Answer("The OpenAPI 3.1 document of the API", {"type": "object"})},
)
def openapi_document() -> Response:
    """The API described as OpenAPI 3.1, generated from the routes."""
    return jsonify(api.document(current_app.config["MAX_CONTENT_LENGTH"]))
