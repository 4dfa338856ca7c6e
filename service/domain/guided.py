"""The guided first games: one fixed practice seed per game, through which the "How to
play" pages lead a new player (service.web.how_to_play).

Their seeds are known ahead, so the worker's planning records and solves them with
today's dailies, par and all (service.jobs.jobs.plan_dailies): a new player's first game
shows its optimum and par at once, even on a fresh install.
"""

from __future__ import annotations

from puzzles import GAMES
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store

GUIDED_SEED = "first-game"


def is_guided(puzzle: PuzzleRecord) -> bool:
    """Whether puzzle is a guided first game's (a practice puzzle of the guided seed)."""
    return puzzle.daily_date is None and puzzle.seed == GUIDED_SEED


def ensure_guided_puzzles(store: Store) -> list[PuzzleRecord]:
    """The guided puzzle of every game (by game name) under its current rules, recorded as
    pending if new."""
    return [
        store.puzzles.ensure(name, GUIDED_SEED, GAMES[name].rules_version) for name in sorted(GAMES)
    ]
