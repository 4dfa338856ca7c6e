"""What a league reads of its members at once: who they are, their official runs of some
puzzles, which dailies they started and ended, and their kept streaks.

A league of 500 members reads up to 8,000 official runs on every view of its page, so
these statements are compiled once for the database's dialect and run on the driver's
cursor (service.storage.store_statements.DriverStatement): through SQLAlchemy's result
rows they cost more than the queries. Each read goes member by member through an index,
never through the runs of anyone outside the league. A member's runs of some puzzles are
read as one range of their index (from the least puzzle id asked for to the greatest),
not one lookup per puzzle: a week's dailies are recorded within days of each other, so
the range holds little else, and what else it holds is left out here. The attempts'
index starts with the puzzle, so an attempt is looked up per puzzle, in a list of a fixed
number of parameters (the unused ones hold no puzzle's id) that one compiled statement
serves whatever the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import (
    BindParameter,
    Connection,
    Dialect,
    Integer,
    String,
    bindparam,
    select,
)

from service.storage.models import Attempt, LeagueMember, Player, Run, Streak
from service.storage.store_statements import DriverStatement

# No puzzle has this id: it fills the unused places of a list of puzzles.
NO_PUZZLE = -1


class OfficialResult(NamedTuple):
    score: int
    tiebreak: int
    run_id: str


@dataclass(frozen=True)
class MemberRecord:
    member: str
    player_id: str
    name: str | None
    joined_at: datetime


def aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class MemberReads:
    """The reads, compiled for one dialect."""

    # The most puzzles whose attempts one read looks up: today's and yesterday's dailies
    # of every game, or a rally's stages.
    ATTEMPTED_PUZZLES = 8

    def __init__(self, dialect: Dialect) -> None:
        league: BindParameter[str] = bindparam("league_id", type_=String())
        in_league = LeagueMember.league_id == league
        self._members = DriverStatement(
            select(
                LeagueMember.member,
                LeagueMember.player_id,
                Player.display_name,
                LeagueMember.joined_at,
            )
            .join(Player, Player.id == LeagueMember.player_id)
            .where(in_league)
            .order_by(LeagueMember.joined_at, LeagueMember.member),
            dialect,
        )
        puzzles_between = bindparam("first", type_=Integer()), bindparam("last", type_=Integer())
        # Off ix_runs_player_official alone.
        self._official = DriverStatement(
            select(Run.player_id, Run.puzzle_id, Run.score, Run.tiebreak, Run.id)
            .join(LeagueMember, LeagueMember.player_id == Run.player_id)
            .where(in_league, Run.puzzle_id.between(*puzzles_between), Run.official),
            dialect,
        )
        # Any run, official or not: off ix_runs_player alone.
        self._ran = DriverStatement(
            select(Run.player_id, Run.puzzle_id)
            .join(LeagueMember, LeagueMember.player_id == Run.player_id)
            .where(in_league, Run.puzzle_id.between(*puzzles_between)),
            dialect,
        )
        # Off the attempts' unique index (puzzle, player) alone.
        self._attempted = DriverStatement(
            select(Attempt.player_id, Attempt.puzzle_id)
            .join(LeagueMember, LeagueMember.player_id == Attempt.player_id)
            .where(
                in_league,
                Attempt.puzzle_id.in_(
                    [bindparam(f"puzzle_{n}") for n in range(self.ATTEMPTED_PUZZLES)]
                ),
            ),
            dialect,
        )
        self._streaks = DriverStatement(
            select(Streak.player_id, Streak.game, Streak.first_number, Streak.last_number)
            .join(LeagueMember, LeagueMember.player_id == Streak.player_id)
            .where(in_league),
            dialect,
        )

    @staticmethod
    def _range(league_id: str, puzzles: list[int]) -> dict[str, Any]:
        return {"league_id": league_id, "first": min(puzzles), "last": max(puzzles)}

    def members(self, connection: Connection, league_id: str) -> list[MemberRecord]:
        """The league's members, in the order they joined."""
        rows = self._members.all(connection, {"league_id": league_id})
        return [MemberRecord(row[0], row[1], row[2], aware(row[3])) for row in rows]

    def official(
        self, connection: Connection, league_id: str, puzzles: list[int]
    ) -> dict[tuple[str, int], OfficialResult]:
        """The members' official runs of the puzzles, by (player id, puzzle id)."""
        if not puzzles:
            return {}
        wanted = set(puzzles)
        rows = self._official.all(connection, self._range(league_id, puzzles))
        # Official runs are finished, so each has a score.
        return {
            (row[0], row[1]): OfficialResult(row[2], row[3], row[4])
            for row in rows
            if row[1] in wanted
        }

    def ran(
        self, connection: Connection, league_id: str, puzzles: list[int]
    ) -> set[tuple[str, int]]:
        """(player id, puzzle id) of each member with a run of each of the puzzles."""
        if not puzzles:
            return set()
        wanted = set(puzzles)
        rows = self._ran.all(connection, self._range(league_id, puzzles))
        return {(row[0], row[1]) for row in rows if row[1] in wanted}

    def attempted(
        self, connection: Connection, league_id: str, puzzles: list[int]
    ) -> set[tuple[str, int]]:
        """(player id, puzzle id) of each member's attempt of each of the puzzles (at most
        ATTEMPTED_PUZZLES of them)."""
        if not puzzles:
            return set()
        assert len(puzzles) <= self.ATTEMPTED_PUZZLES, "more puzzles than the statement takes"
        padded = [*puzzles, *[NO_PUZZLE] * (self.ATTEMPTED_PUZZLES - len(puzzles))]
        values = {"league_id": league_id, **{f"puzzle_{n}": p for n, p in enumerate(padded)}}
        return {(row[0], row[1]) for row in self._attempted.all(connection, values)}

    def streaks(
        self, connection: Connection, league_id: str
    ) -> dict[tuple[str, str], tuple[int, int]]:
        """The members' kept streaks by (player id, game): first and last day numbers."""
        rows = self._streaks.all(connection, {"league_id": league_id})
        return {(row[0], row[1]): (row[2], row[3]) for row in rows}
