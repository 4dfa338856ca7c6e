"""Runs in the database and the standings they make: each puzzle's leaderboard, its
histogram of scores and its count of players.

A run is official when it is its player's first finished run of a daily submitted on the
daily's own day. The transaction that stores a run also counts it in its puzzle's
standings (its player, if this is their first run of the puzzle; its score, if it is
official) and its day in its player's streak (service.storage.streaks), so that reading
the standings never counts runs.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Connection,
    DateTime,
    Integer,
    String,
    and_,
    bindparam,
    exists,
    func,
    insert,
    literal_column,
    not_,
    select,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql.expression import ColumnClause, ColumnElement
from sqlalchemy.types import TypeEngine

from service.clock import CLOCK
from service.storage.cache import BriefCache
from service.storage.database import Database, aware
from service.storage.models import OFFICIAL_RUNS_ONLY, Player, PlayerCount, Run, ScoreCount, utc_now
from service.storage.players import PlayerRepository, PlayerStatements
from service.storage.puzzles import PuzzleRecord
from service.storage.store_statements import DriverStatement, SentTogether
from service.storage.streaks import record_day, record_day_statement

LEADERBOARD_SIZE = 100
# How long a store keeps a puzzle's standings: a popular daily's leaderboard is read on
# every result page. Kept standings serve a read only while the puzzle's counts of players
# and official runs are still those they were read with, so any process's new run shows at
# once (a run keeps the name it was stored with, so nothing else changes them).
STANDINGS_SECONDS = 1.0
STANDINGS_KEPT = 1024
# What a player recorded by the running transaction has stored before (runs keep their
# player by a foreign key, so someone with no row has no run).
NO_EARLIER_RUNS = {"stored": False, "official": False}
_RECORDED_COLUMNS = (
    "id",
    "puzzle_id",
    "player_id",
    "display_name",
    "actions",
    "score",
    "tiebreak",
    "finished",
    "official",
    "created_at",
)


@dataclass(frozen=True)
class RunRecord:
    id: str
    puzzle_id: int
    player_id: str
    display_name: str | None
    actions: list[Any]
    score: int | None
    tiebreak: int
    finished: bool
    official: bool
    created_at: datetime


@dataclass(frozen=True)
class RankedRun:
    """An official run as the leaderboard shows it (no actions: a page lists a hundred)."""

    id: str
    player_id: str
    display_name: str | None
    score: int
    tiebreak: int
    created_at: datetime


@dataclass(frozen=True)
class Standings:
    """A puzzle's leaderboard (best first), histogram (score -> official runs) and player
    count, read in one transaction. Shared between readers: never modified."""

    entries: list[RankedRun]
    histogram: dict[int, int]
    players: int
    # The puzzle's counts of players and of official runs read before the rest: while they
    # are still these, nothing the standings show has changed (runs are only ever added,
    # each with the name its player had then).
    counted: tuple[int, int] = (0, 0)


@dataclass(frozen=True)
class RunStatements:
    """The statements every stored run takes, run on the driver's cursor
    (service.storage.store_statements)."""

    insert: DriverStatement  # the run's columns but display_name; returns display_name
    # puzzle_id, player_id: whether the player has a run (`stored`) and an official run
    # (`official`) of the puzzle
    earlier_runs_of: DriverStatement
    count_player: DriverStatement  # puzzle_id: one more player
    count_score: DriverStatement  # puzzle_id, score: one more official run of that score
    count_streak_day: DriverStatement  # puzzle_id, player_id (service.storage.streaks)
    # PostgreSQL only: the look for earlier runs, the insert and every count in one
    # statement (the run's columns but official and display_name, and official_if_first;
    # returns display_name and official), one round trip instead of up to five
    insert_counted: DriverStatement | None
    # PostgreSQL only: insert_counted for a player recorded by the same statement (name, as
    # well), which then needs no transaction; returns no row when the player was recorded
    # before (and stores nothing)
    insert_with_player: DriverStatement | None
    # PostgreSQL only: the player recorded, renamed if a name is given, and locked
    # (PlayerStatements.record_locked), then insert_counted, sent together: one round trip
    # and a transaction of their own instead of four round trips (BEGIN, the two, COMMIT)
    insert_locked: SentTogether | None
    # puzzle_id: its count of players and its count of official runs (every run stored
    # changes one or both, or nothing the standings show)
    counted: DriverStatement


def _run_statements(database: Database, players: PlayerStatements) -> RunStatements:
    players_runs = and_(
        Run.puzzle_id == bindparam("puzzle_id"), Run.player_id == bindparam("player_id")
    )
    # A constant, not a parameter the callers would have to pass.
    one: ColumnClause[Any] = literal_column("1")
    one_player = database.insert(PlayerCount).values(puzzle_id=bindparam("puzzle_id"), players=one)
    one_run = database.insert(ScoreCount).values(
        puzzle_id=bindparam("puzzle_id"), score=bindparam("score"), runs=one
    )
    new_run = insert(Run).values(
        id=bindparam("id"),
        puzzle_id=bindparam("puzzle_id"),
        player_id=bindparam("player_id"),
        actions=bindparam("actions", type_=JSON),
        score=bindparam("score"),
        tiebreak=bindparam("tiebreak"),
        finished=bindparam("finished", type_=Boolean),
        official=bindparam("official", type_=Boolean),
        created_at=bindparam("created_at", type_=DateTime(timezone=True)),
        # The player's name now: a later change of name leaves this run's.
        display_name=select(Player.display_name)
        .where(Player.id == bindparam("player_id"))
        .scalar_subquery(),
    )
    dialect = database.dialect
    insert_counted = (
        DriverStatement(_insert_counted(database, _earlier_runs(players_runs)), dialect)
        if database.locks_rows
        else None
    )
    return RunStatements(
        insert=DriverStatement(new_run.returning(Run.display_name), dialect),
        earlier_runs_of=DriverStatement(
            select(
                exists().where(players_runs).label("stored"),
                exists().where(players_runs, OFFICIAL_RUNS_ONLY).label("official"),
            ),
            dialect,
        ),
        count_player=DriverStatement(
            one_player.on_conflict_do_update(
                index_elements=["puzzle_id"], set_={"players": PlayerCount.players + one}
            ),
            dialect,
        ),
        count_score=DriverStatement(
            one_run.on_conflict_do_update(
                index_elements=["puzzle_id", "score"], set_={"runs": ScoreCount.runs + one}
            ),
            dialect,
        ),
        count_streak_day=record_day_statement(database.insert, dialect),
        insert_counted=insert_counted,
        insert_with_player=DriverStatement(
            _insert_counted(database, _new_player(database)), dialect
        )
        if database.locks_rows
        else None,
        insert_locked=SentTogether(players.record_locked, insert_counted)
        if players.record_locked is not None and insert_counted is not None
        else None,
        counted=DriverStatement(
            select(
                select(PlayerCount.players)
                .where(PlayerCount.puzzle_id == bindparam("puzzle_id"))
                .scalar_subquery()
                .label("players"),
                select(func.coalesce(func.sum(ScoreCount.runs), literal_column("0")))
                .where(ScoreCount.puzzle_id == bindparam("puzzle_id"))
                .scalar_subquery()
                .label("official"),
            ),
            dialect,
        ),
    )


def _earlier_runs(players_runs: ColumnElement[bool]) -> Any:
    """The player's earlier runs of the puzzle (`stored`, `official`) and their name now (a
    later change of name leaves the run's), as a part of RunStatements.insert_counted."""
    return select(
        exists().where(players_runs).label("stored"),
        exists().where(players_runs, OFFICIAL_RUNS_ONLY).label("official"),
        select(Player.display_name)
        .where(Player.id == bindparam("player_id"))
        .scalar_subquery()
        .label("display_name"),
    ).cte("earlier")


