"""What every resource of the API shares: the blueprint, the services, common schemas,
puzzle visibility and the engine helpers.

Visibility is decided here once: a daily is hidden (its seed shown nowhere, the
puzzle unreachable by seed) until its day is over; a practice puzzle never is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from flask import Blueprint, Response, current_app, request

from puzzles import GAMES, Game, IllegalAction, State
from puzzles.rng import SEED_PATTERN
from service import daily
from service.action_forms import action_schema
from service.cache import BriefCache
from service.config import Config
from service.errors import ApiError
from service.openapi import Api, PathParam
from service.ratelimit import RateLimiter
from service.store import PuzzleRecord, Store

API_VERSION = "1"
# How long each process keeps the hottest reads (see service.cache).
CACHE_SECONDS = 1.0
API_PREFIX = "/api/v1"
T = TypeVar("T")

blueprint = Blueprint("api", __name__, url_prefix=API_PREFIX)
api = Api(
    blueprint,
    title="Rally Daily API",
    version=API_VERSION,
    description=(
        "Daily seeded solitaire races with proven optimal scores. A daily is addressed by "
        "game and date; its seed stays secret until its day is over (its SHA-256 commitment "
        "is public meanwhile) and it is played on the server through one attempt per player. "
        "Practice puzzles are any public seed or a revealed past daily. Runs are replayed and "
        "scored by the server; a player is an anonymous id in a signed cookie. Every write "
        "needs Content-Type application/json from the same origin."
    ),
)


@dataclass(frozen=True)
class Services:
    """What the views use, built once per application by the app factory."""

    config: Config
    store: Store
    limiter: RateLimiter
    # Today's dailies and puzzle records, which change once (when solved): kept a second.
    cache: BriefCache[Any] = field(default_factory=lambda: BriefCache(CACHE_SECONDS, 4096))


def services() -> Services:
    return current_app.extensions["rally"]


# Schemas shared by several resources

LONGEST_RUN = max((game.max_actions for game in GAMES.values()), default=0)
NULLABLE_INT = {"type": ["integer", "null"]}
DATE = {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
GAME_NAME = {"type": "string", "enum": sorted(GAMES)}
SEED = {"type": "string", "pattern": f"^{SEED_PATTERN.pattern}$"}
SECRET_SEED = {
    "anyOf": [SEED, {"type": "null"}],
    "description": "Null for a daily until its day is over (00:00 UTC next day)",
}
TOKEN_ID = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,32}$"}
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
    "description": "The name shown on leaderboards from now on (runs stored before keep "
    "theirs). Stored in Unicode NFC; blank names and control, bidirectional or zero-width "
    "characters are refused",
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
            "commitment",
        ],
        "properties": {
            "game": GAME_NAME,
            "seed": SECRET_SEED,
            "number": {**NULLABLE_INT, "description": "The daily's number; null for practice"},
            "date": {
                "type": ["string", "null"],
                "format": "date",
                "description": "The daily's date; null for practice",
            },
            "rules_version": {
                "type": "string",
                "description": "The rules it was recorded under; a puzzle of older rules "
                "keeps its results but is practised under the current rules",
            },
            "status": {"enum": ["pending", "solved", "failed"]},
            "optimum": {
                **NULLABLE_INT,
                "description": "Best score; null unless solved (or when no run can finish)",
            },
            "tiebreak": {**NULLABLE_INT, "description": "Best tie-break among optimal runs"},
            "commitment": {
                "type": "string",
                "pattern": "^[0-9a-f]{64}$",
                "description": 'sha256("<game>:<rules_version>:<seed>") in hex',
            },
        },
    },
)
ENGINE_STATE_PROPERTIES = {
    "view": {"type": "object", "description": "What the player may see now"},
    "legal_actions": {"type": "array", "description": "Empty exactly when over"},
    "over": {"type": "boolean"},
    "finished": {"type": "boolean"},
    "score": NULLABLE_INT,
    "tiebreak": {"type": "integer"},
}


@blueprint.after_request
def open_gets_to_every_origin(response: Response) -> Response:
    """CORS: anyone may read the API from a browser; writes stay same-origin."""
    if request.method in ("GET", "HEAD"):
        response.headers["Access-Control-Allow-Origin"] = "*"
    return response


# Engine helpers (no database)


def check_length(game: Game, count: int) -> None:
    if count > game.max_actions:
        raise ApiError(
            400,
            f"too many actions: {count}; no legal run of {game.name} "
            f"is longer than {game.max_actions}",
        )


def illegal(error: IllegalAction, index: int) -> ApiError:
    return ApiError(
        422, f"illegal action {index}: {error.reason}", index=index, reason=error.reason
    )


def replay(game: Game, seed: str, actions: list[Any]) -> State:
    """The state after actions; 400 for too many, 422 naming the first illegal one."""
    check_length(game, len(actions))
    try:
        return game.replay(seed, actions)
    except IllegalAction as error:
        raise illegal(error, error.index or 0) from None


def engine_answer(game: Game, state: State) -> dict[str, Any]:
    """What the player sees and may do in state."""
    return {
        "view": game.view(state),
        "legal_actions": game.legal_actions(state),
        "over": game.is_over(state),
        "finished": game.is_finished(state),
        "score": game.score(state),
        "tiebreak": game.tiebreak(state),
    }


# Puzzles and their visibility


def is_secret_day(day: date | None) -> bool:
    """True for the date of a daily whose day is not over (None, practice, never is)."""
    return day is not None and not daily.is_revealed(day)


def is_hidden(puzzle: PuzzleRecord) -> bool:
    """A daily is hidden (no seed, no access by seed) until its day is over."""
    return is_secret_day(puzzle.daily_date)


def puzzle_json(puzzle: PuzzleRecord) -> dict[str, Any]:
    """The puzzle as the contract shows it: a hidden daily's seed is null."""
    return {
        "game": puzzle.game,
        "seed": None if is_hidden(puzzle) else puzzle.seed,
        "number": puzzle.number,
        "date": puzzle.daily_date.isoformat() if puzzle.daily_date else None,
        "rules_version": puzzle.rules_version,
        "status": puzzle.status,
        "optimum": puzzle.optimum,
        "tiebreak": puzzle.tiebreak,
        "commitment": daily.commitment(puzzle.game, puzzle.rules_version, puzzle.seed),
    }


def puzzle_by_id(puzzle_id: int) -> PuzzleRecord:
    """A stored puzzle (kept a moment: attempts and runs ask for theirs on every request)."""
    puzzle = services().cache.get(
        ("puzzle-id", puzzle_id), lambda: services().store.get_puzzle_by_id(puzzle_id)
    )
    assert puzzle is not None, "attempts and runs keep their puzzle by a foreign key"
    return puzzle


def attempt_is_over(puzzle: PuzzleRecord, player_id: str | None) -> bool:
    """True when the player has played their attempt of the puzzle to its end."""
    if player_id is None:
        return False
    attempt = services().store.find_attempt(puzzle.id, player_id)
    return attempt is not None and attempt.over


def parse_day(day: str) -> date:
    try:
        return date.fromisoformat(day)
    except ValueError:
        raise ApiError(400, f"invalid date {day!r}: use YYYY-MM-DD") from None


def published_day(day: str) -> date:
    """The date of a daily that exists (today's or a past one); 404 otherwise."""
    wanted = parse_day(day)
    if wanted > daily.today():
        raise ApiError(404, f"the daily of {wanted} is not published yet")
    if wanted < daily.FIRST_DAY:
        raise ApiError(404, f"the first daily is of {daily.FIRST_DAY}")
    return wanted
