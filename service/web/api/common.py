"""What every resource of the API shares: the blueprint, the services, common schemas,
puzzle visibility and the engine helpers.

Visibility is decided here once: a daily is hidden (its seed shown nowhere, the
puzzle unreachable by seed, no line of play on it shown to anyone) until its day is
over; a practice puzzle never is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, TypeVar

from flask import Blueprint, Response, current_app, request

from puzzles import GAMES, IllegalAction, State
from puzzles.base import AnyGame, Game, S
from puzzles.rng import SEED_PATTERN
from service.config import Config
from service.domain import daily
from service.storage.cache import BriefCache
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web.action_forms import action_schema
from service.web.errors import ApiError
from service.web.openapi import Api, Lazy, PathParam, PerValue, Schema
from service.web.ratelimit import RateLimiter
from solver import registry

API_VERSION = "1"
# How long each process keeps the hottest reads (see service.storage.cache).
CACHE_SECONDS = 1.0
# How long a process remembers that it asked for a puzzle's par: until the par is stored,
# every write of that puzzle would otherwise ask the queue again (four Redis round trips
# while the job waits). A job that ended without a par is asked for again after this.
PAR_ASKED_SECONDS = 60.0
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
    # The schemas that name the games follow the registry (see `Lazy` below).
    revision=registry.version,
)


@dataclass(frozen=True)
class Services:
    """What the views use, built once per application by the app factory."""

    config: Config
    store: Store
    limiter: RateLimiter
    # Today's dailies and puzzle records, which change once (when solved): kept a second.
    cache: BriefCache[Any] = field(default_factory=lambda: BriefCache(CACHE_SECONDS, 4096))
    # The pars this process has asked the queue for (see PAR_ASKED_SECONDS).
    pars_asked: BriefCache[bool | None] = field(
        default_factory=lambda: BriefCache(PAR_ASKED_SECONDS, 4096)
    )


def services() -> Services:
    found: Services = current_app.extensions["rally"]
    return found


# Schemas shared by several resources. What depends on the games is Lazy: built from the
# registry when the document or a validator is, so a game registered later is served.

LONGEST_RUN = Lazy(lambda: max((game.max_actions for game in GAMES.values()), default=0))
NULLABLE_INT = {"type": ["integer", "null"]}
DATE = {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"}
GAME_NAME = Lazy(lambda: {"type": "string", "enum": sorted(GAMES)})
SEED = {"type": "string", "pattern": f"^{SEED_PATTERN.pattern}$"}
SECRET_SEED = {
    "anyOf": [SEED, {"type": "null"}],
    "description": "Null for a daily until its day is over (00:00 UTC next day)",
}
TOKEN_ID = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,32}$"}
ACTION = Lazy(action_schema)


def tiebreaks_in_words() -> str:
    """What a tie-break counts in each game, as its engine says (GET /games gives the same)."""
    return "; ".join(
        f"{game.title}: {game.tiebreak_rule.describe()}" for _, game in sorted(GAMES.items())
    )


def tiebreak_field(schema: Schema, what: str) -> Schema:
    """schema with a description: what the field is, then what a tie-break means."""
    return {
        **schema,
        "description": Lazy(
            lambda: (
                f"{what}. A tie-break decides between equal scores and is higher when "
                f"better ({tiebreaks_in_words()}; each game's in GET /games)"
            )
        ),
    }


PAR_TIEBREAK = tiebreak_field(NULLABLE_INT, "The par run's tie-break; null when par is")


def actions_of(longest: int | Lazy, description: str) -> Schema:
    """A list of at most longest actions."""
    return {"type": "array", "maxItems": longest, "items": ACTION, "description": description}


def run_actions(game: AnyGame) -> Schema:
    """The actions of a run of game, from its start: at most its longest run."""
    return actions_of(
        game.max_actions,
        f"Actions as legal_actions lists them, in order: at most {game.max_actions}, the "
        f"longest run of {game.name}",
    )


def per_game(body: Callable[[AnyGame], Schema]) -> PerValue:
    """A body whose schema is the game's (in the path): the document has a path per game."""
    return PerValue(
        "game", Lazy(lambda: {name: body(game) for name, game in sorted(GAMES.items())})
    )


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
        invalid_message=Lazy(
            lambda: f"unknown game {{value!r}}; known games: {', '.join(sorted(GAMES))}"
        ),
    )
)
api.path_param(PathParam("seed", SEED, "1 to 64 characters of letters, digits, '_' or '-'"))
# The first daily: a date whose puzzles exist as long as the service does.
api.path_param(
    PathParam("day", {**DATE, "examples": [daily.FIRST_DAY.isoformat()]}, "A UTC date, YYYY-MM-DD")
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
            "par",
            "par_tiebreak",
            "par_computed",
            "commitment",
            "line_opens_at",
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
            "tiebreak": tiebreak_field(
                NULLABLE_INT, "Best tie-break among optimal runs; null when optimum is"
            ),
            "par": {
                **NULLABLE_INT,
                "description": "The expert's score on the same dice and cards, played without "
                "foresight (its line is the par line); null until computed, or when that run "
                "does not finish",
            },
            "par_tiebreak": PAR_TIEBREAK,
            "par_computed": {
                "type": "boolean",
                "description": "Whether the expert's run is stored: with a null par, it did "
                "not finish",
            },
            "commitment": {
                "type": "string",
                "pattern": "^[0-9a-f]{64}$",
                "description": 'sha256("<game>:<rules_version>:<seed>") in hex',
            },
            "line_opens_at": {
                "type": ["string", "null"],
                "format": "date-time",
                "description": "A daily's end (00:00 UTC of the next day), when its seed "
                "and every line of play on it (its optimal line, other players' runs, "
                "practice play) open to everyone; null for practice",
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
    "tiebreak": tiebreak_field({"type": "integer"}, "The run's tie-break so far"),
    "stakes": {
        "type": "object",
        "description": "What each legal action costs or does, said before it is played",
        "required": ["score_now", "notes"],
        "properties": {
            "score_now": {
                "type": "integer",
                "description": "The score the run would have if it finished now",
            },
            "notes": {
                "type": "array",
                "description": "One list of notes per legal action, in the same order",
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["kind", "text"],
                        "properties": {
                            "kind": {
                                "type": "string",
                                "description": "What the note is about: loss_of_control, "
                                "gasfuss, engine_damage, gear_check, finish, speed, purple, "
                                "clamp and so on",
                            },
                            "text": {"type": "string", "description": "The note in words"},
                        },
                    },
                },
            },
        },
    },
}