def _new_player(database: Database) -> Any:
    """The player recorded (`name`, at `created_at`), as a part of
    RunStatements.insert_with_player: a row only when this statement inserted them, so
    that they have no earlier runs and no other transaction can store one before this
    statement ends. A player found recorded leaves it empty, and with it every other part."""
    new = database.insert(Player).values(
        id=bindparam("player_id"),
        display_name=bindparam("name"),
        created_at=bindparam("created_at", type_=DateTime(timezone=True)),
    )
    nothing_earlier: ColumnClause[Any] = literal_column("false")
    return (
        new.on_conflict_do_nothing(index_elements=["id"])
        .returning(
            nothing_earlier.label("stored"),
            nothing_earlier.label("official"),
            Player.display_name,
        )
        .cte("earlier")
    )


def _insert_counted(database: Database, earlier: Any) -> Any:
    """RunStatements.insert_counted, its earlier runs looked for by the part earlier (a
    row of `stored`, `official` and `display_name`, or none to store nothing): WITH parts
    each see the tables as the statement found them, so the earlier runs are looked for
    once, before the run is inserted, and the counts follow from that look and the run's
    RETURNING."""
    typed: dict[str, TypeEngine[Any]] = {
        "id": String(),
        "puzzle_id": Integer(),
        "player_id": String(),
        "actions": JSON(),
        "score": Integer(),
        "tiebreak": Integer(),
        "finished": Boolean(),
    }
    official = and_(bindparam("official_if_first", type_=Boolean), not_(earlier.c.official))
    run = (
        insert(Run)
        .from_select(
            [*typed, "official", "created_at", "display_name"],
            select(
                *(bindparam(name, type_=type_) for name, type_ in typed.items()),
                official,
                bindparam("created_at", type_=DateTime(timezone=True)),
                earlier.c.display_name,
            ),
        )
        .returning(Run.display_name, Run.official)
        .cte("run")
    )
    one: ColumnClause[Any] = literal_column("1")
    puzzle_id = bindparam("puzzle_id", type_=Integer)
    first_of_player = (
        database.insert(PlayerCount)
        .from_select(["puzzle_id", "players"], select(puzzle_id, one).where(not_(earlier.c.stored)))
        .on_conflict_do_update(
            index_elements=["puzzle_id"], set_={"players": PlayerCount.players + one}
        )
    )
    score = bindparam("score", type_=Integer)
    official_score = (
        database.insert(ScoreCount)
        .from_select(
            ["puzzle_id", "score", "runs"], select(puzzle_id, score, one).where(run.c.official)
        )
        .on_conflict_do_update(
            index_elements=["puzzle_id", "score"], set_={"runs": ScoreCount.runs + one}
        )
    )
    return select(run.c.display_name, run.c.official).add_cte(
        first_of_player.cte("first_of_player"),
        official_score.cte("official_score"),
        record_day(database.insert, run.c.official).cte("streak_day"),
    )


