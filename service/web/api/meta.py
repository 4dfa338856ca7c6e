"""What the API says about itself: the games and the OpenAPI document."""

from __future__ import annotations

from flask import Response, current_app, jsonify

from puzzles import GAMES
from service.web.api.common import GAME_NAME, api
from service.web.openapi import Answer

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
                    "required": ["name", "title", "rules_version", "max_actions"],
                    "properties": {
                        "name": GAME_NAME,
                        "title": {"type": "string"},
                        "rules_version": {"type": "string"},
                        "max_actions": {"type": "integer"},
                    },
                },
            }
        },
    },
)


@api.route("/games", "GET", summary="The games", responses={200: Answer("Every game", GAMES_LIST)})
def list_games() -> Response:
    """Every game with its title, current rules version and longest possible run."""
    return jsonify(
        {
            "games": [
                {
                    "name": name,
                    "title": game.title,
                    "rules_version": game.rules_version,
                    "max_actions": game.max_actions,
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
