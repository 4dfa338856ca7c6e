"""What a player's history says about them, game by game: streaks, days played and how far
their scores fell short of the optimum and of par. Computed from their official runs as the store
reads them (one row per daily played), never by replaying a run.

A day counts when the player's official run of that game's daily exists: an official run
is an attempt finished on the daily's own day (service.web.api.attempts), so a run finished
later, or one that ended unfinished, never counts. A streak is a run of consecutive days
that count; the current streak is the one that reaches today, or yesterday while today's
daily may still be played; a missed day ends it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from service.storage.players import OfficialRun

ONE_DAY = timedelta(days=1)


@dataclass(frozen=True)
class Streaks:
    current: int
    best: int


@dataclass(frozen=True)
class Distances:
    """How far below a target (the optimum, par) the scores were: the mean, and how many
    runs fell short by each amount. Runs whose target is unknown are left out."""

    mean: float | None
    histogram: dict[int, int]


@dataclass(frozen=True)
class GameStats:
    days_played: int
    streaks: Streaks
    to_optimum: Distances
    to_par: Distances


def streaks(days: Iterable[date], today: date) -> Streaks:
    """The current and best streak over the days that count."""
    best = length = 0
    previous: date | None = None
    for day in sorted(set(days)):
        length = length + 1 if previous == day - ONE_DAY else 1
        best = max(best, length)
        previous = day
    alive = previous is not None and previous >= today - ONE_DAY
    return Streaks(current=length if alive else 0, best=best)


def distances(shortfalls: Iterable[int | None]) -> Distances:
    """The mean and histogram of the shortfalls that are known."""
    counts = Counter(short for short in shortfalls if short is not None)
    runs = sum(counts.values())
    mean = sum(short * n for short, n in counts.items()) / runs if runs else None
    return Distances(mean, dict(sorted(counts.items())))


def game_stats(runs: list[OfficialRun], today: date) -> GameStats:
    """The stats of one game's official runs."""
    return GameStats(
        days_played=len({run.daily_date for run in runs}),
        streaks=streaks((run.daily_date for run in runs), today),
        to_optimum=distances(
            None if run.optimum is None else run.optimum - run.score for run in runs
        ),
        to_par=distances(None if run.par is None else run.par - run.score for run in runs),
    )


def stats_by_game(
    runs: list[OfficialRun], games: Iterable[str], today: date
) -> dict[str, GameStats]:
    """game_stats of each of games (a game not played has empty stats)."""
    return {game: game_stats([run for run in runs if run.game == game], today) for game in games}
