"""Players in the database and what they have played: their names, their history page by
page and the summary `GET /me` shows.

Recording a player also locks their row until the transaction ends (on PostgreSQL; SQLite's
write transactions queue whole): the runs and attempts of one player that write together
queue there, so a run's test of being the player's first stays exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import Connection, DateTime, bindparam, func, select, tuple_, update

from service.storage.database import Database, aware
from service.storage.models import Attempt, Player, Puzzle, Run, utc_now
from service.storage.store_statements import DriverStatement

HISTORY_PAGE = 50


@dataclass(frozen=True)
class PlayedRun:
    """One run of a player's history, with what names its puzzle (no actions, no witness:
    a page lists fifty)."""

    id: str
    game: str
    seed: str
    daily_date: date | None
    number: int | None
    score: int | None
    tiebreak: int
    finished: bool
    official: bool
    created_at: datetime


@dataclass(frozen=True)
class OfficialRun:
    """One official run of a player with what their history shows of its daily: its date,
    game and number, its optimum (None until solved) and its par (None until computed, or
    when the expert's run does not finish)."""

    id: str
    daily_date: date
    game: str
    number: int
    score: int
    tiebreak: int
    optimum: int | None
    par: int | None


@dataclass(frozen=True)
class DayAttempt:
    """A player's attempt of a day's daily: started, over, and the run it became."""

    game: str
    number: int
    over: bool
    run_id: str | None
    score: int | None
    official: bool


@dataclass(frozen=True)
class PlayerSummary:
    """A player's name, official runs (newest day first) and attempts of one day."""

    name: str | None
    official_runs: list[OfficialRun]
    attempts: list[DayAttempt]


@dataclass(frozen=True)
class PlayerStatements:
    """The statements every run and append take, and the read of a player's official runs,
    whose rows are many: run on the driver's cursor (service.storage.store_statements)."""

    add: DriverStatement  # player_id, name, created_at; an existing player is left as is
    rename: DriverStatement  # player_id, name
    # player_id, name, created_at; PostgreSQL only: records a new player, renames one when a name
    # is given, and either way locks the row till the transaction ends, in one statement;
    # returns `inserted` for a row it inserted or renamed, nothing for one it only locked
    record_locked: DriverStatement | None
    # player_id: their official runs with their dailies, newest day first
    official_runs_of: DriverStatement


def _player_statements(database: Database) -> PlayerStatements:
    # Every value is a parameter: the driver's cursor applies no column defaults.
    new_player = database.insert(Player).values(
        id=bindparam("player_id"),
        display_name=bindparam("name"),
        created_at=bindparam("created_at", type_=DateTime(timezone=True)),
    )
    official_runs = (
        select(
            Run.id,
            Puzzle.daily_date,
            Puzzle.game,
            Puzzle.number,
            Run.score,
            Run.tiebreak,
            Puzzle.optimum,
            Puzzle.par,
        )
        .join(Puzzle, Puzzle.id == Run.puzzle_id)
        .where(Run.player_id == bindparam("player_id"), Run.official)
        .order_by(Puzzle.daily_date.desc(), Puzzle.game)
    )
    one_player = Player.id == bindparam("player_id")
    # ON CONFLICT DO UPDATE locks the row it finds even where its WHERE leaves it as is.
    recorded_locked = new_player.on_conflict_do_update(
        index_elements=["id"],
        set_={"display_name": new_player.excluded.display_name},
        where=new_player.excluded.display_name.is_not(None),
    ).returning(
        # A rename leaves the row's time of creation: only an insert wrote this one.
        (Player.created_at == bindparam("created_at", type_=DateTime(timezone=True))).label(
            "inserted"
        )
    )
    return PlayerStatements(
        add=DriverStatement(
            new_player.on_conflict_do_nothing(index_elements=["id"]), database.dialect
        ),
        rename=DriverStatement(
            update(Player).where(one_player).values(display_name=bindparam("name")),
            database.dialect,
        ),
        official_runs_of=DriverStatement(official_runs, database.dialect),
        record_locked=DriverStatement(recorded_locked, database.dialect)
        if database.locks_rows
        else None,
    )


class PlayerRepository:
    """The players of one database."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self.sql = _player_statements(database)

    def record_and_lock(
        self,
        connection: Connection,
        player_id: str,
        display_name: str | None,
        known: bool = False,
    ) -> bool:
        """Record the player in connection's transaction (a given name replaces theirs) and
        lock their row until it ends. True when this transaction recorded them: a new
        player, with no runs yet, whose row no other transaction can take before this one
        ends.

        On PostgreSQL that is one statement whatever the player. On SQLite, whose write
        transactions queue whole, known (the player is most likely recorded already: their
        cookie came with the request, or they started the attempt that ends) renames them
        first and records them only when they are missing."""
        values = {"player_id": player_id, "name": display_name, "created_at": utc_now()}
        if self.sql.record_locked is not None:
            recorded = self.sql.record_locked.first(connection, values)
            return recorded is not None and bool(recorded["inserted"])
        if known and display_name is not None and self.sql.rename.run(connection, values) == 1:
            return False
        if self.sql.add.run(connection, values) == 1:
            return True
        if display_name is not None:
            self.sql.rename.run(connection, values)
        return False

    def upsert(self, player_id: str, display_name: str | None = None) -> None:
        """Record the player; a given display name replaces the stored one."""
        with self._database.write() as connection:
            self.record_and_lock(connection, player_id, display_name)

    def display_name(self, player_id: str) -> str | None:
        with self._database.read() as connection:
            return connection.scalar(select(Player.display_name).where(Player.id == player_id))

    def count(self) -> int:
        """Every player recorded."""
        with self._database.read() as connection:
            return connection.scalar(select(func.count()).select_from(Player)) or 0

    def history(
        self, player_id: str, before: str | None = None, limit: int = HISTORY_PAGE
    ) -> list[PlayedRun] | None:
        """The player's runs, newest first; with `before`, those stored before that run of
        theirs (None when it is not one). Read off ix_runs_player_time, so a page costs the
        same whatever the number of runs."""
        newest_first = (Run.created_at.desc(), Run.id.desc())
        with self._database.read() as connection:
            runs = select(Run).where(Run.player_id == player_id).order_by(*newest_first)
            if before is not None:
                cursor = connection.execute(
                    select(Run.created_at, Run.id).where(
                        Run.player_id == player_id, Run.id == before
                    )
                ).first()
                if cursor is None:
                    return None
                runs = runs.where(tuple_(Run.created_at, Run.id) < tuple_(*cursor))
            # The page is picked from the runs alone, so that no planner estimate can make
            # it join all of a player's runs to their puzzles and sort them.
            page = runs.limit(limit).subquery()
            rows = connection.execute(
                select(
                    page.c.id,
                    Puzzle.game,
                    Puzzle.seed,
                    Puzzle.daily_date,
                    Puzzle.number,
                    page.c.score,
                    page.c.tiebreak,
                    page.c.finished,
                    page.c.official,
                    page.c.created_at,
                )
                .join(Puzzle, Puzzle.id == page.c.puzzle_id)
                .order_by(page.c.created_at.desc(), page.c.id.desc())
            )
            return [
                # The subquery's columns are untyped: mypy cannot count them.
                PlayedRun(*row[:-1], created_at=aware(row.created_at))  # type: ignore[misc]
                for row in rows
            ]

    def summary(self, player_id: str, day: date) -> PlayerSummary:
        """The player's display name, official runs (newest day first, game by game within
        a day) and attempts of day's dailies, in one read. The runs are read off
        ix_runs_player_official alone, each joined to its puzzle by key, straight from the
        driver's cursor: at a thousand runs SQLAlchemy's handling of each row cost more than
        the query. The attempts are found from the day's puzzles by their unique key."""
        with self._database.read() as connection:
            name = connection.scalar(select(Player.display_name).where(Player.id == player_id))
            rows = self.sql.official_runs_of.all(connection, {"player_id": player_id})
            attempts = connection.execute(
                select(
                    Puzzle.game,
                    Puzzle.number,
                    Attempt.over,
                    Attempt.run_id,
                    Run.score,
                    func.coalesce(Run.official, False),
                )
                .join(Attempt, (Attempt.puzzle_id == Puzzle.id) & (Attempt.player_id == player_id))
                .outerjoin(Run, Run.id == Attempt.run_id)
                .where(Puzzle.daily_date == day)
                .order_by(Puzzle.game)
            ).all()
        return PlayerSummary(
            name=name,
            official_runs=[OfficialRun(*row) for row in rows],
            # The number column allows null (practice puzzles have none), never for a daily.
            attempts=[DayAttempt(*row) for row in attempts],  # type: ignore[arg-type]
        )
