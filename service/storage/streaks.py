"""Each player's latest streak per game, kept as their official runs are stored.

A streak is a run of consecutive days each with an official run of the game (the
definition `GET /me` computes from a player's whole history, service.domain.history).
A league shows 500 members' current streaks at once: read from their runs, that is a
year of days per member, so the `streaks` table keeps each player's latest streak as
two day numbers (a daily's number counts days: service.domain.daily.puzzle_number),
and the transaction that stores an official run extends it (`record_day`).

An official run is stored only on its daily's own day, so the days arrive in order: a
day right after the streak's last extends it, a later one starts a new streak, the same
day again changes nothing. Migration 0008 filled the table from the runs stored before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import BindParameter, Dialect, String, bindparam, case, literal_column, select

from service.storage.models import Puzzle, Streak
from service.storage.store_statements import DriverStatement


def record_day_statement(dialect_insert: Callable[[Any], Any], dialect: Dialect) -> DriverStatement:
    """The statement that counts the day of an official run (`puzzle_id`, `player_id`) in
    its player's streak of its game; a puzzle that is not a daily changes nothing.
    dialect_insert is the database's INSERT with ON CONFLICT."""
    return DriverStatement(record_day(dialect_insert), dialect)


def record_day(dialect_insert: Callable[[Any], Any], *only_if: Any) -> Any:
    """record_day_statement's INSERT, counting the day only where the conditions only_if
    hold too (a condition on a CTE of the statement it joins)."""
    player: BindParameter[str] = bindparam("player_id", type_=String())
    day_of_the_run = select(player, Puzzle.game, Puzzle.number, Puzzle.number).where(
        Puzzle.id == bindparam("puzzle_id"),
        Puzzle.daily_date.is_not(None),
        Puzzle.number.is_not(None),
        *only_if,
    )
    insert = dialect_insert(Streak).from_select(
        ["player_id", "game", "first_number", "last_number"], day_of_the_run
    )
    day = insert.excluded.last_number
    # Both expressions read the row as it was before this update.
    starts_anew = day > Streak.last_number + literal_column("1")
    return insert.on_conflict_do_update(
        index_elements=["player_id", "game"],
        set_={
            "first_number": case((starts_anew, day), else_=Streak.first_number),
            "last_number": case((day > Streak.last_number, day), else_=Streak.last_number),
        },
    )


def current_length(first_number: int, last_number: int, today_number: int) -> int:
    """The current streak a kept streak makes on the day numbered today_number: alive while
    its last day is today or yesterday (today's daily may still be played), else over."""
    return last_number - first_number + 1 if last_number >= today_number - 1 else 0
