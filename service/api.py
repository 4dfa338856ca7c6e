"""The JSON API under /api/v1: dailies, puzzles, runs, leaderboards, solutions and play.

Runs are replayed and scored here, never taken from the client. Each route
declares its parameters, body and responses once (see service.openapi), which
both validates requests and builds the OpenAPI document.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar

from flask import Blueprint, Response, current_app, jsonify, request

from puzzles import GAMES, Game, IllegalAction, State
from service import daily, players
from service.action_forms import action_schema
from service.config import Config
from service.openapi import Api, ApiError, PathParam
from service.openapi import Response as Answer
from service.queue import request_solve
from service.ratelimit import RateLimiter
from service.store import HISTORY_PAGE, PlayedRun, PuzzleRecord, RankedRun, RunRecord, Store

API_VERSION = "1"
# Cache lifetimes of daily GETs: short while a puzzle may still change (pending).
SETTLED_MAX_AGE = 300
UNSETTLED_MAX_AGE = 30
# The shape of a daily's seed (service.daily.daily_seed): its date, then 16 hex digits.
DAILY_SEED = re.compile(r"d(\d{8})-[0-9a-f]{16}")

T = TypeVar("T")

API_PREFIX = "/api/v1"
blueprint = Blueprint("api", __name__, url_prefix=API_PREFIX)
api = Api(
    blueprint,
    title="Rally Daily API",
    version=API_VERSION,
    description=(
        "Daily seeded solitaire races with proven optimal scores. Runs are replayed "
        "and scored by the server; a player is an anonymous id in a signed cookie."
    ),
)


class ShortCache:
    """Values one process keeps for a moment (RALLY_CACHE_SECONDS of the Flask config).

    The hottest reads, today's dailies and a puzzle's record, change at most once:
    when the solver stores the optimum. Keeping them a second takes the database
    off those paths, at the price of showing a new optimum up to a second late.
    """

    MAX_ENTRIES = 4096

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[float, Any]] = {}

    def get(self, key: Hashable, compute: Callable[[], T | None]) -> T | None:
        """The kept value of key, else compute()'s, kept unless it is None (about to change)."""
        now = time.monotonic()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now:
            return entry[1]
        value = compute()
        if value is not None:
            if len(self._entries) >= self.MAX_ENTRIES:
                self._entries.clear()
            self._entries[key] = (now + current_app.config["RALLY_CACHE_SECONDS"], value)
        return value


@dataclass(frozen=True)
class Services:
    """What the views use, built once per application by the app factory."""

    config: Config
    store: Store
    limiter: RateLimiter
    cache: ShortCache = field(default_factory=ShortCache)


def services() -> Services:
    return current_app.extensions["rally"]


# Schemas

LONGEST_RUN = max((game.max_actions for game in GAMES.values()), default=0)
NULLABLE_INT = {"type": ["integer", "null"]}
DATE = {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
GAME_NAME = {"type": "string", "enum": sorted(GAMES)}
SEED = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
RUN_ID = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,32}$"}
ACTIONS = {
    "type": "array",
    "maxItems": LONGEST_RUN,
    "items": action_schema(),
    "description": "Actions as the legal_actions lists give them, in order "
    "(at most the game's max_actions)",
}
DISPLAY_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 40,
    "pattern": "^[^\\x00-\\x1f\\x7f]+$",
    "description": "The name shown on leaderboards (replaces the player's previous one)",
}

api.path_param(
    PathParam(
        "game",
        GAME_NAME,
        "A game name",
        invalid_status=404,
        invalid_message=f"unknown game {{value!r}}; known games: {', '.join(sorted(GAMES))}",
    )
)
api.path_param(PathParam("seed", SEED, "1 to 64 characters of letters, digits, '_' or '-'"))
api.path_param(PathParam("day", DATE, "A UTC date, YYYY-MM-DD"))
api.path_param(
    PathParam(
        "run_id", RUN_ID, "A run's id", invalid_status=404, invalid_message="no run {value!r}"
    )
)

