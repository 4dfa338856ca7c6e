"""Helpers of the tests that run service processes: ports, waiting for HTTP, stopping."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import suppress

import pytest

from service.operations.children import is_running, process_table


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
        pytest.fail(f"{process.args!r} did not stop within {seconds} s of SIGTERM")


alive = is_running


def environment_without_settings() -> dict[str, str]:
    """This process's environment without the service's settings."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("RALLY_") and name not in ("DATABASE_URL", "REDIS_URL")
    }
