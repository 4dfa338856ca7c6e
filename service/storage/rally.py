"""The weekend rally's reads (service.domain.rally): each player's play of the three stages.

Per league, every member's play is read (at most 500 members, three stages each) and the
domain ranks them. The public standings rank every player who finished the first stage,
so the database orders them (the domain's order, written in SQL) and only the top rows
leave it: a stage's official runs are read off the official runs' unique index, and
each later stage's result and whether a run of it exists are looked up by key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    case,
    exists,
    false,
    func,
    literal,
    select,
    true,
)
from sqlalchemy.orm import aliased

from service.storage.database import Database
from service.storage.league_reads import MemberReads, OfficialResult
from service.storage.models import Player, Run, ScoreCount


@dataclass(frozen=True)
class StagePlay:
    """A player's play of one stage: its official result, if any; whether they started its
    attempt, and whether it ended in a run (which, on a daily's own day, only an attempt
    that is over makes)."""

    result: OfficialResult | None = None
    attempted: bool = False
    over: bool = False


@dataclass(frozen=True)
class PlayerStages:
    player_id: str
    name: str | None
    plays: list[StagePlay]
    member: str | None = None  # in a league, the member's handle


UPCOMING = StagePlay()


class RallyQuery:
    """The rally's reads of one database."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._members = MemberReads(database.dialect)

    def league(self, league_id: str, stages: Sequence[int | None]) -> list[PlayerStages]:
        """Every member's play of the stages' puzzles (None: a stage still to come)."""
        puzzles = [puzzle for puzzle in stages if puzzle is not None]
        reads = self._members
        with self._database.read() as connection:
            members = reads.members(connection, league_id)
            results = reads.official(connection, league_id, puzzles)
            started = reads.attempted(connection, league_id, puzzles)
            ended = reads.ran(connection, league_id, puzzles)
        return [
            PlayerStages(
                member.player_id,
                member.name,
                [
                    UPCOMING
                    if puzzle is None
                    else StagePlay(
                        results.get((member.player_id, puzzle)),
                        (member.player_id, puzzle) in started,
                        (member.player_id, puzzle) in ended,
                    )
                    for puzzle in stages
                ],
                member.member,
            )
            for member in members
        ]

    def leaders(
        self, stages: Sequence[int | None], days_over: Sequence[bool], limit: int
    ) -> tuple[list[PlayerStages], int]:
        """The best `limit` players still in the rally among those who finished its first
        stage, in the domain's order, and how many finished it."""
        first = stages[0]
        if first is None:
            return [], 0
        query = _LeadersQuery(first, stages[1:], days_over[1:])
        with self._database.read() as connection:
            rows = connection.execute(query.select().limit(limit)).all()
            entrants = _finished_first(connection, first)
        return [query.player_stages(row) for row in rows], entrants


def _finished_first(connection: Connection, puzzle_id: int) -> int:
    """How many official runs the puzzle has (kept with its histogram)."""
    counted = connection.scalar(
        select(func.sum(ScoreCount.runs)).where(ScoreCount.puzzle_id == puzzle_id)
    )
    return int(counted or 0)


class _LeadersQuery:
    """The public standings in SQL: the first stage's official runs, each joined to the
    same player's official runs of the later stages and to whether a run of each exists."""

    def __init__(self, first: int, later: Sequence[int | None], later_over: Sequence[bool]) -> None:
        self.first = aliased(Run, name="stage_1")
        self.later = [aliased(Run, name=f"stage_{n}") for n in range(2, 2 + len(later))]
        self.later_puzzles = list(later)
        self.later_over = list(later_over)
        self.first_puzzle = first

    def _joined(self, stage: Any, puzzle: int | None) -> ColumnElement[bool]:
        if puzzle is None:
            return false()
        return and_(
            stage.player_id == self.first.player_id, stage.puzzle_id == puzzle, stage.official
        )

    def _ended(self, puzzle: int | None) -> ColumnElement[bool]:
        """Whether the player has a run of the stage: their attempt of it is over."""
        if puzzle is None:
            return false()
        return exists().where(Run.player_id == self.first.player_id, Run.puzzle_id == puzzle)

    def select(self) -> Any:
        """The players still in. Columns: player, name, then score, tie-break and run of each
        stage, then whether each later stage's run exists; ordered as
        service.domain.rally.ranked orders."""
        stages = [self.first, *self.later]
        # The stages finished in a row from the first; the score and tie-break they make.
        missing = [stage.id.is_(None) for stage in self.later]
        finished = case(
            *((gap, literal(position + 1)) for position, gap in enumerate(missing)),
            else_=literal(len(stages)),
        )
        total: ColumnElement[Any] = self.first.score.expression
        for position, stage in enumerate(self.later):
            reached = and_(*(~gap for gap in missing[: position + 1]))
            total = total + case((reached, stage.score), else_=literal(0))
        tiebreak = case(
            *((gap, stages[position].tiebreak) for position, gap in enumerate(missing)),
            else_=stages[-1].tiebreak,
        )
        # Out: the first stage not finished has its day over, or a run (its attempt ended).
        ended = [self._ended(puzzle) for puzzle in self.later_puzzles]
        out = case(
            *(
                (gap, true() if over else ended[position])
                for position, (gap, over) in enumerate(zip(missing, self.later_over, strict=True))
            ),
            else_=false(),
        )
        query = select(
            self.first.player_id,
            Player.display_name,
            *(column for stage in stages for column in (stage.score, stage.tiebreak, stage.id)),
            *(ended),
        ).join(Player, Player.id == self.first.player_id)
        for stage, puzzle in zip(self.later, self.later_puzzles, strict=True):
            query = query.outerjoin(stage, self._joined(stage, puzzle))
        return query.where(
            self.first.puzzle_id == self.first_puzzle,
            self.first.official,
            case((out, literal(1)), else_=literal(0)) == literal(0),
        ).order_by(
            finished.desc(),
            total.desc(),
            tiebreak.desc(),
            Player.display_name.is_(None),
            func.lower(Player.display_name),
            self.first.player_id,
        )

    def player_stages(self, row: Any) -> PlayerStages:
        stages = len(self.later) + 1
        results = [
            None if row[4 + 3 * n] is None else OfficialResult(*row[2 + 3 * n : 5 + 3 * n])
            for n in range(stages)
        ]
        ended = list(row[2 + 3 * stages :])
        plays = [StagePlay(results[0], True, True)]
        for n, puzzle in enumerate(self.later_puzzles, start=1):
            plays.append(
                UPCOMING
                if puzzle is None
                else StagePlay(
                    results[n], results[n] is not None or ended[n - 1], bool(ended[n - 1])
                )
            )
        return PlayerStages(row[0], row[1], plays)
