"""Runs: practice runs submitted whole, and any stored run by its id (its share URL).

Official runs are made only by attempts (service.api.attempts). A run of a
daily whose day is not over shows its score but not its actions, except to its
own player and to players whose attempt of that daily is over.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from puzzles import GAMES
from service import daily, players
from service.api.common import (
    ACTIONS,
    DISPLAY_NAME,
    GAME_NAME,
    NULLABLE_INT,
    PUZZLE,
    SEED,
    TOKEN_ID,
    api,
    attempt_is_over,
    is_hidden,
    puzzle_by_id,
    puzzle_json,
    replay,
    services,
)
from service.api.puzzles import practice_puzzle_or_new
from service.openapi import ApiError, PathParam
from service.openapi import Response as Answer
from service.store import PuzzleRecord, RunRecord

api.path_param(
    PathParam(
        "run_id", TOKEN_ID, "A run's id", invalid_status=404, invalid_message="no run {value!r}"
    )
)

RUN = api.schema(
    "Run",
    {
        "type": "object",
        "required": [
            "id",
            "game",
            "seed",
            "actions",
            "score",
            "tiebreak",
            "finished",
            "official",
            "name",
            "created_at",
            "share_url",
            "optimum",
            "optimum_tiebreak",
            "puzzle",
            "number",
            "date",
            "rules_version",
            "yours",
        ],
        "properties": {
            "id": TOKEN_ID,
            "game": GAME_NAME,
            "seed": {
                "anyOf": [SEED, {"type": "null"}],
                "description": "Null for a daily until its day is over",
            },
            "actions": {
                "type": ["array", "null"],
                "description": "Null for a run of a daily whose day is not over, unless the "
                "caller's own attempt of that daily is over",
            },
            "score": {**NULLABLE_INT, "description": "Null when the run ended unfinished"},
            "tiebreak": {"type": "integer"},
            "finished": {"type": "boolean"},
            "official": {
                "type": "boolean",
                "description": "The player's attempt of a daily, over on the daily's own day",
            },
            "name": {
                "type": ["string", "null"],
                "description": "The player's name when the run was stored",
            },
            "created_at": {"type": "string", "format": "date-time"},
            "share_url": {"type": "string", "format": "uri"},
            "optimum": NULLABLE_INT,
            "optimum_tiebreak": NULLABLE_INT,
            "puzzle": PUZZLE,
            "number": {**NULLABLE_INT, "description": "The daily's number; null for practice"},
            "date": {
                "type": ["string", "null"],
                "format": "date",
                "description": "The daily's date; null for practice",
            },
            "rules_version": {"type": "string", "description": "The rules it was scored under"},
            "yours": {"type": "boolean", "description": "True when the caller played it"},
        },
    },
)
RUN_BODY = {
    "type": "object",
    "required": ["actions"],
    "properties": {"actions": ACTIONS, "name": DISPLAY_NAME},
    "additionalProperties": False,
}


def _shows_actions(run: RunRecord, puzzle: PuzzleRecord, viewer: str | None) -> bool:
    """Whether the caller may see the run's line (see the module's docstring)."""
    return not is_hidden(puzzle) or viewer == run.player_id or attempt_is_over(puzzle, viewer)


def run_json(run: RunRecord, puzzle: PuzzleRecord) -> dict[str, Any]:
    viewer = players.request_player_id()
    shown = puzzle_json(puzzle)
    return {
        "id": run.id,
        "game": puzzle.game,
        "seed": shown["seed"],
        "actions": run.actions if _shows_actions(run, puzzle, viewer) else None,
        "score": run.score,
        "tiebreak": run.tiebreak,
        "finished": run.finished,
        "official": run.official,
        "name": run.display_name,
        "created_at": run.created_at.isoformat(),
        "share_url": f"{services().config.public_url}/runs/{run.id}",
        "optimum": puzzle.optimum,
        "optimum_tiebreak": puzzle.tiebreak,
        "puzzle": shown,
        "number": puzzle.number,
        "date": shown["date"],
        "rules_version": puzzle.rules_version,
        "yours": viewer is not None and viewer == run.player_id,
    }


@api.route(
    "/puzzles/<game>/<seed>/runs",
    "POST",
    summary="Submit a practice run",
    body=RUN_BODY,
    responses={201: Answer("The stored run, scored by the server", RUN)},
    errors=[404, 422, 429, 503],
)
def submit_run(game: str, seed: str, body: dict[str, Any]) -> tuple[Response, int]:
    """Replay, score and store a finished game of a practice puzzle or a revealed past
    daily: practice, never official. Today's and coming dailies are a 404 here (they are
    played through an attempt). An illegal action is a 422 naming its index and rule; a run
    that is not over is a 422."""
    services().limiter.check(services().limiter.writes)
    name = players.clean_display_name(body.get("name"))
    puzzle = practice_puzzle_or_new(game, seed)
    engine = GAMES[game]
    actions = body["actions"]
    final = replay(engine, seed, actions)
    if not engine.is_over(final):
        raise ApiError(
            422,
            "the run is not over: submit a game played to its end",
            index=len(actions),
            reason="a run ends when no action is legal",
        )
    run = services().store.add_run(
        puzzle,
        players.player_id_for_write(),
        actions=actions,
        score=engine.score(final),
        tiebreak=engine.tiebreak(final),
        finished=engine.is_finished(final),
        display_name=name,
        today=daily.today(),
    )
    return jsonify(run_json(run, puzzle)), 201


@api.route(
    "/runs/<run_id>",
    "GET",
    summary="One run",
    responses={200: Answer("The run", RUN)},
    errors=[404],
)
def get_run(run_id: str) -> Response:
    """A stored run: what its share URL shows. A run of a daily whose day is not over shows
    no seed, and its actions only to its player or a player whose attempt is over."""
    store = services().store
    run = store.get_run(run_id)
    if run is None:
        raise ApiError(404, f"no run {run_id!r}")
    return jsonify(run_json(run, puzzle_by_id(run.puzzle_id)))
