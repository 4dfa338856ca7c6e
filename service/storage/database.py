"""The one database object every repository of the store shares.

It owns the engine and its pool of connections, hands out the short connections the
repositories read and write on (one at a time: a request never holds two), and turns a
lock or a free connection waited for too long into DatabaseBusy.

Each write is one short transaction committed before the block ends (an acknowledged run
is on disk). On SQLite, write transactions start with BEGIN IMMEDIATE so that concurrent
processes queue for the write lock instead of failing when a read turns into a write.

A statement waits at most LOCK_WAIT_MS for a lock another connection holds (SQLite's
busy_timeout, PostgreSQL's lock_timeout), then DatabaseBusy is raised, which the API
answers as a 503 with Retry-After: a stuck writer costs a request a few seconds, not a
web worker for as long as the lock lasts. Reads never wait for writers (SQLite runs in
WAL mode).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Dialect, Engine, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from service.config import DEFAULT_POOL_SIZE, DEFAULT_POOL_TIMEOUT_SECONDS

# Execution option that marks a connection as opened for writing (SQLite: BEGIN IMMEDIATE).
_WRITE_OPTION = "rally_write"
# How long (ms) a statement waits for a lock held by another connection before DatabaseBusy.
LOCK_WAIT_MS = 3_000
# What a client is told to wait before retrying after DatabaseBusy.
BUSY_RETRY_AFTER_SECONDS = 2
# PostgreSQL's SQLSTATE for lock_timeout expiring (lock_not_available).
_PG_LOCK_NOT_AVAILABLE = "55P03"
# Each dialect's insert, which has ON CONFLICT DO NOTHING.
_INSERT_BY_DIALECT: dict[str, Callable[..., sqlite.Insert | postgresql.Insert]] = {
    "sqlite": sqlite.insert,
    "postgresql": postgresql.insert,
}


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


def aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


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


DEFAULT_POOL = PoolSettings()


def make_engine(
    database_url: str, writing: bool = False, pool: PoolSettings = DEFAULT_POOL
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


class Database:
    """One database (SQLite or PostgreSQL) and this process's pool of connections to it."""

    def __init__(self, database_url: str, pool: PoolSettings = DEFAULT_POOL) -> None:
        self.engine = make_engine(database_url, pool=pool)
        self.pool = pool
        self.dialect: Dialect = self.engine.dialect
        # The dialect's INSERT, with ON CONFLICT.
        self.insert = _INSERT_BY_DIALECT[self.dialect.name]
        # PostgreSQL locks rows where SQLite's write transactions queue whole.
        self.locks_rows = self.dialect.name == "postgresql"
        self._write_engine = self.engine.execution_options(**{_WRITE_OPTION: True})
        # On PostgreSQL a read runs outside a transaction: its BEGIN and the ROLLBACK when
        # the pool takes the connection back are two round trips a read does not need.
        # (SQLite's transactions are free: it is in the process.)
        self._read_engine = (
            self.engine.execution_options(isolation_level="AUTOCOMMIT")
            if self.locks_rows
            else self.engine
        )

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A connection to read on, each statement seeing what is committed when it runs."""
        with _lock_waits_bounded(), self._read_engine.connect() as connection:
            yield connection

    @contextmanager
    def read_together(self) -> Iterator[Connection]:
        """A connection whose statements run in one transaction (on SQLite, one snapshot)."""
        with _lock_waits_bounded(), self.engine.begin() as connection:
            yield connection

    @contextmanager
    def write_alone(self) -> Iterator[Connection]:
        """A connection for a write that is one statement on PostgreSQL, which runs it
        outside a transaction (a statement is one by itself): no BEGIN and no COMMIT, two
        round trips fewer. On SQLite it is a write transaction, whose BEGIN and COMMIT cost
        no round trip, so the write may take more than one statement there."""
        engine = self._read_engine if self.locks_rows else self._write_engine
        with _lock_waits_bounded(), engine.begin() as connection:
            yield connection

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction, committed when the block ends and rolled back if it raises."""
        with _lock_waits_bounded(), self._write_engine.begin() as connection:
            yield connection
