"""A call bounded in a child process: its value, or a clean error for each way it can fail."""

from __future__ import annotations

import os
import signal
import time

import pytest

from service.jobs.bounded import BoundedCallError, run_bounded


def allocate(mib: int) -> int:
    return len(bytearray(mib * 1024 * 1024))


def fail(message: str) -> None:
    raise ValueError(message)


def die_of(signum: signal.Signals) -> None:
    os.kill(os.getpid(), signum)


def test_the_value_comes_back_from_the_child():
    assert run_bounded(allocate, (16,), seconds=30, memory_mib=64) == 16 * 1024 * 1024


def test_a_call_needing_more_memory_than_its_bound_fails_cleanly():
    with pytest.raises(BoundedCallError, match="over the memory bound of 64 MiB"):
        run_bounded(allocate, (256,), seconds=30, memory_mib=64)


def test_a_call_past_its_time_is_stopped():
    started = time.monotonic()
    with pytest.raises(BoundedCallError, match=r"time bound of 0\.5 s"):
        run_bounded(time.sleep, (30,), seconds=0.5, memory_mib=64)
    assert time.monotonic() - started < 5


def test_an_error_in_the_call_is_named():
    with pytest.raises(BoundedCallError, match="ValueError: no optimum"):
        run_bounded(fail, ("no optimum",), seconds=30, memory_mib=64)


def test_a_child_that_dies_is_reported_not_waited_for():
    with pytest.raises(BoundedCallError, match="died of SIGKILL"):
        run_bounded(die_of, (signal.SIGKILL,), seconds=30, memory_mib=64)
