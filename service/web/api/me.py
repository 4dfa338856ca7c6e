"""The caller's own history (`GET /me`): their name, their official runs and, game by game,
their streaks, days played and distance to the optimum and to par (service.domain.history).

Read from the database off one index of the player's official runs, never by replaying a
run. It shows no seed and no line of play: only what each run's own result page shows its
player.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from puzzles import GAMES
from service.domain import daily
from service.domain.history import Distances, GameStats, stats_by_game
from service.storage.players import DayAttempt, OfficialRun, PlayerSummary
from service.web import players
from service.web.api.common import (
    DATE,
    GAME_NAME,
    NULLABLE_INT,
    TOKEN_ID,
    api,
    services,
    tiebreak_field,
)
from service.web.openapi import Answer, Lazy

NULLABLE_NUMBER = {"type": ["number", "null"]}


def _distances_schema(target: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["mean", "histogram"],
        "description": f"How far below {target} the official runs scored (runs whose "
        f"{target} is not known yet are left out)",
        "properties": {
            "mean": {**NULLABLE_NUMBER, "description": "Null when no run counts"},
            "histogram": {
                "type": "array",
                "description": "Runs by distance, the smallest distance first",
                "items": {
                    "type": "object",
                    "required": ["distance", "runs"],
                    "properties": {
                        "distance": {"type": "integer"},
                        "runs": {"type": "integer", "minimum": 1},
                    },
                },
            },
        },
    }


GAME_STATS = {
    "type": "object",
    "required": ["days_played", "current_streak", "best_streak", "to_optimum", "to_par"],
    "properties": {
        "days_played": {"type": "integer", "minimum": 0},
        "current_streak": {
            "type": "integer",
            "minimum": 0,
            "description": "Consecutive days up to today (or yesterday, while today's daily "
            "is not played) each with an official run of the game; a missed day ends it",
        },
        "best_streak": {"type": "integer", "minimum": 0},
        "to_optimum": _distances_schema("the optimum"),
        "to_par": _distances_schema("par"),
    },
}
ME = api.schema(
    "Me",
    {
        "type": "object",
        "required": ["name", "today", "attempts", "runs", "games", "leagues"],
        "properties": {
            "name": {"type": ["string", "null"], "description": "The caller's display name"},
            "today": {**DATE, "description": "Today's date (UTC): the day streaks reach"},
            "attempts": {
                "type": "array",
                "description": "The caller's attempts of today's dailies: what the home page "
                "shows instead of Play",
                "items": {
                    "type": "object",
                    "required": ["game", "number", "over", "run", "score", "official"],
                    "properties": {
                        "game": GAME_NAME,
                        "number": {"type": "integer"},
                        "over": {"type": "boolean"},
                        "run": {
                            "anyOf": [TOKEN_ID, {"type": "null"}],
                            "description": "The run it became once over, else null",
                        },
                        "score": {**NULLABLE_INT, "description": "Null unless it finished"},
                        "official": {"type": "boolean"},
                    },
                },
            },
            "runs": {
                "type": "array",
                "description": "The caller's official runs, the newest day first",
                "items": {
                    "type": "object",
                    "required": [
                        "id",
                        "date",
                        "game",
                        "number",
                        "score",
                        "tiebreak",
                        "optimum",
                        "par",
                    ],
                    "properties": {
                        "id": {**TOKEN_ID, "description": "The run's id (its page /runs/{id})"},
                        "date": DATE,
                        "game": GAME_NAME,
                        "number": {"type": "integer"},
                        "score": {"type": "integer"},
                        "tiebreak": tiebreak_field({"type": "integer"}, "The run's tie-break"),
                        "optimum": {**NULLABLE_INT, "description": "Null until solved"},
                        "par": {
                            **NULLABLE_INT,
                            "description": "Null until computed, or when the expert's own "
                            "run of the daily does not finish",
                        },
                    },
                },
            },
            "leagues": {
                "type": "array",
                "description": "The caller's leagues, by name",
                "items": {
                    "type": "object",
                    "required": ["id", "name", "members", "maker"],
                    "properties": {
                        "id": {
                            **TOKEN_ID,
                            "description": "The league's id (its page /leagues/{id})",
                        },
                        "name": {"type": "string"},
                        "members": {"type": "integer", "minimum": 1},
                        "maker": {"type": "boolean", "description": "Whether the caller made it"},
                    },
                },
            },
            "games": {
                "type": "object",
                "description": "Each game's stats, every game listed",
                "required": Lazy(lambda: sorted(GAMES)),
                "properties": Lazy(lambda: {name: GAME_STATS for name in sorted(GAMES)}),
                "additionalProperties": False,
            },
        },
    },
)


def _run_json(run: OfficialRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "date": run.daily_date.isoformat(),
        "game": run.game,
        "number": run.number,
        "score": run.score,
        "tiebreak": run.tiebreak,
        "optimum": run.optimum,
        "par": run.par,
    }


def _attempt_json(attempt: DayAttempt) -> dict[str, Any]:
    return {
        "game": attempt.game,
        "number": attempt.number,
        "over": attempt.over,
        "run": attempt.run_id,
        "score": attempt.score,
        "official": attempt.official,
    }


def _distances_json(distances: Distances) -> dict[str, Any]:
    mean = None if distances.mean is None else round(distances.mean, 3)
    return {
        "mean": mean,
        "histogram": [
            {"distance": distance, "runs": runs} for distance, runs in distances.histogram.items()
        ],
    }


def _stats_json(stats: GameStats) -> dict[str, Any]:
    return {
        "days_played": stats.days_played,
        "current_streak": stats.streaks.current,
        "best_streak": stats.streaks.best,
        "to_optimum": _distances_json(stats.to_optimum),
        "to_par": _distances_json(stats.to_par),
    }


@api.route(
    "/me",
    "GET",
    summary="The caller's history and stats",
    responses={200: Answer("The caller's official runs and each game's stats", ME)},
)
def get_me() -> Response:
    """The player in the request's cookie: their name, their attempts of today's dailies,
    their official runs (the newest day first), each game's current and best streak,
    days played and distance to the optimum and to par, and their leagues. A caller
    without a cookie has no runs and no leagues."""
    player = players.current_player_id()
    today = daily.today()
    summary = (
        PlayerSummary(None, [], [])
        if player is None
        else services().store.players.summary(player, today)
    )
    runs = summary.official_runs
    stats = stats_by_game(runs, sorted(GAMES), today)
    leagues = [] if player is None else services().store.leagues.player_leagues(player)
    response = jsonify(
        {
            "name": summary.name,
            "today": today.isoformat(),
            "attempts": [_attempt_json(attempt) for attempt in summary.attempts],
            "runs": [_run_json(run) for run in runs],
            "games": {game: _stats_json(game_stats) for game, game_stats in stats.items()},
            "leagues": [
                {
                    "id": league.id,
                    "name": league.name,
                    "members": league.members,
                    "maker": league.maker,
                }
                for league in leagues
            ],
        }
    )
    # One player's own history: no shared cache may keep it.
    response.cache_control.private = True
    response.cache_control.no_store = True
    return response