def _new_run(fields: dict[str, Any]) -> dict[str, Any]:
    """A run's columns: fields, with the new run's id and time of storing."""
    return {"id": secrets.token_urlsafe(12), "created_at": utc_now(), **fields}


def _leaderboard(connection: Connection, puzzle_id: int, limit: int) -> list[RankedRun]:
    # The order of ix_runs_ranking, so the rows are read off the index in order; only the
    # columns shown, as loading each run's actions cost more than the query.
    rows = connection.execute(
        select(Run.id, Run.player_id, Run.display_name, Run.score, Run.tiebreak, Run.created_at)
        .where(Run.puzzle_id == puzzle_id, Run.official)
        .order_by(Run.score.desc(), Run.tiebreak.desc(), Run.created_at, Run.id)
        .limit(limit)
    )
    # Official runs all have a score (the column allows none for unfinished runs).
    return [
        RankedRun(*row[:5], created_at=aware(row.created_at))  # type: ignore[arg-type]
        for row in rows
    ]


def _score_histogram(connection: Connection, puzzle_id: int) -> dict[int, int]:
    rows = connection.execute(
        select(ScoreCount.score, ScoreCount.runs)
        .where(ScoreCount.puzzle_id == puzzle_id)
        .order_by(ScoreCount.score)
    )
    return {score: runs for score, runs in rows}


