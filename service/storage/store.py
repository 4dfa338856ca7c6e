"""The store: puzzles, runs, players and the analyses of runs on SQLite or PostgreSQL.

The service reads and writes its tables (service.storage.models) only through the
store: this module, store_attempts (attempts) and store_statements (the statements
of the hottest paths, built once). The schema is created and changed only by the
migrations; the one other query is /healthz's `SELECT 1`.

Every function returns plain frozen records, never live ORM objects, so callers
hold no session. Each write is one short transaction committed before the
function returns (an acknowledged run is on disk). On SQLite, write
transactions start with BEGIN IMMEDIATE so that concurrent processes queue for
the write lock instead of failing when a read turns into a write.

A statement waits at most LOCK_WAIT_MS for a lock another connection holds (SQLite's
busy_timeout, PostgreSQL's lock_timeout), then the store raises DatabaseBusy, which the
API answers as a 503 with Retry-After: a stuck writer costs a request a few seconds,
not a web worker for as long as the lock lasts. Reads never wait for writers (SQLite
runs in WAL mode).
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    CursorResult,
    Engine,
    create_engine,
    event,
    func,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from service.clock import CLOCK
from service.config import DEFAULT_POOL_SIZE, DEFAULT_POOL_TIMEOUT_SECONDS, Config
from service.storage.cache import BriefCache
from service.storage.models import (
    Attempt,
    Player,
    PlayerCount,
    Puzzle,
    Run,
    RunAnalysis,
    ScoreCount,
    utc_now,
)
from service.storage.store_attempts import AttemptStorage
from service.storage.store_statements import prepared
from service.storage.streaks import record_day_statement

# Execution option that marks a connection as opened for writing (SQLite: BEGIN IMMEDIATE).
_WRITE_OPTION = "rally_write"
# How long (ms) a statement waits for a lock held by another connection before DatabaseBusy.
LOCK_WAIT_MS = 3_000
# What a client is told to wait before retrying after DatabaseBusy.
BUSY_RETRY_AFTER_SECONDS = 2
# PostgreSQL's SQLSTATE for lock_timeout expiring (lock_not_available).
_PG_LOCK_NOT_AVAILABLE = "55P03"
LEADERBOARD_SIZE = 100
# How long a store keeps a puzzle's standings: a popular daily's leaderboard is read on
# every result page. The store's own runs drop them at once; other processes' show up to
# this late.
STANDINGS_SECONDS = 1.0
STANDINGS_KEPT = 1024
HISTORY_PAGE = 50
# Each dialect's insert, which has ON CONFLICT DO NOTHING.
_INSERT_BY_DIALECT: dict[str, Callable[..., sqlite.Insert | postgresql.Insert]] = {
    "sqlite": sqlite.insert,
    "postgresql": postgresql.insert,
}
# What a player recorded by the running transaction has stored before (runs keep their
# player by a foreign key, so someone with no row has no run).
NO_EARLIER_RUNS = {"stored": False, "official": False}


class DatabaseBusy(Exception):  # noqa: N818 - a state, not a programming error
    """Another connection held a lock longer than LOCK_WAIT_MS, or every connection of the
    process's pool stayed taken for its timeout: nothing was done; retry."""


def _is_lock_wait(error: BaseException | None) -> bool:
    """True when error (the driver's) is a lock wait given up: SQLite busy or locked,
    PostgreSQL 55P03."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return getattr(error, "sqlstate", None) == _PG_LOCK_NOT_AVAILABLE


@contextmanager
def _lock_waits_bounded() -> Iterator[None]:
    """Turns a lock wait given up inside the block, or a wait for a free connection of the
    pool, into DatabaseBusy."""
    try:
        yield
    except PoolTimeout as error:
        raise DatabaseBusy(str(error)) from error
    except OperationalError as error:
        if _is_lock_wait(error.orig):
            raise DatabaseBusy(str(error.orig)) from error
        raise
    except sqlite3.OperationalError as error:
        # From the BEGIN IMMEDIATE that on_begin sends to the driver itself.
        if _is_lock_wait(error):
            raise DatabaseBusy(str(error)) from error
        raise


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


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
class AnalysisRecord:
    """A run's analysis: pending until computed, then done (analysis) or failed (error)."""

    run_id: str
    status: str
    rng_seed: int
    analysis: dict[str, Any] | None
    error: str | None
    seconds: float | None


def _puzzle_record(row: Puzzle) -> PuzzleRecord:
    return PuzzleRecord(**{field.name: getattr(row, field.name) for field in fields(PuzzleRecord)})


