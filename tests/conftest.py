"""Shared fixtures of the service tests: databases, Redis databases and configs.

The scale-out path uses this machine's PostgreSQL (127.0.0.1:5432) and Redis
(127.0.0.1:6379): a fresh PostgreSQL database and a Redis database number of its
own for each test session, both removed afterwards. Redis db 0 is never touched.
The embedded default needs neither.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest
import redis
import sqlalchemy
from sqlalchemy.exc import OperationalError

from service.children import is_running, process_table
from service.clock import CLOCK, Clock
from service.config import Config
from service.migrations import upgrade
from service.models import Base
from service.store import Store

POSTGRES_HOST = "127.0.0.1:5432"
POSTGRES_USERS = ("root", "postgres")
REDIS_SERVER_URL = "redis://127.0.0.1:6379"
REDIS_TEST_DBS = range(1, 16)
# Key that marks a Redis database as taken by one test session.
REDIS_CLAIM_KEY = "rally-test-session"
REDIS_CLAIM_SECONDS = 6 * 3600


def _postgres_admin_engine() -> sqlalchemy.Engine:
    """An autocommit connection to the server's maintenance database, as the first user known."""
    for user in POSTGRES_USERS:
        engine = sqlalchemy.create_engine(
            f"postgresql+psycopg://{user}@{POSTGRES_HOST}/postgres", isolation_level="AUTOCOMMIT"
        )
        try:
            with engine.connect():
                return engine
        except OperationalError:
            engine.dispose()
    pytest.fail(f"no PostgreSQL on {POSTGRES_HOST} accepting users {POSTGRES_USERS}")


@pytest.fixture(scope="session")
def postgres_factory() -> Iterator[object]:
    """Creates fresh PostgreSQL databases (by URL) and drops them at the end of the session."""
    admin = _postgres_admin_engine()
    created: list[str] = []

    def create() -> str:
        name = f"rally_test_{secrets.token_hex(6)}"
        with admin.connect() as connection:
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        created.append(name)
        return admin.url.set(database=name).render_as_string(hide_password=False)

    yield create
    for name in created:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.dispose()


@pytest.fixture(scope="session")
def postgres_url(postgres_factory) -> str:
    """One migrated PostgreSQL database for the session (tables emptied per test by `store`)."""
    url = postgres_factory()
    upgrade(url)
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path: Path) -> str:
    """A migrated, empty database of each kind."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'rally.sqlite3'}"
        upgrade(url)
        return url
    url = request.getfixturevalue("postgres_url")
    _empty_tables(url)
    return url


def _empty_tables(url: str) -> None:
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as connection:
        tables = ", ".join(table.name for table in Base.metadata.sorted_tables)
        connection.exec_driver_sql(f"TRUNCATE {tables}")
    engine.dispose()


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store(database_url)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def redis_session_url() -> Iterator[str]:
    """A Redis database number of the local server that no other test session is using."""
    token = secrets.token_hex(8)
    for number in REDIS_TEST_DBS:
        client = redis.Redis.from_url(f"{REDIS_SERVER_URL}/{number}")
        if client.set(REDIS_CLAIM_KEY, token, nx=True, ex=REDIS_CLAIM_SECONDS):
            yield f"{REDIS_SERVER_URL}/{number}"
            client.flushdb()
            client.close()
            return
        client.close()
    pytest.fail(f"every Redis test database {list(REDIS_TEST_DBS)} on {REDIS_SERVER_URL} is taken")


@pytest.fixture
def redis_url(redis_session_url: str) -> str:
    """This session's Redis database, emptied for each test (its claim kept)."""
    client = redis.Redis.from_url(redis_session_url)
    claim = client.get(REDIS_CLAIM_KEY)
    client.flushdb()
    client.set(REDIS_CLAIM_KEY, claim, ex=REDIS_CLAIM_SECONDS)
    client.close()
    return redis_session_url


@pytest.fixture
def clock() -> Iterator[Clock]:
    """The service's clock, to be set by the test; back to the system's time afterwards.
    (A job process forked from the test process keeps the moment set.)"""
    yield CLOCK
    CLOCK.set(None)


@pytest.fixture
def instance_path(tmp_path: Path) -> Path:
    """An instance folder with a short path, so a unix socket inside it fits."""
    return tmp_path / "i"


@pytest.fixture
def embedded_config(instance_path: Path) -> Config:
    """The default settings: everything under a fresh instance folder."""
    return Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path)})


@pytest.fixture
def service_env(monkeypatch, instance_path: Path, redis_url: str) -> Config:
    """The environment of a scaled-out process (migrated SQLite, the test Redis), applied
    to this process and so inherited by forked job processes; its Config."""
    database_url = f"sqlite:///{instance_path / 'rally.sqlite3'}"
    upgrade(database_url)
    env = {
        "RALLY_INSTANCE_PATH": str(instance_path),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "RALLY_RETRY_DELAY": "0",
        "RALLY_SOLVE_RETRIES": "1",
        "RALLY_HEARTBEAT": "1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Config.from_env()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_http(url: str, seconds: float = 90.0) -> bytes:
    """The body of the first 200 answer from url within seconds."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return answer.read()
        except (OSError, urllib.error.HTTPError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def started_under(leader: int) -> set[int]:
    """The processes started under leader: its descendants and their sessions' members."""
    table = process_table()
    family = {leader}
    while True:
        grown = family | {
            info.pid for info in table if info.parent in family or info.session in family
        }
        if grown == family:
            return family
        family = grown


def kill_everything_under(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL a process and all it started, as when its machine dies."""
    for pid in started_under(process.pid):
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


def stop_process(process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    """Stop a service process as its supervisor does, with SIGTERM. One still running after
    seconds fails the test, killed first with all it started: left running, it would work
    on this session's Redis and database for the tests after it."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        kill_everything_under(process)
        pytest.fail(f"{process.args} did not stop within {seconds} s of SIGTERM")


alive = is_running


def environment_without_settings() -> dict[str, str]:
    """This process's environment without the service's settings."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("RALLY_") and name not in ("DATABASE_URL", "REDIS_URL")
    }


@pytest.fixture
def process_env() -> dict[str, str]:
    """This process's environment without the service's settings (each test sets its own)."""
    return environment_without_settings()
