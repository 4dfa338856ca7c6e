"""Stateless play of a practice puzzle: the position after some actions."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from puzzles import GAMES
from service.web.api.common import api, engine_answer, replay
from service.web.api.dailies import ACTIONS_BODY, PLAY_STATE
from service.web.api.puzzles import practice_puzzle_allowed
from service.web.openapi import Answer


@api.route(
    "/play/<game>/<seed>",
    "POST",
    summary="The position after some actions, for practice",
    body=ACTIONS_BODY,
    responses={200: Answer("What the player sees and may do next", PLAY_STATE)},
    errors=[404, 422],
)
def play(game: str, seed: str, body: dict[str, Any]) -> Response:
    """Replay actions from the seed's start and show the view and the legal actions: the
    browser plays practice through this and holds no rules. Nothing is stored. Today's and
    coming dailies are a 404 (their seed is secret; they are played through an attempt)."""
    practice_puzzle_allowed(game, seed)
    engine = GAMES[game]
    actions = body["actions"]
    return jsonify({**engine_answer(engine, replay(engine, seed, actions)), "actions": actions})
