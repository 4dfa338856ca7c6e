"""Dailies, addressed by date and game: the day's puzzles with their commitments, the
coming days' commitments, and a daily's leaderboard, solution and practice play.

Playing a daily of its day goes through an attempt (service.web.api.attempts); its
practice play and its solution here open to everyone once the day is over, and
to no one before.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from flask import Response, current_app, jsonify, request

from puzzles import GAMES
from service.domain import daily
from service.storage.puzzles import PuzzleRecord
from service.web.api.common import (
    DATE,
    ENGINE_STATE_PROPERTIES,
    GAME_NAME,
    PUZZLE,
    api,
    check_line_open,
    engine_answer,
    per_game,
    published_day,
    puzzle_json,
    replay,
    run_actions,
    services,
)
from service.web.api.puzzles import (
    LEADERBOARD,
    PAR_LINE_RESPONSES,
    SOLUTION_RESPONSES,
    leaderboard_answer,
    par_line_answer,
    solution_answer,
)
from service.web.openapi import Answer

# Cache lifetimes of daily GETs: short while a puzzle may still change (pending).
SETTLED_MAX_AGE = 300
UNSETTLED_MAX_AGE = 30

DAILY = api.schema(
    "Daily",
    {
        "type": "object",
        "required": ["date", "puzzles"],
        "properties": {"date": DATE, "puzzles": {"type": "array", "items": PUZZLE}},
    },
)
UPCOMING = api.schema(
    "Upcoming",
    {
        "type": "object",
        "required": ["puzzles"],
        "properties": {
            "puzzles": {
                "type": "array",
                "description": "The coming days' dailies recorded so far, by date then game",
                "items": {
                    "type": "object",
                    "required": ["game", "number", "date", "rules_version", "commitment"],
                    "properties": {
                        "game": GAME_NAME,
                        "number": {"type": "integer"},
                        "date": DATE,
                        "rules_version": {"type": "string"},
                        "commitment": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    },
                },
            }
        },
    },
)
PLAY_STATE = api.schema(
    "PlayState",
    {
        "type": "object",
        "required": [*ENGINE_STATE_PROPERTIES, "actions"],
        "properties": {
            **ENGINE_STATE_PROPERTIES,
            "actions": {"type": "array", "description": "The actions played, as sent"},
        },
    },
)
ACTIONS_BODY = per_game(
    lambda game: {
        "type": "object",
        "required": ["actions"],
        "properties": {"actions": run_actions(game)},
        "additionalProperties": False,
    }
)
DAILY_HEADERS = {
    "ETag": "A validator of the body: send it back in If-None-Match",
    "Cache-Control": "How long the answer may be cached",
}


def _pick_stored(day: date) -> dict[str, PuzzleRecord]:
    """The stored daily of each game for day: the one under the game's current rules,
    else the latest one stored (a past daily keeps the rules it was played under)."""
    picked: dict[str, PuzzleRecord] = {}
    for puzzle in services().store.puzzles.dailies(day):
        if puzzle.game not in GAMES:
            continue
        if puzzle.game not in picked or puzzle.rules_version == GAMES[puzzle.game].rules_version:
            picked[puzzle.game] = puzzle
    return picked


def current_dailies(day: date) -> list[PuzzleRecord]:
    """The day's puzzle of every game, by game, recording missing ones (and today's or a
    coming one that is stored only under older rules) under the current rules.

    Recording is all a read does: one puzzle per game and day, derived from the key, so
    no request can make more. It queues no work; the planning job's sweep queues every
    pending puzzle (service.jobs.jobs.plan_dailies), a past day's in the archive queue.
    """
    picked = _pick_stored(day)
    for name, game in GAMES.items():
        stored = picked.get(name)
        outdated = stored is not None and stored.rules_version != game.rules_version
        if stored is None or (outdated and not daily.is_revealed(day)):
            picked[name] = daily.ensure_daily(
                services().store, services().config.daily_key, name, day
            )
    return [picked[name] for name in sorted(picked)]


def daily_of(day: date, game: str) -> PuzzleRecord:
    return next(puzzle for puzzle in current_dailies(day) if puzzle.game == game)


def _seconds_to_midnight() -> int:
    return max(1, int(daily.time_until_revealed(daily.today()).total_seconds()))


def _max_age(day: date, puzzles: list[PuzzleRecord]) -> int:
    settled = all(puzzle.status != "pending" for puzzle in puzzles)
    max_age = SETTLED_MAX_AGE if settled else UNSETTLED_MAX_AGE
    if day != daily.today():
        return max_age
    # Today's answer must not outlive the day: at 00:00 UTC its seeds are revealed.
    return min(max_age, _seconds_to_midnight())


@dataclass(frozen=True)
class RenderedDaily:
    puzzles: list[PuzzleRecord]
    body: str
    etag: str


def _render_daily(day: date) -> RenderedDaily:
    puzzles = current_dailies(day)
    payload = {"date": day.isoformat(), "puzzles": [puzzle_json(puzzle) for puzzle in puzzles]}
    body = jsonify(payload).get_data(as_text=True)
    return RenderedDaily(puzzles, body, hashlib.sha1(body.encode()).hexdigest())


def _daily_answer(day: date) -> Response:
    """The day's puzzles with validators; the hottest path of the API, so kept rendered.
    The key holds today's date too: the same day's answer changes when its seeds show."""
    rendered = services().cache.get(("daily", day, daily.today()), lambda: _render_daily(day))
    assert rendered is not None, "a rendered day is never None, so always kept"
    response = current_app.response_class(rendered.body, mimetype="application/json")
    response.cache_control.public = True
    response.cache_control.max_age = _max_age(day, rendered.puzzles)
    response.set_etag(rendered.etag)
    response.make_conditional(request)  # answers 304 in place when the ETag still holds
    return response


DAILY_RESPONSES = {
    200: Answer("One puzzle per game", DAILY, DAILY_HEADERS),
    304: Answer("Not modified: the If-None-Match ETag still holds"),
}


@api.route("/daily", "GET", summary="Today's daily puzzles", responses=DAILY_RESPONSES)
def get_today() -> Response:
    """Today's puzzle of every game (days roll over at 00:00 UTC), with ETag and Cache-Control.
    Each shows its commitment; its seed is null until the day is over."""
    return _daily_answer(daily.today())


@api.route(
    "/daily/upcoming",
    "GET",
    summary="The commitments of the coming dailies",
    responses={200: Answer("The coming days' dailies recorded so far", UPCOMING)},
)
def get_upcoming() -> Response:
    """The dailies recorded for the coming days (RALLY_DAYS_AHEAD, a week), each with its
    commitment sha256("<game>:<rules_version>:<seed>"): after its day, the revealed seed
    can be checked against it."""
    today = daily.today()
    entries: list[dict[str, Any]] = []
    for offset in range(1, services().config.days_ahead + 1):
        day = today + timedelta(days=offset)
        for puzzle in services().store.puzzles.dailies(day):
            if puzzle.game in GAMES and puzzle.rules_version == GAMES[puzzle.game].rules_version:
                entries.append(
                    {
                        "game": puzzle.game,
                        "number": puzzle.number,
                        "date": day.isoformat(),
                        "rules_version": puzzle.rules_version,
                        "commitment": daily.commitment(
                            puzzle.game, puzzle.rules_version, puzzle.seed
                        ),
                    }
                )
    return jsonify({"puzzles": entries})


@api.route(
    "/daily/<day>",
    "GET",
    summary="The daily puzzles of a date",
    responses=DAILY_RESPONSES,
    errors=[404],
)
def get_daily(day: str) -> Response:
    """The puzzles of a past or current date, seeds shown once the day is over; a future
    date, or one before the first daily, is a 404."""
    return _daily_answer(published_day(day))


@api.route(
    "/daily/<day>/<game>/leaderboard",
    "GET",
    summary="A daily's leaderboard and score histogram",
    responses={200: Answer("Official runs ranked, and the histogram of their scores", LEADERBOARD)},
    errors=[404],
)
def get_daily_leaderboard(day: str, game: str) -> Response:
    """The official runs of the daily, best first, the histogram of their scores and the
    number of players, every run stored so far counted; open during the day too (it shows
    no line)."""
    return leaderboard_answer(daily_of(published_day(day), game))


@api.route(
    "/daily/<day>/<game>/solution",
    "GET",
    summary="A daily's optimal run",
    responses=SOLUTION_RESPONSES,
    errors=[403, 404],
)
def get_daily_solution(day: str, game: str) -> tuple[Response, int]:
    """The solver's optimal run of the daily, once its day is over; before, a 403 whoever
    asks (a player whose attempt is over included), saying when it opens."""
    return solution_answer(daily_of(published_day(day), game))


@api.route(
    "/daily/<day>/<game>/par",
    "GET",
    summary="A daily's par line",
    responses=PAR_LINE_RESPONSES,
    errors=[403, 404],
)
def get_daily_par_line(day: str, game: str) -> tuple[Response, int]:
    """The expert's own run of the daily (its par), once its day is over; before, a 403
    whoever asks, as for the optimal line."""
    return par_line_answer(daily_of(published_day(day), game))


@api.route(
    "/daily/<day>/<game>/play",
    "POST",
    summary="Practice play of a daily",
    body=ACTIONS_BODY,
    responses={200: Answer("What the player sees and may do next", PLAY_STATE)},
    errors=[403, 404, 422],
)
def play_daily(day: str, game: str, body: dict[str, Any]) -> Response:
    """The view and legal actions after some actions from the daily's start, stored
    nowhere, once its day is over; before, a 403 whoever asks, saying when it opens. A
    daily of older rules is practised under the current rules."""
    puzzle = daily_of(published_day(day), game)
    check_line_open(puzzle, "practice of this daily opens")
    engine = GAMES[game]
    actions = body["actions"]
    return jsonify(
        {**engine_answer(engine, replay(engine, puzzle.seed, actions)), "actions": actions}
    )