@blueprint.after_request
def open_gets_to_every_origin(response: Response) -> Response:
    """CORS: anyone may read the API from a browser; writes stay same-origin."""
    if request.method in ("GET", "HEAD"):
        response.headers["Access-Control-Allow-Origin"] = "*"
    return response


# Engine helpers (no database)


def illegal(error: IllegalAction, index: int) -> ApiError:
    return ApiError(
        422, f"illegal action {index}: {error.reason}", index=index, reason=error.reason
    )


def replay(game: Game[S, Any, Any], seed: str, actions: list[Any]) -> S:
    """The state after actions (no more than the game's longest run: the body's schema
    says so); 422 naming the first illegal one."""
    try:
        return game.replay(seed, actions)
    except IllegalAction as error:
        raise illegal(error, error.index or 0) from None


def engine_answer(game: AnyGame, state: State) -> dict[str, Any]:
    """What the player sees and may do in state, and what each choice costs."""
    legal = game.legal_actions(state)
    return {
        "view": game.view(state),
        "legal_actions": legal,
        "stakes": game.stakes(state, legal),
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


def line_opens_at(puzzle: PuzzleRecord) -> datetime | None:
    """When the puzzle's lines of play become public: a daily's at the end of its day;
    None for a practice puzzle, whose lines are public from the start."""
    return None if puzzle.daily_date is None else daily.revealed_at(puzzle.daily_date)


def check_line_open(puzzle: PuzzleRecord, what_opens: str) -> None:
    """Refuse (403) to show a line of play on the puzzle (what_opens: "the optimal line
    opens", say) while the puzzle is a hidden daily, whoever asks: a player whose attempt
    is over could hand the line to a second identity of theirs, which would then play it
    as its official run. The answer says when it opens (`line_opens_at`, and Retry-After
    in seconds)."""
    if not is_hidden(puzzle):
        return
    assert puzzle.daily_date is not None, "only a daily is ever hidden"
    opens = daily.revealed_at(puzzle.daily_date)
    error = ApiError.retry_later(
        403,
        f"{what_opens} to everyone once the daily's day is over, at {opens:%H:%M} UTC "
        f"({opens.isoformat()})",
        daily.seconds_until_revealed(puzzle.daily_date),
    )
    error.fields["line_opens_at"] = opens.isoformat()
    raise error


def puzzle_json(puzzle: PuzzleRecord) -> dict[str, Any]:
    """The puzzle as the contract shows it: a hidden daily's seed is null."""
    opens = line_opens_at(puzzle)
    return {
        "game": puzzle.game,
        "seed": None if is_hidden(puzzle) else puzzle.seed,
        "number": puzzle.number,
        "date": puzzle.daily_date.isoformat() if puzzle.daily_date else None,
        "rules_version": puzzle.rules_version,
        "status": puzzle.status,
        "optimum": puzzle.optimum,
        "tiebreak": puzzle.tiebreak,
        "par": puzzle.par,
        "par_tiebreak": puzzle.par_tiebreak,
        "par_computed": puzzle.has_par,
        "commitment": daily.commitment(puzzle.game, puzzle.rules_version, puzzle.seed),
        "line_opens_at": None if opens is None else opens.isoformat(),
    }


def puzzle_by_id(puzzle_id: int) -> PuzzleRecord:
    """A stored puzzle (kept a moment: attempts and runs ask for theirs on every request)."""
    puzzle: PuzzleRecord | None = services().cache.get(
        ("puzzle-id", puzzle_id), lambda: services().store.puzzles.by_id(puzzle_id)
    )
    assert puzzle is not None, "attempts and runs keep their puzzle by a foreign key"
    return puzzle


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