PUZZLE = api.schema(
    "Puzzle",
    {
        "type": "object",
        "required": [
            "game",
            "seed",
            "number",
            "date",
            "rules_version",
            "status",
            "optimum",
            "tiebreak",
        ],
        "properties": {
            "game": GAME_NAME,
            "seed": SEED,
            "number": {**NULLABLE_INT, "description": "The daily's number; null for practice"},
            "date": {
                "type": ["string", "null"],
                "format": "date",
                "description": "The daily's date; null for practice",
            },
            "rules_version": {"type": "string"},
            "status": {"enum": ["pending", "solved", "failed"]},
            "optimum": {
                **NULLABLE_INT,
                "description": "Best score; null unless solved (or when no run can finish)",
            },
            "tiebreak": {**NULLABLE_INT, "description": "Best tie-break among optimal runs"},
        },
    },
)
DAILY = api.schema(
    "Daily",
    {
        "type": "object",
        "required": ["date", "puzzles"],
        "properties": {"date": DATE, "puzzles": {"type": "array", "items": PUZZLE}},
    },
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
        ],
        "properties": {
            "id": RUN_ID,
            "game": GAME_NAME,
            "seed": SEED,
            "actions": {"type": "array"},
            "score": {**NULLABLE_INT, "description": "Null when the run ended unfinished"},
            "tiebreak": {"type": "integer"},
            "finished": {"type": "boolean"},
            "official": {
                "type": "boolean",
                "description": "The player's first finished run of a daily, submitted on its day",
            },
            "name": {"type": ["string", "null"]},
            "created_at": {"type": "string", "format": "date-time"},
            "share_url": {"type": "string", "format": "uri"},
            "optimum": NULLABLE_INT,
            "optimum_tiebreak": NULLABLE_INT,
            "puzzle": PUZZLE,
        },
    },
)
LEADERBOARD = api.schema(
    "Leaderboard",
    {
        "type": "object",
        "required": ["puzzle", "entries", "histogram", "players"],
        "properties": {
            "puzzle": PUZZLE,
            "entries": {
                "type": "array",
                "description": "Official runs, best first (score, then tie-break, then time)",
                "items": {
                    "type": "object",
                    "required": ["rank", "run_id", "name", "score", "tiebreak", "created_at"],
                    "properties": {
                        "rank": {"type": "integer", "minimum": 1},
                        "run_id": RUN_ID,
                        "name": {"type": ["string", "null"]},
                        "score": {"type": "integer"},
                        "tiebreak": {"type": "integer"},
                        "created_at": {"type": "string", "format": "date-time"},
                    },
                },
            },
            "histogram": {
                "type": "array",
                "description": "How many official runs reached each score, by score",
                "items": {
                    "type": "object",
                    "required": ["score", "count"],
                    "properties": {
                        "score": {"type": "integer"},
                        "count": {"type": "integer", "minimum": 1},
                    },
                },
            },
            "players": {"type": "integer", "description": "Players with any run of it"},
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
                        "id": RUN_ID,
                        "game": GAME_NAME,
                        "seed": {
                            **SEED,
                            "type": ["string", "null"],
                            "description": "Null for a daily whose day is not over",
                        },
                        "date": {"type": ["string", "null"], "format": "date"},
                        "number": NULLABLE_INT,
                        "score": NULLABLE_INT,
                        "tiebreak": {"type": "integer"},
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
SOLUTION = api.schema(
    "Solution",
    {
        "type": "object",
        "required": ["game", "seed", "status", "optimum", "tiebreak", "proved", "actions"],
        "properties": {
            "game": GAME_NAME,
            "seed": SEED,
            "status": {"enum": ["pending", "solved", "failed"]},
            "optimum": NULLABLE_INT,
            "tiebreak": NULLABLE_INT,
            "proved": {"type": ["boolean", "null"]},
            "actions": {
                "type": ["array", "null"],
                "description": "The optimal run; null unless solved",
            },
        },
    },
)
PLAY_STATE = api.schema(
    "PlayState",
    {
        "type": "object",
        "required": ["view", "legal_actions", "over", "finished", "score", "tiebreak", "actions"],
        "properties": {
            "view": {"type": "object", "description": "What the player may see now"},
            "legal_actions": {"type": "array", "description": "Empty exactly when over"},
            "over": {"type": "boolean"},
            "finished": {"type": "boolean"},
            "score": NULLABLE_INT,
            "tiebreak": {"type": "integer"},
            "actions": {"type": "array", "description": "The actions played, as sent"},
        },
    },
)
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
ACTIONS_BODY = {
    "type": "object",
    "required": ["actions"],
    "properties": {"actions": ACTIONS},
    "additionalProperties": False,
}
RUN_BODY = {
    "type": "object",
    "required": ["actions"],
    "properties": {"actions": ACTIONS, "name": DISPLAY_NAME},
    "additionalProperties": False,
}
DAILY_HEADERS = {
    "ETag": "A validator of the body: send it back in If-None-Match",
    "Cache-Control": "How long the answer may be cached",
}


@blueprint.after_request
def open_gets_to_every_origin(response: Response) -> Response:
    """CORS: anyone may read the API from a browser; writes stay same-origin."""
    if request.method in ("GET", "HEAD"):
        response.headers["Access-Control-Allow-Origin"] = "*"
    return response


# Engine helpers (no database)


def _replay(game: Game, seed: str, actions: list[Any]) -> State:
    """The state after actions; 400 for too many, 422 naming the first illegal one."""
    if len(actions) > game.max_actions:
        raise ApiError(
            400,
            f"too many actions: {len(actions)}; no legal run of {game.name} "
            f"is longer than {game.max_actions}",
        )
    try:
        return game.replay(seed, actions)
    except IllegalAction as error:
        raise ApiError(
            422,
            f"illegal action {error.index}: {error.reason}",
            index=error.index,
            reason=error.reason,
        ) from None


# Puzzles and dailies


def _is_published(puzzle: PuzzleRecord) -> bool:
    """A daily is public from its own day on; practice puzzles always are."""
    return puzzle.daily_date is None or puzzle.daily_date <= daily.today()


def _find_puzzle(game: str, seed: str) -> PuzzleRecord | None:
    """The stored puzzle of (game, seed) under the current rules (kept a moment)."""
    rules_version = GAMES[game].rules_version
    return services().cache.get(
        ("puzzle", game, seed, rules_version),
        lambda: services().store.get_puzzle(game, seed, rules_version),
    )


def _stored_puzzle(game: str, seed: str) -> PuzzleRecord:
    """The published puzzle of (game, seed) under the current rules, or 404."""
    puzzle = _find_puzzle(game, seed)
    if puzzle is None or not _is_published(puzzle):
        raise ApiError(
            404,
            f"no puzzle {game}/{seed} yet: GET /api/v1/puzzles/{game}/{seed} "
            "queues a practice seed",
        )
    return puzzle


def _daily_date_of(game: str, seed: str) -> date | None:
    """The date whose daily this seed is (checked against its HMAC), else None."""
    match = DAILY_SEED.fullmatch(seed)
    if match is None:
        return None
    try:
        day = datetime.strptime(match[1], "%Y%m%d").date()
    except ValueError:
        return None
    return day if daily.daily_seed(services().config.daily_key, game, day) == seed else None


def _puzzle_or_new(game: str, seed: str) -> PuzzleRecord:
    """The stored puzzle, else a new one queued for solving (rate limited).

    A daily's seed is recorded as that daily even before the scheduled job has
    run, so its runs count as official; any other seed is a practice puzzle.
    """
    puzzle = _find_puzzle(game, seed)
    if puzzle is None:
        day = _daily_date_of(game, seed)
        if day is not None and day > daily.today():
            raise ApiError(404, f"no puzzle {game}/{seed}")
        limiter = services().limiter
        limiter.check(limiter.new_seeds)
        number = None if day is None else daily.puzzle_number(day)
        puzzle = services().store.ensure_puzzle(
            game, seed, GAMES[game].rules_version, daily_date=day, number=number
        )
        request_solve(game, seed, services().config)
    if not _is_published(puzzle):
        raise ApiError(404, f"no puzzle {game}/{seed}")
    return puzzle


def _current_dailies(day: date) -> list[PuzzleRecord]:
    """The day's puzzle of every game under its current rules, recording missing ones."""
    stored = {
        puzzle.game: puzzle
        for puzzle in services().store.daily_puzzles(day)
        if puzzle.game in GAMES and puzzle.rules_version == GAMES[puzzle.game].rules_version
    }
    if stored.keys() == GAMES.keys():
        return [stored[name] for name in sorted(stored)]
    recorded = daily.ensure_dailies(services().store, services().config.daily_key, day)
    for puzzle in recorded:
        if puzzle.game not in stored:
            request_solve(puzzle.game, puzzle.seed, services().config)
    return recorded


def _max_age(day: date, puzzles: list[PuzzleRecord]) -> int:
    settled = all(puzzle.status != "pending" for puzzle in puzzles)
    max_age = SETTLED_MAX_AGE if settled else UNSETTLED_MAX_AGE
    if day != daily.today():
        return max_age
    # Today's answer must not outlive the day: /daily changes at 00:00 UTC.
    midnight = datetime.combine(day + timedelta(days=1), datetime.min.time(), UTC)
    return min(max_age, int((midnight - datetime.now(UTC)).total_seconds()))


@dataclass(frozen=True)
class RenderedDaily:
    puzzles: list[PuzzleRecord]
    body: str
    etag: str


def _render_daily(day: date) -> RenderedDaily:
    puzzles = _current_dailies(day)
    payload = {"date": day.isoformat(), "puzzles": [puzzle.to_json() for puzzle in puzzles]}
    body = jsonify(payload).get_data(as_text=True)
    return RenderedDaily(puzzles, body, hashlib.sha1(body.encode()).hexdigest())


def _daily_answer(day: date) -> Response:
    """The day's puzzles with validators; the hottest path of the API, so kept rendered."""
    rendered = services().cache.get(("daily", day), lambda: _render_daily(day))
    response = current_app.response_class(rendered.body, mimetype="application/json")
    response.cache_control.public = True
    response.cache_control.max_age = _max_age(day, rendered.puzzles)
    response.set_etag(rendered.etag)
    return response.make_conditional(request)


DAILY_RESPONSES = {
    200: Answer("One puzzle per game", DAILY, DAILY_HEADERS),
    304: Answer("Not modified: the If-None-Match ETag still holds"),
}


@api.route("/daily", "GET", summary="Today's daily puzzles", responses=DAILY_RESPONSES)
def get_today() -> Response:
    """Today's puzzle of every game (days roll over at 00:00 UTC), with ETag and Cache-Control."""
    return _daily_answer(daily.today())


@api.route(
    "/daily/<day>",
    "GET",
    summary="The daily puzzles of a date",
    responses=DAILY_RESPONSES,
    errors=[404],
)
def get_daily(day: str) -> Response:
    """The puzzles of a past or current date; a future date, or one before the first
    daily, is a 404."""
    try:
        wanted = date.fromisoformat(day)
    except ValueError:
        raise ApiError(400, f"invalid date {day!r}: use YYYY-MM-DD") from None
    if wanted > daily.today():
        raise ApiError(404, f"the daily of {wanted} is not published yet")
    if wanted < daily.FIRST_DAY:
        raise ApiError(404, f"the first daily is of {daily.FIRST_DAY}")
    return _daily_answer(wanted)


@api.route("/games", "GET", summary="The games", responses={200: Answer("Every game", GAMES_LIST)})
def list_games() -> Response:
    """Every game with its title, rules version and longest possible run."""
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
    "/puzzles/<game>/<seed>",
    "GET",
    summary="One puzzle",
    responses={200: Answer("The puzzle, solved or pending", PUZZLE)},
    errors=[429],
)
def get_puzzle(game: str, seed: str) -> Response:
    """A puzzle with its optimum or pending status. A seed never seen before becomes a
    practice puzzle queued for solving (rate limited): poll until its status is solved."""
    return jsonify(_puzzle_or_new(game, seed).to_json())


# Runs


def _run_json(run: RunRecord, puzzle: PuzzleRecord) -> dict[str, Any]:
    return {
        "id": run.id,
        "game": puzzle.game,
        "seed": puzzle.seed,
        "actions": run.actions,
        "score": run.score,
        "tiebreak": run.tiebreak,
        "finished": run.finished,
        "official": run.official,
        "name": run.display_name,
        "created_at": run.created_at.isoformat(),
        "share_url": f"{request.host_url}runs/{run.id}",
        "optimum": puzzle.optimum,
        "optimum_tiebreak": puzzle.tiebreak,
        "puzzle": puzzle.to_json(),
    }


@api.route(
    "/puzzles/<game>/<seed>/runs",
    "POST",
    summary="Submit a run",
    body=RUN_BODY,
    responses={201: Answer("The stored run, scored by the server", RUN)},
    errors=[422, 429],
)
def submit_run(game: str, seed: str, body: dict[str, Any]) -> tuple[Response, int]:
    """Replay, score and store a finished game. The player's first finished run of a daily,
    submitted on its day, is official (on the leaderboard); later runs are practice. An
    illegal action is a 422 naming its index and rule; a run that is not over is a 422."""
    services().limiter.check(services().limiter.writes)
    engine = GAMES[game]
    actions = body["actions"]
    final = _replay(engine, seed, actions)
    if not engine.is_over(final):
        raise ApiError(
            422,
            "the run is not over: submit a game played to its end",
            index=len(actions),
            reason="a run ends when no action is legal",
        )
    puzzle = _puzzle_or_new(game, seed)
    run = services().store.add_run(
        puzzle,
        players.player_id_for_write(),
        actions=actions,
        score=engine.score(final),
        tiebreak=engine.tiebreak(final),
        finished=engine.is_finished(final),
        display_name=body.get("name"),
    )
    return jsonify(_run_json(run, puzzle)), 201


@api.route("/runs/<run_id>", "GET", summary="One run", responses={200: Answer("The run", RUN)})
def get_run(run_id: str) -> Response:
    """A stored run: what its share URL shows."""
    run = services().store.get_run(run_id)
    if run is None:
        raise ApiError(404, f"no run {run_id!r}")
    puzzle = services().store.get_puzzle_by_id(run.puzzle_id)
    assert puzzle is not None, "a run's puzzle is kept by a foreign key"
    return jsonify(_run_json(run, puzzle))


def _ranked(entries: list[RankedRun]) -> list[dict[str, Any]]:
    """Leaderboard rows with standard competition ranks (equal results share a rank)."""
    rows: list[dict[str, Any]] = []
    for position, run in enumerate(entries, start=1):
        tied = rows and (rows[-1]["score"], rows[-1]["tiebreak"]) == (run.score, run.tiebreak)
        rows.append(
            {
                "rank": rows[-1]["rank"] if tied else position,
                "run_id": run.id,
                "name": run.display_name,
                "score": run.score,
                "tiebreak": run.tiebreak,
                "created_at": run.created_at.isoformat(),
            }
        )
    return rows


@api.route(
    "/puzzles/<game>/<seed>/leaderboard",
    "GET",
    summary="Leaderboard and score histogram",
    responses={200: Answer("Official runs ranked, and the histogram of their scores", LEADERBOARD)},
    errors=[404],
)
def get_leaderboard(game: str, seed: str) -> Response:
    """The official runs of a puzzle, best first, and how many reached each score (as of at
    most a second ago)."""
    puzzle = _stored_puzzle(game, seed)
    standings = services().store.standings(puzzle.id)
    return jsonify(
        {
            "puzzle": puzzle.to_json(),
            "entries": _ranked(standings.entries),
            "histogram": [{"score": s, "count": n} for s, n in standings.histogram.items()],
            "players": standings.players,
        }
    )


def _history_json(played: PlayedRun) -> dict[str, Any]:
    secret = played.daily_date is not None and played.daily_date >= daily.today()
    return {
        "id": played.id,
        "game": played.game,
        "seed": None if secret else played.seed,
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
    a cookie). `?before=<id>` gives the page after the run `id`; `next` is that id for the
    following page, null on the last. A daily's seed shows once its day is over."""
    player = players.current_player_id()
    before = request.args.get("before")
    page = [] if player is None else services().store.player_history(player, before)
    if page is None:
        raise ApiError(404, f"no run {before!r} of yours")
    following = page[-1].id if len(page) == HISTORY_PAGE else None
    response = jsonify({"runs": [_history_json(run) for run in page], "next": following})
    # One player's own runs: no shared cache may keep them.
    response.cache_control.private = True
    response.cache_control.no_store = True
    return response


def _solution_json(puzzle: PuzzleRecord) -> dict[str, Any]:
    return {
        "game": puzzle.game,
        "seed": puzzle.seed,
        "status": puzzle.status,
        "optimum": puzzle.optimum,
        "tiebreak": puzzle.tiebreak,
        "proved": puzzle.proved,
        "actions": puzzle.witness if puzzle.status == "solved" else None,
    }


def _may_see_solution(puzzle: PuzzleRecord) -> bool:
    """A daily's optimal line shows once its day is over, or to a player who finished it."""
    if puzzle.daily_date is None or puzzle.daily_date < daily.today():
        return True
    player = players.current_player_id()
    return player is not None and services().store.has_finished_run(puzzle.id, player)


@api.route(
    "/puzzles/<game>/<seed>/solution",
    "GET",
    summary="The optimal run",
    responses={
        200: Answer("The optimal run (actions null when solving failed)", SOLUTION),
        202: Answer("Not solved yet: poll again later", SOLUTION),
    },
    errors=[403, 404],
)
def get_solution(game: str, seed: str) -> tuple[Response, int]:
    """The solver's optimal run. Today's daily stays hidden (403) until its day is over,
    except to a player who has submitted a finished run of it."""
    puzzle = _stored_puzzle(game, seed)
    if not _may_see_solution(puzzle):
        raise ApiError(
            403, "today's optimal line is shown once the day is over, or after you finish a run"
        )
    return jsonify(_solution_json(puzzle)), 202 if puzzle.status == "pending" else 200


# Play


@api.route(
    "/play/<game>/<seed>",
    "POST",
    summary="The position after some actions",
    body=ACTIONS_BODY,
    responses={200: Answer("What the player sees and may do next", PLAY_STATE)},
    errors=[422],
)
def play(game: str, seed: str, body: dict[str, Any]) -> Response:
    """Replay actions from the seed's start and show the view and the legal actions: the
    browser plays through this and holds no rules. Nothing is stored."""
    engine = GAMES[game]
    actions = body["actions"]
    final = _replay(engine, seed, actions)
    return jsonify(
        {
            "view": engine.view(final),
            "legal_actions": engine.legal_actions(final),
            "over": engine.is_over(final),
            "finished": engine.is_finished(final),
            "score": engine.score(final),
            "tiebreak": engine.tiebreak(final),
            "actions": actions,
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
