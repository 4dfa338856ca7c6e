"""Puzzles in the database: each seed of a game under one rules version, a daily or not,
with its optimum once solved and its par once computed.

Every write is one statement, guarded so that a re-run or a retried job is harmless: a
new puzzle is inserted unless it exists, an answer is stored only while none is.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, CursorResult, Row, select, update

from service.storage.database import Database
from service.storage.models import Puzzle

_PUZZLES = Puzzle.__table__


@dataclass(frozen=True)
class PuzzleRecord:
    id: int
    game: str
    seed: str
    rules_version: str
    daily_date: date | None
    number: int | None
    status: str
    optimum: int | None
    tiebreak: int | None
    witness: list[Any] | None
    proved: bool | None
    solve_seconds: float | None
    error: str | None
    par: int | None
    par_tiebreak: int | None
    par_line: list[Any] | None
    par_seconds: float | None

    @property
    def is_daily(self) -> bool:
        return self.daily_date is not None

    @property
    def has_par(self) -> bool:
        """True once the par is computed (par itself is null when the expert's run does not
        finish)."""
        return self.par_line is not None


_RECORDED_COLUMNS = [_PUZZLES.c[field.name] for field in fields(PuzzleRecord)]


def _puzzle_record(row: Row[Any]) -> PuzzleRecord:
    return PuzzleRecord(**row._mapping)


class PuzzleRepository:
    """The puzzles of one database."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def _select(self, *where: ColumnElement[bool]) -> list[PuzzleRecord]:
        with self._database.read() as connection:
            rows = connection.execute(select(*_RECORDED_COLUMNS).where(*where).order_by(Puzzle.id))
            return [_puzzle_record(row) for row in rows]

    def _one(self, *where: ColumnElement[bool]) -> PuzzleRecord | None:
        found = self._select(*where)
        return found[0] if found else None

    def get(self, game: str, seed: str, rules_version: str) -> PuzzleRecord | None:
        return self._one(
            Puzzle.game == game, Puzzle.seed == seed, Puzzle.rules_version == rules_version
        )

    def by_id(self, puzzle_id: int) -> PuzzleRecord | None:
        return self._one(Puzzle.id == puzzle_id)

    def ensure(
        self,
        game: str,
        seed: str,
        rules_version: str,
        daily_date: date | None = None,
        number: int | None = None,
    ) -> PuzzleRecord:
        """The stored puzzle, first recorded as pending if it is new (safe under races)."""
        found = self.get(game, seed, rules_version)
        if found:
            return found
        with self._database.write() as connection:
            connection.execute(
                self._database.insert(Puzzle)
                .values(
                    game=game,
                    seed=seed,
                    rules_version=rules_version,
                    daily_date=daily_date,
                    number=number,
                    status="pending",
                )
                .on_conflict_do_nothing(index_elements=["game", "seed", "rules_version"])
            )
        stored = self.get(game, seed, rules_version)
        assert stored is not None, "a puzzle just inserted or found conflicting must exist"
        return stored

    def dailies(self, day: date) -> list[PuzzleRecord]:
        """The day's dailies, by game."""
        found = self._select(Puzzle.daily_date == day)
        return sorted(found, key=lambda puzzle: puzzle.game)

    def recorded_dailies(self) -> set[tuple[str, date]]:
        """The (game, date) of every daily recorded, under any rules version."""
        with self._database.read() as connection:
            rows = connection.execute(
                select(Puzzle.game, Puzzle.daily_date).where(Puzzle.daily_date.is_not(None))
            )
            return {(game, day) for game, day in rows if day is not None}

    def pending(self, limit: int = 1000) -> list[PuzzleRecord]:
        """Puzzles still waiting for their optimum, oldest first."""
        with self._database.read() as connection:
            rows = connection.execute(
                select(*_RECORDED_COLUMNS)
                .where(Puzzle.status == "pending")
                .order_by(Puzzle.id)
                .limit(limit)
            )
            return [_puzzle_record(row) for row in rows]

    def record_solution(
        self,
        puzzle_id: int,
        *,
        optimum: int | None,
        tiebreak: int | None,
        witness: list[Any],
        proved: bool,
        solve_seconds: float,
    ) -> bool:
        """Store the solver's answer in one statement; False if the puzzle was already solved.

        The single guarded UPDATE is what makes a re-run or a retried job harmless:
        the first answer stays and a puzzle is never half written.
        """
        return self._update_unsolved(
            puzzle_id,
            status="solved",
            optimum=optimum,
            tiebreak=tiebreak,
            witness=witness,
            proved=proved,
            solve_seconds=solve_seconds,
            error=None,
        )

    def record_par(
        self,
        puzzle_id: int,
        *,
        par: int | None,
        tiebreak: int | None,
        line: list[Any],
        seconds: float,
    ) -> bool:
        """Store the puzzle's par in one statement; False if it had one already (a re-run or
        a second job leaves the first par as it is)."""
        return self._update(
            Puzzle.id == puzzle_id,
            Puzzle.par_line.is_(None),
            par=par,
            par_tiebreak=tiebreak,
            par_line=line,
            par_seconds=seconds,
        )

    def record_failure(self, puzzle_id: int, error: str) -> bool:
        """Mark an unsolved puzzle failed with the reason; False if it was already solved."""
        return self._update_unsolved(puzzle_id, status="failed", error=error)

    def _update_unsolved(self, puzzle_id: int, **values: Any) -> bool:
        """Set values on the puzzle in one statement unless it is solved; True if it was set."""
        return self._update(Puzzle.id == puzzle_id, Puzzle.status != "solved", **values)

    def _update(self, *where: ColumnElement[bool], **values: Any) -> bool:
        """Set values on the puzzle where the conditions hold; True if it was set."""
        with self._database.write() as connection:
            result: CursorResult[Any] = connection.execute(
                update(Puzzle).where(*where).values(**values)
            )
            return result.rowcount == 1
