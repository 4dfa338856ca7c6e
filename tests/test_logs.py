"""Quiet logs: at the default level a worker prints no routine RQ lines; at DEBUG it does."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from rq import Worker

from service.operations.logs import QuietChattyLoggers
from service.storage.migrations import upgrade

# RQ's maintenance line, printed every heartbeat (RALLY_HEARTBEAT=1 below) when not quieted.
CHATTY_LINE = "cleaning registries"
ROUNDS = 4
STARTUP_SECONDS = 90


def worker_output(
    tmp_path: Path,
    redis_url: str,
    process_env: dict[str, str],
    level: str | None,
    awaited: str | None = None,
) -> str:
    """What `rally worker` prints in its first ROUNDS heartbeats of 1 s, at level; or
    sooner, once it has printed awaited (a line's absence needs the whole wait, its
    presence only until it shows)."""
    database_url = f"sqlite:///{tmp_path / 'rally.sqlite3'}"
    upgrade(database_url)
    env = {
        **process_env,
        "RALLY_INSTANCE_PATH": str(tmp_path / "i"),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "RALLY_HEARTBEAT": "1",
    }
    if level:
        env["RALLY_LOG_LEVEL"] = level
    log = tmp_path / "worker.log"
    connection = redis.Redis.from_url(redis_url)
    with log.open("wb") as output:
        worker = subprocess.Popen(
            [sys.executable, "-m", "service.operations.cli", "worker"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not Worker.all(connection=connection):
            assert worker.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        heard = time.monotonic() + ROUNDS
        while time.monotonic() < heard and not (awaited and awaited in log.read_text()):
            time.sleep(0.1)
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.send_signal(signal.SIGTERM)  # RQ's cold shutdown
            worker.wait(30)
        connection.close()
    return log.read_text()


@pytest.mark.processes
def test_a_worker_at_the_default_level_leaves_out_rqs_routine_lines(
    tmp_path: Path, redis_url: str, process_env: dict[str, str]
):
    assert CHATTY_LINE not in worker_output(tmp_path, redis_url, process_env, None)


@pytest.mark.processes
def test_a_worker_at_debug_shows_them(tmp_path: Path, redis_url: str, process_env: dict[str, str]):
    output = worker_output(tmp_path, redis_url, process_env, "debug", awaited=CHATTY_LINE)
    assert CHATTY_LINE in output


@pytest.mark.parametrize(
    ("name", "level", "shown"),
    [
        ("rq.worker", logging.INFO, False),
        ("rq.scheduler", logging.INFO, False),
        ("alembic.runtime.migration", logging.INFO, False),
        ("rq.worker", logging.WARNING, True),
        ("service.operations.processes", logging.INFO, True),
        ("rqueue", logging.INFO, True),  # only the rq package itself is quieted
    ],
)
def test_only_the_chatty_libraries_info_lines_are_dropped(name: str, level: int, shown: bool):
    record = logging.LogRecord(name, level, __file__, 1, "message", None, None)
    assert QuietChattyLoggers(logging.WARNING).filter(record) is shown