def _player_count(connection: Connection, puzzle_id: int) -> int:
    count = select(PlayerCount.players).where(PlayerCount.puzzle_id == puzzle_id)
    return connection.scalar(count) or 0


class RunRepository:
    """The runs of one database and the standings they make, kept a moment."""

    def __init__(self, database: Database, players: PlayerRepository) -> None:
        self._database = database
        self._players = players
        self.sql = _run_statements(database, players.sql)
        self.kept_standings: BriefCache[Standings] = BriefCache(STANDINGS_SECONDS, STANDINGS_KEPT)

    def add(
        self,
        puzzle: PuzzleRecord,
        player_id: str,
        *,
        actions: list[Any],
        score: int | None,
        tiebreak: int,
        finished: bool,
        display_name: str | None = None,
        today: date | None = None,
        known_player: bool = False,
    ) -> RunRecord:
        """Store a replayed run (and its player), committed before returning. known_player:
        the player is most likely recorded (PlayerRepository.record_and_lock); if not, on
        PostgreSQL the player and the run are first stored in one statement, and with the
        player locked first (RunStatements.insert_locked) only when the player was recorded
        after all. On PostgreSQL either way is one round trip.

        The run is official when it is the player's first finished run of a daily
        submitted on the daily's own day (today, UTC, unless given). Two
        concurrent candidates are settled by the database's unique index on
        official runs: the loser is stored as practice.
        """
        today = today or CLOCK.today()
        candidate = finished and puzzle.daily_date == today
        fields = {
            "puzzle_id": puzzle.id,
            "player_id": player_id,
            "actions": actions,
            "score": score,
            "tiebreak": tiebreak,
            "finished": finished,
        }
        try:
            if candidate:
                try:
                    return self._insert(fields, display_name, True, known_player)
                except IntegrityError:
                    pass  # a concurrent run became official first
            return self._insert(fields, display_name, False, known_player)
        finally:
            self.standings_changed(puzzle.id)

    def _insert(
        self,
        fields: dict[str, Any],
        display_name: str | None,
        official_if_first: bool,
        known_player: bool,
    ) -> RunRecord:
        asked = {"official_if_first": official_if_first, "name": display_name}
        if not known_player and self.sql.insert_with_player is not None:
            stored = self._insert_alone(self.sql.insert_with_player, fields, asked)
            if stored is not None:
                return stored
        if self.sql.insert_locked is not None:
            stored = self._insert_alone(self.sql.insert_locked, fields, asked)
            assert stored is not None, "the look for earlier runs is one row: the run is stored"
            return stored
        with self._database.write() as connection:
            new_player = self._players.record_and_lock(
                connection, fields["player_id"], display_name, known_player
            )
            return self.store(connection, fields, official_if_first, new_player)

    def store(
        self,
        connection: Connection,
        fields: dict[str, Any],
        official_if_first: bool,
        new_player: bool = False,
    ) -> RunRecord:
        """A new run under its player's current name, official if asked and the player's
        first official run of the puzzle, counted in its puzzle's standings in the same
        transaction: its player if this is their first run of the puzzle, its score and its
        day in its player's streak if it is official. The player must be recorded and
        locked already (PlayerRepository.record_and_lock, which says whether they are new:
        a new player's runs need not be looked for)."""
        if self.sql.insert_counted is not None:
            stored = self._store_counted(
                self.sql.insert_counted,
                connection,
                fields,
                {"official_if_first": official_if_first},
            )
            assert stored is not None, "the look for earlier runs is one row: the run is stored"
            return stored
        puzzle_and_player = {"puzzle_id": fields["puzzle_id"], "player_id": fields["player_id"]}
        earlier = (
            NO_EARLIER_RUNS
            if new_player
            else self.sql.earlier_runs_of.first(connection, puzzle_and_player)
        )
        assert earlier is not None, "a select of two EXISTS has one row"
        official = official_if_first and not earlier["official"]
        values = {**_new_run(fields), "official": official}
        inserted = self.sql.insert.first(connection, values)
        assert inserted is not None, "an insert returns its row"
        if not earlier["stored"]:
            self.sql.count_player.run(connection, {"puzzle_id": fields["puzzle_id"]})
        if official:
            self.sql.count_score.run(
                connection, {"puzzle_id": fields["puzzle_id"], "score": fields["score"]}
            )
            self.sql.count_streak_day.run(connection, puzzle_and_player)
        return RunRecord(**values, display_name=inserted["display_name"])

    def _insert_alone(
        self,
        statement: DriverStatement | SentTogether,
        fields: dict[str, Any],
        asked: dict[str, Any],
    ) -> RunRecord | None:
        """The run and its player stored in one round trip that commits itself (PostgreSQL),
        by RunStatements.insert_with_player (None, and nothing stored, when the player was
        recorded already: a request without a player's cookie comes with a new player's id,
        so a first visit's run costs one round trip, not four) or insert_locked (a
        returning player's, one round trip as well)."""
        with self._database.write_alone() as connection:
            return self._store_counted(statement, connection, fields, asked)

    @staticmethod
    def _store_counted(
        statement: DriverStatement | SentTogether,
        connection: Connection,
        fields: dict[str, Any],
        asked: dict[str, Any],
    ) -> RunRecord | None:
        """store's work in one statement (PostgreSQL), with the statement's other parameters
        asked; None when it stored nothing. Run after the player's row is locked, or with
        their row inserted by the statement itself, its look for earlier runs sees every run
        of theirs there is."""
        values = _new_run(fields)
        inserted = statement.first(connection, {**values, **asked})
        return None if inserted is None else RunRecord(**values, **inserted)

    def standings_changed(self, puzzle_id: int) -> None:
        """Drop the puzzle's kept standings: this store's own runs show at once."""
        self.kept_standings.drop(puzzle_id)

    def get(self, run_id: str) -> RunRecord | None:
        columns = [Run.__table__.c[name] for name in _RECORDED_COLUMNS]
        with self._database.read() as connection:
            row = connection.execute(select(*columns).where(Run.id == run_id)).first()
        if row is None:
            return None
        return RunRecord(**{**row._mapping, "created_at": aware(row.created_at)})

    def leaderboard(self, puzzle_id: int, limit: int = LEADERBOARD_SIZE) -> list[RankedRun]:
        """Official runs, best first: score, then tie-break, then the earlier submission."""
        with self._database.read() as connection:
            return _leaderboard(connection, puzzle_id, limit)

    def score_histogram(self, puzzle_id: int) -> dict[int, int]:
        """How many official runs reached each score, by score ascending."""
        with self._database.read() as connection:
            return _score_histogram(connection, puzzle_id)

    def player_count(self, puzzle_id: int) -> int:
        """Players who submitted a run of the puzzle."""
        with self._database.read() as connection:
            return _player_count(connection, puzzle_id)

    def standings(self, puzzle_id: int) -> Standings:
        """The puzzle's leaderboard, histogram and player count: kept a moment, and only
        while the puzzle's counts say no run was stored since (by any process), which costs
        one read of two counts instead of the three reads of the standings."""
        if self.kept_standings.seconds <= 0:
            return self._read_standings(puzzle_id)
        with self._database.read() as connection:
            counted = self._counted(connection, puzzle_id)
        return self.kept_standings.get(
            puzzle_id,
            lambda: self._read_standings(puzzle_id),
            still=lambda kept: kept.counted == counted,
        )

    def _counted(self, connection: Connection, puzzle_id: int) -> tuple[int, int]:
        row = self.sql.counted.first(connection, {"puzzle_id": puzzle_id})
        assert row is not None, "a select of two subqueries has one row"
        return row["players"] or 0, int(row["official"] or 0)

    def _read_standings(self, puzzle_id: int) -> Standings:
        with self._database.read_together() as connection:
            # First: a run stored while the rest is read then shows as a change next time.
            counted = self._counted(connection, puzzle_id)
            return Standings(
                entries=_leaderboard(connection, puzzle_id, LEADERBOARD_SIZE),
                histogram=_score_histogram(connection, puzzle_id),
                players=_player_count(connection, puzzle_id),
                counted=counted,
            )