def _analysis_record(row: RunAnalysis) -> AnalysisRecord:
    return AnalysisRecord(
        **{field.name: getattr(row, field.name) for field in fields(AnalysisRecord)}
    )


def _run_record(run: Run) -> RunRecord:
    copied = {
        field.name: getattr(run, field.name)
        for field in fields(RunRecord)
        if field.name != "created_at"
    }
    return RunRecord(**copied, created_at=_aware(run.created_at))


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The driver's own transaction handling is switched off; `on_begin` starts them.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {LOCK_WAIT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        # In WAL mode NORMAL loses nothing when a process dies, only on power loss.
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        writing = connection.get_execution_options().get(_WRITE_OPTION, False)
        # Straight to the driver: through SQLAlchemy's execution path the BEGIN cost as much
        # CPU as the statement it opens a transaction for.
        connection.connection.dbapi_connection.execute("BEGIN IMMEDIATE" if writing else "BEGIN")


@dataclass(frozen=True)
class PoolSettings:
    """How many connections a process opens to the database, and how long a request waits
    for one when all are taken (seconds)."""

    size: int = DEFAULT_POOL_SIZE
    timeout: float = DEFAULT_POOL_TIMEOUT_SECONDS


def make_engine(
    database_url: str, writing: bool = False, pool: PoolSettings = PoolSettings()
) -> Engine:
    """An engine for database_url (SQLite or PostgreSQL) set up for this service.

    A writing engine takes SQLite's write lock when its transaction begins. The pool never
    overflows: its size is the process's whole share of the server's connections, and a
    request that finds them all taken waits pool.timeout, not SQLAlchemy's 30 s.
    """
    url = make_url(database_url)
    backend = url.get_backend_name()
    if backend not in _INSERT_BY_DIALECT:
        raise ValueError(f"unsupported database {backend!r}: use sqlite or postgresql")
    if backend == "sqlite" and url.database:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    connect_args = {"options": f"-c lock_timeout={LOCK_WAIT_MS}"} if backend == "postgresql" else {}
    engine = create_engine(
        url,
        connect_args=connect_args,
        pool_size=pool.size,
        max_overflow=0,
        pool_timeout=pool.timeout,
    )
    if backend == "sqlite":
        _configure_sqlite(engine)
    return engine.execution_options(**{_WRITE_OPTION: True}) if writing else engine


