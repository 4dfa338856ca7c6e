"""Practice puzzles by seed: asking for one (a write, which records and queues a new
seed), the puzzle, its leaderboard, its solution and its par line.

A seed is reachable here when it is a practice seed or a past daily whose day
is over; today's and coming dailies are not, whoever knows their seed (they are
addressed by date in service.web.api.dailies).
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from puzzles import GAMES
from service.domain import daily
from service.jobs.queue import SolveRefusal, request_par, request_solve, solve_refusal
from service.storage.puzzles import PuzzleRecord
from service.storage.runs import RankedRun
from service.web import players
from service.web.api.common import (
    GAME_NAME,
    NULLABLE_INT,
    PAR_TIEBREAK,
    PUZZLE,
    SECRET_SEED,
    TOKEN_ID,
    api,
    check_line_open,
    is_hidden,
    puzzle_json,
    services,
    tiebreak_field,
)
from service.web.errors import ApiError
from service.web.openapi import Answer, Link
from service.web.ratelimit import client_key

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
                    "required": [
                        "rank",
                        "run_id",
                        "name",
                        "tag",
                        "score",
                        "tiebreak",
                        "created_at",
                    ],
                    "properties": {
                        "rank": {"type": "integer", "minimum": 1},
                        "run_id": TOKEN_ID,
                        "name": {"type": ["string", "null"]},
                        "tag": {
                            "type": ["string", "null"],
                            "pattern": "^[a-z2-7]{5}$",
                            "description": "Where another player's name on this board looks "
                            "the same (the same Unicode TR39 skeleton): a short mark of this "
                            "player, the same on every board, shown after the name; else null",
                        },
                        "score": {"type": "integer"},
                        "tiebreak": tiebreak_field({"type": "integer"}, "The run's tie-break"),
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
SOLUTION = api.schema(
    "Solution",
    {
        "type": "object",
        "required": ["game", "seed", "status", "optimum", "tiebreak", "proved", "actions"],
        "properties": {
            "game": GAME_NAME,
            "seed": SECRET_SEED,
            "status": {"enum": ["pending", "solved", "failed"]},
            "optimum": NULLABLE_INT,
            "tiebreak": tiebreak_field(
                NULLABLE_INT, "The optimal run's tie-break; null when optimum is"
            ),
            "proved": {"type": ["boolean", "null"]},
            "actions": {
                "type": ["array", "null"],
                "description": "The optimal run; null unless solved",
            },
        },
    },
)
PAR_LINE = api.schema(
    "ParLine",
    {
        "type": "object",
        "required": ["game", "seed", "par", "par_tiebreak", "actions"],
        "properties": {
            "game": GAME_NAME,
            "seed": SECRET_SEED,
            "par": NULLABLE_INT,
            "par_tiebreak": PAR_TIEBREAK,
            "actions": {
                "type": ["array", "null"],
                "description": "The expert's own run, played without foresight; null until "
                "computed",
            },
        },
    },
)
# Asking for a practice puzzle takes nothing but the path; the body is an empty object, sent
# as JSON like every write so that no page of another site can send it.
ASK_BODY = {"type": "object", "additionalProperties": False}
# Where an asked-for puzzle leads: the puzzle (to poll), its leaderboard and its solution.
_SAME_PUZZLE = {"game": "$request.path.game", "seed": "$request.path.seed"}
PUZZLE_LINKS = {
    "GetPuzzle": Link("get_puzzle", _SAME_PUZZLE),
    "GetLeaderboard": Link("get_leaderboard", _SAME_PUZZLE),
    "GetSolution": Link("get_solution", _SAME_PUZZLE),
    "GetParLine": Link("get_par_line", _SAME_PUZZLE),
}
SOLUTION_RESPONSES = {
    200: Answer("The optimal run (actions null when solving failed)", SOLUTION),
    202: Answer("Not solved yet: poll again later", SOLUTION),
}


PAR_LINE_RESPONSES = {
    200: Answer("The par line", PAR_LINE),
    202: Answer("The par is not computed yet: poll again later", PAR_LINE),
}


def find_puzzle(game: str, seed: str) -> PuzzleRecord | None:
    """The stored puzzle of (game, seed) under the current rules (kept a moment)."""
    rules_version = GAMES[game].rules_version
    found: PuzzleRecord | None = services().cache.get(
        ("puzzle", game, seed, rules_version),
        lambda: services().store.puzzles.get(game, seed, rules_version),
    )
    return found


def _no_practice_puzzle(game: str) -> ApiError:
    # The seed is not repeated: it may be a daily's, which no answer shows before its day ends.
    return ApiError(
        404,
        f"no practice puzzle of {game} has this seed yet: ask for one with POST "
        f"/api/v1/puzzles/{game}/<seed> and the JSON body {{}}. Today's and coming dailies "
        f"are never reachable by seed: they are played by date (POST "
        f"/api/v1/daily/<date>/{game}/attempt)",
    )


def _is_hidden_daily_seed(game: str, seed: str) -> bool:
    """True when seed is the seed of today's or a coming daily of game."""
    day = daily.daily_date_of(services().config.daily_key, game, seed)
    return day is not None and not daily.is_revealed(day)


