"""Runs: practice runs submitted whole, any stored run by its id (its share URL) and its
replay step by step, and the caller's own runs (their history).

Official runs are made only by attempts (service.web.api.attempts). A run of a
daily whose day is not over shows its score but not its actions, except to its
own player: a player whose own attempt is over sees no one else's line either,
since a second identity of theirs could then play it. The history lists no
actions, and no seed of a daily whose day is not over.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify, request

from puzzles import GAMES
from service.domain import daily
from service.storage.players import HISTORY_PAGE, PlayedRun
from service.storage.puzzles import PuzzleRecord
from service.storage.runs import RunRecord
from service.web import players
from service.web.api.common import (
    DISPLAY_NAME,
    ENGINE_STATE_PROPERTIES,
    GAME_NAME,
    NULLABLE_INT,
    PUZZLE,
    SECRET_SEED,
    TOKEN_ID,
    api,
    check_line_open,
    engine_answer,
    is_hidden,
    is_secret_day,
    per_game,
    puzzle_by_id,
    puzzle_json,
    replay,
    run_actions,
    services,
    tiebreak_field,
)
from service.web.api.puzzles import practice_puzzle_or_new
from service.web.errors import ApiError
from service.web.openapi import Answer, Link, PathParam

api.path_param(
    PathParam(
        "run_id", TOKEN_ID, "A run's id", invalid_status=404, invalid_message="no run {value!r}"
    )
)
api.path_param(
    PathParam(
        "step",
        {"type": "string", "pattern": "^(0|[1-9][0-9]{0,3})$"},
        "How many of the run's actions are played, from 0 (the start) to all of them",
        invalid_status=404,
        invalid_message="no step {value!r} of a run",
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
            "seed": SECRET_SEED,
            "actions": {
                "type": ["array", "null"],
                "description": "Null for a run of a daily whose day is not over, except to "
                "the run's own player",
            },
            "score": {**NULLABLE_INT, "description": "Null when the run ended unfinished"},
            "tiebreak": tiebreak_field({"type": "integer"}, "The run's tie-break"),
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
            "optimum_tiebreak": tiebreak_field(
                NULLABLE_INT, "The optimum's tie-break; null when optimum is"
            ),
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
HISTORY = api.schema(
    "History",
    {
        "type": "object",
        "required": ["runs", "next"],
        "properties": {
            "runs": {
                "type": "array",
                "maxItems": HISTORY_PAGE,
                "items": {
                    "type": "object",
                    "required": [
                        "id",
                        "game",
                        "seed",
                        "date",
                        "number",
                        "score",
                        "tiebreak",
                        "finished",
                        "official",
                        "created_at",
                    ],
                    "properties": {
                        "id": TOKEN_ID,
                        "game": GAME_NAME,
                        "seed": SECRET_SEED,
                        "date": {"type": ["string", "null"], "format": "date"},
                        "number": NULLABLE_INT,
                        "score": NULLABLE_INT,
                        "tiebreak": tiebreak_field({"type": "integer"}, "The run's tie-break"),
                        "finished": {"type": "boolean"},
                        "official": {"type": "boolean"},
                        "created_at": {"type": "string", "format": "date-time"},
                    },
                },
            },
            "next": {
                "type": ["string", "null"],
                "description": "The `before` of the next page; null on the last",
            },
        },
    },
)
RUN_STEP = api.schema(
    "RunStep",
    {
        "type": "object",
        "required": [*ENGINE_STATE_PROPERTIES, "step"],
        "properties": {
            **ENGINE_STATE_PROPERTIES,
            "step": {"type": "integer", "minimum": 0, "description": "Actions played"},
        },
    },
)
RUN_BODY = per_game(
    lambda game: {
        "type": "object",
        "required": ["actions"],
        "properties": {"actions": run_actions(game), "name": DISPLAY_NAME},
        "additionalProperties": False,
    }
)


def shows_actions(run: RunRecord, puzzle: PuzzleRecord, viewer: str | None) -> bool:
    """Whether the caller may see the run's line (see the module's docstring)."""
    return not is_hidden(puzzle) or viewer == run.player_id


def run_json(run: RunRecord, puzzle: PuzzleRecord) -> dict[str, Any]:
    viewer = players.request_player_id()
    shown = puzzle_json(puzzle)
    return {
        "id": run.id,
        "game": puzzle.game,
        "seed": shown["seed"],
        "actions": run.actions if shows_actions(run, puzzle, viewer) else None,
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
    responses={
        201: Answer(
            "The stored run, scored by the server",
            RUN,
            links={
                "GetRun": Link("get_run", {"run_id": "$response.body#/id"}),
                "GetRunStep": Link("get_run_step", {"run_id": "$response.body#/id", "step": "1"}),
            },
        )
    },
    errors=[404, 422, 429, 503],
)
def submit_run(game: str, seed: str, body: dict[str, Any]) -> tuple[Response, int]:
    """Replay, score and store a finished game of a practice puzzle or a revealed past
    daily: practice, never official. Today's and coming dailies are a 404 here (they are
    played through an attempt). An illegal action is a 422 naming its index and rule; a run
    that is not over is a 422."""
    players.admit_write(services().limiter.writes)
    name = players.clean_display_name(body.get("name"))
    puzzle, _new = practice_puzzle_or_new(game, seed)
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
    run = services().store.runs.add(
        puzzle,
        players.player_id_for_write(),
        actions=actions,
        score=engine.score(final),
        tiebreak=engine.tiebreak(final),
        finished=engine.is_finished(final),
        display_name=name,
        today=daily.today(),
        known_player=players.current_player_id() is not None,
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
    no seed, and its actions only to its own player."""
    store = services().store
    run = store.runs.get(run_id)
    if run is None:
        raise ApiError(404, f"no run {run_id!r}")
    return jsonify(run_json(run, puzzle_by_id(run.puzzle_id)))