class Store(AttemptStorage):
    """Puzzles, runs, players and attempts in one database."""

    def __init__(self, database_url: str, pool: PoolSettings = PoolSettings()) -> None:
        self.engine = make_engine(database_url, pool=pool)
        self.pool = pool
        self._write_engine = self.engine.execution_options(**{_WRITE_OPTION: True})
        self._reading = sessionmaker(self.engine, expire_on_commit=False)
        self._writing = sessionmaker(self._write_engine, expire_on_commit=False)
        self._insert = _INSERT_BY_DIALECT[self.engine.dialect.name]
        self._sql = prepared(self._insert, self.engine.dialect)
        self._count_streak_day = record_day_statement(self._insert, self.engine.dialect)
        self._locks_rows = self.engine.dialect.name == "postgresql"
        # On PostgreSQL a read without the ORM runs outside a transaction: its BEGIN and the
        # ROLLBACK when the pool takes the connection back are two round trips a read does
        # not need. (SQLite's transactions are free: it is in the process.)
        self._rows_engine = (
            self.engine.execution_options(isolation_level="AUTOCOMMIT")
            if self._locks_rows
            else self.engine
        )
        self.kept_standings: BriefCache[Standings] = BriefCache(STANDINGS_SECONDS, STANDINGS_KEPT)

    @classmethod
    def of(cls, config: Config) -> Store:
        """The store of config's database, with config's pool."""
        pool = PoolSettings(config.database_pool_size, config.database_pool_timeout)
        return cls(config.database_url, pool)

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def _read(self) -> Iterator[Session]:
        with _lock_waits_bounded(), self._reading() as session, session.begin():
            yield session

    @contextmanager
    def _write(self) -> Iterator[Session]:
        with _lock_waits_bounded(), self._writing() as session, session.begin():
            yield session

    @contextmanager
    def _read_rows(self) -> Iterator[Connection]:
        """A read without the ORM (an attempt is read on every append)."""
        with _lock_waits_bounded(), self._rows_engine.connect() as connection:
            yield connection

    @contextmanager
    def _write_rows(self) -> Iterator[Connection]:
        """A write transaction without the ORM, for the paths every play takes (a run, an
        attempt's append): the ORM's unit of work cost more CPU than the rules engine."""
        with _lock_waits_bounded(), self._write_engine.begin() as connection:
            yield connection

    # Puzzles

    def get_puzzle(self, game: str, seed: str, rules_version: str) -> PuzzleRecord | None:
        with self._read() as session:
            row = session.scalar(
                select(Puzzle).filter_by(game=game, seed=seed, rules_version=rules_version)
            )
            return _puzzle_record(row) if row else None

    def get_puzzle_by_id(self, puzzle_id: int) -> PuzzleRecord | None:
        with self._read() as session:
            row = session.get(Puzzle, puzzle_id)
            return _puzzle_record(row) if row else None

    def ensure_puzzle(
        self,
        game: str,
        seed: str,
        rules_version: str,
        daily_date: date | None = None,
        number: int | None = None,
    ) -> PuzzleRecord:
        """The stored puzzle, first recorded as pending if it is new (safe under races)."""
        found = self.get_puzzle(game, seed, rules_version)
        if found:
            return found
        with self._write() as session:
            session.execute(
                self._insert(Puzzle)
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
        stored = self.get_puzzle(game, seed, rules_version)
        assert stored is not None, "a puzzle just inserted or found conflicting must exist"
        return stored

    def daily_puzzles(self, day: date) -> list[PuzzleRecord]:
        with self._read() as session:
            rows = session.scalars(
                select(Puzzle).filter_by(daily_date=day).order_by(Puzzle.game, Puzzle.id)
            )
            return [_puzzle_record(row) for row in rows]

    def recorded_dailies(self) -> set[tuple[str, date]]:
        """The (game, date) of every daily recorded, under any rules version."""
        with self._read() as session:
            rows = session.execute(
                select(Puzzle.game, Puzzle.daily_date).where(Puzzle.daily_date.is_not(None))
            )
            return {(game, day) for game, day in rows if day is not None}

    def pending_puzzles(self, limit: int = 1000) -> list[PuzzleRecord]:
        """Puzzles still waiting for their optimum, oldest first."""
        with self._read() as session:
            rows = session.scalars(
                select(Puzzle).filter_by(status="pending").order_by(Puzzle.id).limit(limit)
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
        with self._write() as session:
            # An UPDATE's result is a CursorResult (with rowcount); execute() is typed Result.
            result: CursorResult[Any] = session.execute(  # type: ignore[assignment]
                update(Puzzle)
                .where(Puzzle.id == puzzle_id, Puzzle.par_line.is_(None))
                .values(par=par, par_tiebreak=tiebreak, par_line=line, par_seconds=seconds)
            )
            return result.rowcount == 1

    def record_failure(self, puzzle_id: int, error: str) -> bool:
        """Mark an unsolved puzzle failed with the reason; False if it was already solved."""
        return self._update_unsolved(puzzle_id, status="failed", error=error)

    def _update_unsolved(self, puzzle_id: int, **values: Any) -> bool:
        """Set values on the puzzle in one statement unless it is solved; True if it was set."""
        with self._write() as session:
            # An UPDATE's result is a CursorResult (with rowcount); execute() is typed Result.
            result: CursorResult[Any] = session.execute(  # type: ignore[assignment]
                update(Puzzle)
                .where(Puzzle.id == puzzle_id, Puzzle.status != "solved")
                .values(**values)
            )
            return result.rowcount == 1

    # Players

    def _upsert_player(
        self, connection: Connection, player_id: str, display_name: str | None
    ) -> bool:
        """Record the player (a given name replaces theirs) and lock their row until the
        transaction ends: on PostgreSQL one player's concurrent writes queue up there, so
        that the first-run test of _store_run stays exact (SQLite's write transactions
        queue whole). True when this transaction recorded them: a new player, with no runs
        yet, whose row no other transaction can take before this one ends."""
        values = {"player_id": player_id, "name": display_name}
        if self._sql.add_player.run(connection, {**values, "now": utc_now()}) == 1:
            return True
        if display_name is not None:
            self._sql.rename_player.run(connection, values)  # which locks the row
        elif self._locks_rows:
            self._sql.lock_player.run(connection, {"player_id": player_id})
        return False

    def upsert_player(self, player_id: str, display_name: str | None = None) -> None:
        """Record the player; a given display name replaces the stored one."""
        with self._write_rows() as connection:
            self._upsert_player(connection, player_id, display_name)

    def display_name(self, player_id: str) -> str | None:
        with self._read() as session:
            return session.scalar(select(Player.display_name).filter_by(id=player_id))

    def player_count(self, puzzle_id: int | None = None) -> int:
        """Players who submitted a run of the puzzle, or every player when puzzle_id is None."""
        with self._read() as session:
            if puzzle_id is None:
                return session.scalar(select(func.count()).select_from(Player)) or 0
            return self._player_count(session, puzzle_id)

    @staticmethod
    def _player_count(session: Session, puzzle_id: int) -> int:
        return session.scalar(select(PlayerCount.players).filter_by(puzzle_id=puzzle_id)) or 0

    # Runs

    def add_run(
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
    ) -> RunRecord:
        """Store a replayed run (and its player), committed before returning.

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
                    return self._insert_run(fields, display_name, official_if_first=True)
                except IntegrityError:
                    pass  # a concurrent run became official first
            return self._insert_run(fields, display_name, official_if_first=False)
        finally:
            self._standings_changed(puzzle.id)

    def _insert_run(
        self, fields: dict[str, Any], display_name: str | None, official_if_first: bool
    ) -> RunRecord:
        with self._write_rows() as connection:
            new_player = self._upsert_player(connection, fields["player_id"], display_name)
            return self._store_run(connection, fields, official_if_first, new_player)

    def _store_run(
        self,
        connection: Connection,
        fields: dict[str, Any],
        official_if_first: bool,
        new_player: bool = False,
    ) -> RunRecord:
        """A new run under its player's current name, official if asked and the player's
        first official run of the puzzle, counted in its puzzle's standings in the same
        transaction: its player if this is their first run of the puzzle, its score and its
        day in its player's streak (service.storage.streaks) if it is official. The player
        must be stored and locked already (_upsert_player, which says whether they are new:
        a new player's runs need not be looked for)."""
        puzzle_and_player = {"puzzle_id": fields["puzzle_id"], "player_id": fields["player_id"]}
        earlier = (
            NO_EARLIER_RUNS
            if new_player
            else self._sql.earlier_runs_of.first(connection, puzzle_and_player)
        )
        assert earlier is not None, "a select of two EXISTS has one row"
        official = official_if_first and not earlier["official"]
        values = {
            "id": secrets.token_urlsafe(12),
            "official": official,
            "created_at": utc_now(),
            **fields,
        }
        inserted = self._sql.insert_run.first(connection, values)
        assert inserted is not None, "an insert returns its row"
        name = inserted["display_name"]
        if not earlier["stored"]:
            self._sql.count_player.run(connection, {"puzzle_id": fields["puzzle_id"]})
        if official:
            self._sql.count_score.run(
                connection, {"puzzle_id": fields["puzzle_id"], "score": fields["score"]}
            )
            self._count_streak_day.run(connection, puzzle_and_player)
        return RunRecord(**values, display_name=name)

    def _standings_changed(self, puzzle_id: int) -> None:
        """Drop the puzzle's kept standings: this store's own runs show at once."""
        self.kept_standings.drop(puzzle_id)

    def get_run(self, run_id: str) -> RunRecord | None:
        with self._read() as session:
            row = session.get(Run, run_id)
            return _run_record(row) if row else None

    def leaderboard(self, puzzle_id: int, limit: int = LEADERBOARD_SIZE) -> list[RankedRun]:
        """Official runs, best first: score, then tie-break, then the earlier submission."""
        with self._read() as session:
            return self._leaderboard(session, puzzle_id, limit)

    @staticmethod
    def _leaderboard(session: Session, puzzle_id: int, limit: int) -> list[RankedRun]:
        # The order of ix_runs_ranking, so the rows are read off the index in order; only
        # the columns shown, as loading each run's actions cost more than the query.
        rows = session.execute(
            select(
                Run.id,
                Run.player_id,
                Run.display_name,
                Run.score,
                Run.tiebreak,
                Run.created_at,
            )
            .where(Run.puzzle_id == puzzle_id, Run.official)
            .order_by(Run.score.desc(), Run.tiebreak.desc(), Run.created_at, Run.id)
            .limit(limit)
        )
        # Official runs all have a score (the column allows none for unfinished runs).
        return [
            RankedRun(*row[:5], created_at=_aware(row.created_at))  # type: ignore[arg-type]
            for row in rows
        ]

    def score_histogram(self, puzzle_id: int) -> dict[int, int]:
        """How many official runs reached each score, by score ascending."""
        with self._read() as session:
            return self._score_histogram(session, puzzle_id)

    @staticmethod
    def _score_histogram(session: Session, puzzle_id: int) -> dict[int, int]:
        rows = session.execute(
            select(ScoreCount.score, ScoreCount.runs)
            .filter_by(puzzle_id=puzzle_id)
            .order_by(ScoreCount.score)
        )
        return {score: runs for score, runs in rows}

    def standings(self, puzzle_id: int) -> Standings:
        """The puzzle's leaderboard, histogram and player count, kept a moment."""
        return self.kept_standings.get(puzzle_id, lambda: self._read_standings(puzzle_id))

    def _read_standings(self, puzzle_id: int) -> Standings:
        with self._read() as session:
            return Standings(
                entries=self._leaderboard(session, puzzle_id, LEADERBOARD_SIZE),
                histogram=self._score_histogram(session, puzzle_id),
                players=self._player_count(session, puzzle_id),
            )

    def player_history(
        self, player_id: str, before: str | None = None, limit: int = HISTORY_PAGE
    ) -> list[PlayedRun] | None:
        """The player's runs, newest first; with `before`, those stored before that run of
        theirs (None when it is not one). Read off ix_runs_player_time, so a page costs the
        same whatever the number of runs."""
        newest_first = (Run.created_at.desc(), Run.id.desc())
        with self._read() as session:
            runs = select(Run).where(Run.player_id == player_id).order_by(*newest_first)
            if before is not None:
                cursor = session.execute(
                    select(Run.created_at, Run.id).filter_by(player_id=player_id, id=before)
                ).first()
                if cursor is None:
                    return None
                runs = runs.where(tuple_(Run.created_at, Run.id) < tuple_(*cursor))
            # The page is picked from the runs alone, so that no planner estimate can make
            # it join all of a player's runs to their puzzles and sort them.
            page = runs.limit(limit).subquery()
            rows = session.execute(
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
                PlayedRun(*row[:-1], created_at=_aware(row.created_at))  # type: ignore[misc]
                for row in rows
            ]

    def player_summary(self, player_id: str, day: date) -> PlayerSummary:
        """The player's display name, official runs (newest day first, game by game within
        a day) and attempts of day's dailies, in one read. The runs are read off
        ix_runs_player_official alone, each joined to its puzzle by key, straight from the
        driver's cursor: at a thousand runs SQLAlchemy's handling of each row cost more than
        the query. The attempts are found from the day's puzzles by their unique key."""
        with self._read_rows() as connection:
            name = connection.scalar(select(Player.display_name).filter_by(id=player_id))
            rows = self._sql.official_runs_of.all(connection, {"player_id": player_id})
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

    # Analyses of runs

    def get_analysis(self, run_id: str) -> AnalysisRecord | None:
        with self._read() as session:
            row = session.get(RunAnalysis, run_id)
            return _analysis_record(row) if row else None

    def request_analysis(self, run_id: str, rng_seed: int) -> AnalysisRecord:
        """The run's analysis, first recorded as pending if none is (safe under races: the
        first request's record stays)."""
        with self._write() as session:
            now = utc_now()
            session.execute(
                self._insert(RunAnalysis)
                .values(
                    run_id=run_id,
                    status="pending",
                    rng_seed=rng_seed,
                    created_at=now,
                    updated_at=now,
                )
                .on_conflict_do_nothing(index_elements=["run_id"])
            )
        stored = self.get_analysis(run_id)
        assert stored is not None, "an analysis just inserted or found conflicting must exist"
        return stored

    def record_analysis(self, run_id: str, analysis: dict[str, Any], seconds: float) -> bool:
        """Store a pending analysis's result; False if it was no longer pending."""
        return self._settle_analysis(run_id, status="done", analysis=analysis, seconds=seconds)

    def record_analysis_failure(self, run_id: str, error: str) -> bool:
        """Mark a pending analysis failed with the reason; False if it was no longer pending."""
        return self._settle_analysis(run_id, status="failed", error=error)

    def _settle_analysis(self, run_id: str, **values: Any) -> bool:
        with self._write() as session:
            # An UPDATE's result is a CursorResult (with rowcount); execute() is typed Result.
            result: CursorResult[Any] = session.execute(  # type: ignore[assignment]
                update(RunAnalysis)
                .where(RunAnalysis.run_id == run_id, RunAnalysis.status == "pending")
                .values(**values)
            )
            return result.rowcount == 1