def practice_puzzle_allowed(game: str, seed: str) -> PuzzleRecord | None:
    """The stored puzzle of (game, seed) if any; 404 when the seed is that of today's or a
    coming daily, which no one may play or look up by seed."""
    if _is_hidden_daily_seed(game, seed):
        raise _no_practice_puzzle(game)
    puzzle = find_puzzle(game, seed)
    if puzzle is not None and is_hidden(puzzle):
        raise _no_practice_puzzle(game)
    return puzzle


def practice_puzzle(game: str, seed: str) -> PuzzleRecord:
    """The stored practice puzzle (or revealed daily) of (game, seed), or 404."""
    puzzle = practice_puzzle_allowed(game, seed)
    if puzzle is None:
        raise _no_practice_puzzle(game)
    return puzzle


def refused_solve(refusal: SolveRefusal) -> ApiError:
    """The answer to a solve the queues' caps refuse: 503 while they are full for everyone,
    429 while this client has its share waiting; both say when to ask again."""
    status = 503 if refusal.queues_full else 429
    return ApiError.retry_later(status, refusal.message, refusal.retry_after)


def _ask_par_once(game: str, seed: str) -> None:
    """Queue the puzzle's par unless this process asked for it a moment ago (kept only
    when Redis answered: an unreachable Redis is asked again by the next request)."""

    def ask() -> bool | None:  # True once queued or found waiting, None (not kept) if not
        return None if request_par(game, seed, services().config) is None else True

    services().pars_asked.get((game, seed, GAMES[game].rules_version), ask)


def practice_puzzle_or_new(game: str, seed: str) -> tuple[PuzzleRecord, bool]:
    """The stored practice puzzle, else a new one queued for solving (rate limited, and
    refused while the solver's queues are full); True when it is new. Only writes call
    this: a GET never queues work, or a page of another site could spend its visitors'
    budgets filling the solver's queues.

    The seed of a past daily is recorded as that daily, unless the daily of that
    date is stored already under other rules: then the seed is a practice
    puzzle under the current rules, and the daily keeps its own results. So is a
    seed of the old 64-bit form for a day never recorded, whose daily is the 128-bit
    one.
    """
    puzzle = practice_puzzle_allowed(game, seed)
    if puzzle is not None:
        if not puzzle.has_par:  # say one stored before pars were (a new one's comes with its solve)
            _ask_par_once(game, seed)
        return puzzle, False
    store, config = services().store, services().config
    day = daily.daily_date_of(config.daily_key, game, seed)
    recorded = day is not None and any(p.game == game for p in store.puzzles.dailies(day))
    # A day never recorded gets the current form of seed (daily.ensure_daily), not the old.
    if day is not None and (recorded or seed != daily.daily_seed(config.daily_key, game, day)):
        day = None
    refusal = solve_refusal(day, client_key(), config)
    if refusal is not None:  # refused before the rate limit: it counts nothing
        raise refused_solve(refusal)
    limiter = services().limiter
    limiter.check(limiter.new_seeds)
    number = None if day is None else daily.puzzle_number(day)
    puzzle = store.puzzles.ensure(
        game, seed, GAMES[game].rules_version, daily_date=day, number=number
    )
    request_solve(game, seed, config, daily_date=day, client=client_key())
    return puzzle, True


def _ranked(entries: list[RankedRun]) -> list[dict[str, Any]]:
    """Leaderboard rows with standard competition ranks (equal results share a rank), each
    name that looks like another player's on the board marked with its player's tag."""
    rows: list[dict[str, Any]] = []
    tags = players.look_alike_tags(
        services().config.secret_key, [(run.player_id, run.display_name) for run in entries]
    )
    for position, (run, tag) in enumerate(zip(entries, tags, strict=True), start=1):
        tied = rows and (rows[-1]["score"], rows[-1]["tiebreak"]) == (run.score, run.tiebreak)
        rows.append(
            {
                "rank": rows[-1]["rank"] if tied else position,
                "run_id": run.id,
                "name": run.display_name,
                "tag": tag,
                "score": run.score,
                "tiebreak": run.tiebreak,
                "created_at": run.created_at.isoformat(),
            }
        )
    return rows