@api.route(
    "/runs/<run_id>/steps/<step>",
    "GET",
    summary="One step of a run's replay",
    responses={200: Answer("What the run's player saw after that many actions", RUN_STEP)},
    errors=[403, 404, 422],
)
def get_run_step(run_id: str, step: str) -> Response:
    """The view and legal actions after the run's first `step` actions: its replay, one
    step at a time, to whoever may see its actions (a run of a daily whose day is not over:
    its own player only; to anyone else a 403 saying when it opens). A run stored under
    older rules that the current rules refuse is a 422."""
    run = services().store.runs.get(run_id)
    if run is None:
        raise ApiError(404, f"no run {run_id!r}")
    puzzle = puzzle_by_id(run.puzzle_id)
    if not shows_actions(run, puzzle, players.current_player_id()):
        check_line_open(puzzle, "this run's moves open")
    played = int(step)
    if played > len(run.actions):
        raise ApiError(404, f"run {run_id!r} has {len(run.actions)} actions, not {played}")
    engine = GAMES[puzzle.game]
    state = replay(engine, puzzle.seed, run.actions[:played])
    return jsonify({**engine_answer(engine, state), "step": played})


def _history_json(played: PlayedRun) -> dict[str, Any]:
    return {
        "id": played.id,
        "game": played.game,
        "seed": None if is_secret_day(played.daily_date) else played.seed,
        "date": played.daily_date.isoformat() if played.daily_date else None,
        "number": played.number,
        "score": played.score,
        "tiebreak": played.tiebreak,
        "finished": played.finished,
        "official": played.official,
        "created_at": played.created_at.isoformat(),
    }


@api.route(
    "/players/me/runs",
    "GET",
    summary="The caller's runs",
    responses={200: Answer("The caller's runs, newest first, a page at a time", HISTORY)},
    errors=[404],
)
def get_my_runs() -> Response:
    """The runs of the player in the request's cookie, newest first, 50 a page (none without
    a cookie), without their actions. `?before=<id>` gives the page after the run `id`;
    `next` is that id for the following page, null on the last. A daily's seed shows once
    its day is over."""
    player = players.current_player_id()
    before = request.args.get("before")
    page = [] if player is None else services().store.players.history(player, before)
    if page is None:
        raise ApiError(404, f"no run {before!r} of yours")
    following = page[-1].id if len(page) == HISTORY_PAGE else None
    response = jsonify({"runs": [_history_json(run) for run in page], "next": following})
    # One player's own runs: no shared cache may keep them.
    response.cache_control.private = True
    response.cache_control.no_store = True
    return response