def leaderboard_answer(puzzle: PuzzleRecord) -> Response:
    """The puzzle's standings, every run stored so far counted (the store keeps them a
    moment, only while the puzzle's counts are unchanged)."""
    standings = services().store.runs.standings(puzzle.id)
    return jsonify(
        {
            "puzzle": puzzle_json(puzzle),
            "entries": _ranked(standings.entries),
            "histogram": [{"score": s, "count": n} for s, n in standings.histogram.items()],
            "players": standings.players,
        }
    )


def solution_answer(puzzle: PuzzleRecord) -> tuple[Response, int]:
    check_line_open(puzzle, "the optimal line opens")
    body = {
        "game": puzzle.game,
        "seed": puzzle_json(puzzle)["seed"],
        "status": puzzle.status,
        "optimum": puzzle.optimum,
        "tiebreak": puzzle.tiebreak,
        "proved": puzzle.proved,
        "actions": puzzle.witness if puzzle.status == "solved" else None,
    }
    return jsonify(body), 202 if puzzle.status == "pending" else 200


def par_line_answer(puzzle: PuzzleRecord) -> tuple[Response, int]:
    """The par line, under the optimal line's rule: hidden from everyone while the daily's
    day runs."""
    check_line_open(puzzle, "the par line opens")
    body = {
        "game": puzzle.game,
        "seed": puzzle_json(puzzle)["seed"],
        "par": puzzle.par,
        "par_tiebreak": puzzle.par_tiebreak,
        "actions": puzzle.par_line,
    }
    return jsonify(body), 200 if puzzle.has_par else 202


@api.route(
    "/puzzles/<game>/<seed>",
    "GET",
    summary="One practice puzzle",
    responses={200: Answer("The puzzle, solved or pending", PUZZLE)},
    errors=[404],
)
def get_puzzle(game: str, seed: str) -> Response:
    """A practice puzzle or a revealed past daily with its optimum or pending status. A seed
    never asked for is a 404 saying how to ask for it (POST to this path): a GET never
    queues work. Today's and coming dailies are a 404 here."""
    return jsonify(puzzle_json(practice_puzzle(game, seed)))


@api.route(
    "/puzzles/<game>/<seed>",
    "POST",
    summary="Ask for a practice puzzle",
    body=ASK_BODY,
    responses={
        200: Answer("The puzzle, known already (solved or pending)", PUZZLE, links=PUZZLE_LINKS),
        202: Answer("The puzzle, recorded now and queued for solving", PUZZLE, links=PUZZLE_LINKS),
    },
    errors=[404, 429, 503],
)
def ask_for_puzzle(game: str, seed: str, body: dict[str, Any]) -> tuple[Response, int]:
    """Record a seed never seen before as a practice puzzle (a revealed past daily's seed as
    that daily) and queue its solving: 202 with the pending puzzle, to poll with GET until
    it is solved; a known one is a 200 as it stands. New seeds are rate limited per client
    address, and refused while too many solves wait (503 for everyone, 429 for one client).
    Today's and coming dailies are a 404 here."""
    puzzle, created = practice_puzzle_or_new(game, seed)
    return jsonify(puzzle_json(puzzle)), 202 if created else 200


@api.route(
    "/puzzles/<game>/<seed>/leaderboard",
    "GET",
    summary="Leaderboard and score histogram of a practice puzzle",
    responses={200: Answer("Official runs ranked, and the histogram of their scores", LEADERBOARD)},
    errors=[404],
)
def get_leaderboard(game: str, seed: str) -> Response:
    """The official runs of a revealed past daily (none for practice seeds), best first, and
    how many reached each score (every run stored so far counted)."""
    return leaderboard_answer(practice_puzzle(game, seed))


@api.route(
    "/puzzles/<game>/<seed>/solution",
    "GET",
    summary="The optimal run of a practice puzzle",
    responses=SOLUTION_RESPONSES,
    errors=[404],
)
def get_solution(game: str, seed: str) -> tuple[Response, int]:
    """The solver's optimal run of a practice puzzle or a revealed past daily."""
    return solution_answer(practice_puzzle(game, seed))


@api.route(
    "/puzzles/<game>/<seed>/par",
    "GET",
    summary="The par line of a practice puzzle",
    responses=PAR_LINE_RESPONSES,
    errors=[404],
)
def get_par_line(game: str, seed: str) -> tuple[Response, int]:
    """The expert's own run of a practice puzzle or a revealed past daily: the same dice and
    cards as every player, played without foresight. 202 until computed (asking for the
    puzzle with POST queues it when missing)."""
    return par_line_answer(practice_puzzle(game, seed))
