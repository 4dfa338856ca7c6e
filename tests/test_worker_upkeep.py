"""A worker's own upkeep: Redis coming back, a dead worker's scheduler, an abandoned job."""

from __future__ import annotations

import logging
import multiprocessing
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import redis
from rq import Retry
from rq.exceptions import AbandonedJobError
from rq.job import Job, JobStatus
from rq.scheduler import RQScheduler

from puzzles import GAMES
from service.config import Config
from service.jobs import jobs
from service.jobs.queue import Urgency, solve_job_id, solve_queue, solve_queues
from service.jobs.worker_upkeep import (
    SCHEDULER_LEASE_SECONDS,
    noticing_connection,
    redis_came_back,
    release_silent_scheduler_locks,
    retry_abandoned_job_at_once,
)
from service.storage.store import Store

HEARTBEAT = 10


def ours(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The service's own log records (RQ's loggers may be at INFO too)."""
    return [record for record in caplog.records if record.name.startswith("service")]


@pytest.fixture
def noticing(service_env: Config) -> Iterator[redis.Redis]:
    client = noticing_connection(service_env.redis_url)
    yield client
    client.close()


def cut_off(client: redis.Redis, connection: redis.Redis) -> None:
    """Close client's connection from the server's side, as a restarted Redis does."""
    assert connection.client_kill_filter(_id=str(client.client_id())) == 1


def test_a_reconnection_is_noticed_once(noticing: redis.Redis, connection: redis.Redis):
    noticing.ping()
    noticing.ping()
    assert not redis_came_back(noticing)  # the first connection is no reconnection
    cut_off(noticing, connection)
    noticing.ping()  # redis-py connects again and sends the command again
    assert redis_came_back(noticing)
    assert not redis_came_back(noticing)


def test_a_worker_queues_the_pending_puzzles_once_redis_is_back(
    noticing: redis.Redis, connection: redis.Redis, service_env: Config, job_store: Store
):
    worker = jobs.SolveWorker(solve_queues(noticing), connection=noticing, heartbeat=HEARTBEAT)
    worker.heartbeat()
    game, version = sorted(GAMES)[0], GAMES[sorted(GAMES)[0]].rules_version
    # A job waits, so the sweep of a worker whose queues are all empty does not run.
    queued = job_store.puzzles.ensure(game, "queued-before-the-outage", version)
    practice = solve_queue(connection, Urgency.PRACTICE)
    jobs.queue_solving(connection, service_env, [queued], Urgency.PRACTICE)
    # Recorded by the web while Redis was down, so not queued.
    puzzle = job_store.puzzles.ensure(game, "asked-while-redis-was-down", version)
    waiting = solve_job_id(game, puzzle.seed, version)
    worker.heartbeat()
    assert waiting not in practice.job_ids
    cut_off(noticing, connection)
    worker.heartbeat()
    assert waiting in practice.job_ids


def hold_lock(connection: redis.Redis, scheduler: str, renewed_ago: int) -> str:
    key = RQScheduler.get_locking_key("solve")
    connection.set(key, scheduler, ex=SCHEDULER_LEASE_SECONDS - renewed_ago)
    return key


def test_a_live_schedulers_lock_is_left_alone(connection: redis.Redis):
    key = hold_lock(connection, "alive", renewed_ago=1)
    assert release_silent_scheduler_locks(connection, ["solve", "solve-retry"], HEARTBEAT) == []
    assert connection.get(key) == b"alive"


def test_a_silent_schedulers_lock_is_released_and_logged(
    connection: redis.Redis, caplog: pytest.LogCaptureFixture
):
    key = hold_lock(connection, "killed", renewed_ago=HEARTBEAT + 2)
    with caplog.at_level(logging.INFO):
        assert release_silent_scheduler_locks(connection, ["solve"], HEARTBEAT) == ["killed"]
    assert connection.get(key) is None
    (record,) = ours(caplog)
    assert record.levelno == logging.WARNING
    assert "killed has been silent for 12 s" in record.getMessage()


def test_a_worker_takes_over_the_scheduler_of_a_dead_one(
    connection: redis.Redis, caplog: pytest.LogCaptureFixture
):
    key = hold_lock(connection, "killed", renewed_ago=HEARTBEAT)
    worker = jobs.SolveWorker(solve_queues(connection), connection=connection, heartbeat=HEARTBEAT)
    # As work(with_scheduler=True) does: the scheduler runs for the queues whose locks it took.
    worker._start_scheduler()
    assert worker.scheduler is not None and worker.runs_scheduler()
    assert connection.get(key) == b"killed"
    # A later round: RQ restarts a dead scheduler (RQ leaves the attribute's type to its
    # first value, None).
    worker.last_cleaned_at = datetime.now(UTC)  # type: ignore[assignment]
    try:
        with caplog.at_level(logging.INFO, logger="service"):
            worker.run_maintenance_tasks()
        assert worker.runs_scheduler()
        assert connection.get(key) == worker.scheduler.name.encode()
    finally:
        worker.stop_scheduler()
    lines = [record.getMessage() for record in ours(caplog)]
    assert any("killed has been silent" in line for line in lines)
    assert any(line == f"worker {worker.name} runs RQ's scheduler now" for line in lines)


def deaf_to_sigterm(ready: Any) -> None:
    """A scheduler stuck before its loop: SIGTERM does not end it."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready.set()
    time.sleep(60)


def test_a_scheduler_that_does_not_stop_is_killed(
    connection: redis.Redis, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(jobs, "SCHEDULER_STOP_SECONDS", 1)
    worker = jobs.SolveWorker(solve_queues(connection), connection=connection, heartbeat=HEARTBEAT)
    worker._start_scheduler()
    assert worker.scheduler is not None
    worker.stop_scheduler()
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    stuck = context.Process(target=deaf_to_sigterm, args=(ready,))
    stuck.start()
    assert ready.wait(30)
    worker.scheduler._process = stuck  # type: ignore[assignment]  # RQ's is None until started
    with caplog.at_level(logging.WARNING, logger="service"):
        worker.stop_scheduler()
    assert not stuck.is_alive()
    assert any("did not stop within 1 s: killed" in r.getMessage() for r in ours(caplog))


def abandon(job: Job, connection: redis.Redis) -> None:
    """What RQ's clean-up of a dead worker's job does: the handler, then the retry if any."""
    assert retry_abandoned_job_at_once(job, AbandonedJobError, AbandonedJobError(), None)
    if job.retries_left:
        with connection.pipeline() as pipeline:
            job.retry(solve_queue(connection), pipeline)
            pipeline.execute()


def test_an_abandoned_job_is_retried_at_once_and_logged(
    connection: redis.Redis, caplog: pytest.LogCaptureFixture
):
    queue = solve_queue(connection)
    job = queue.enqueue(
        "service.jobs.jobs.plan_dailies", retry=Retry(max=3, interval=[10, 60, 300])
    )
    queue.remove(job)  # taken by the worker that then died
    with caplog.at_level(logging.INFO, logger="service"):
        abandon(job, connection)
    assert (job.get_status(), queue.job_ids) == (JobStatus.QUEUED, [job.id])
    (record,) = ours(caplog)
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        f"job {job.id} was abandoned: its worker stopped heartbeating; retried at once"
    )
    # A later retry, of a solve that failed, waits its delay as before.
    assert (job.retries_left, job.get_retry_interval()) == (2, 60)
    assert Job.fetch(job.id, connection=connection).retry_intervals == [0, 60, 300]


def test_an_abandoned_job_without_retries_is_logged(
    connection: redis.Redis, caplog: pytest.LogCaptureFixture
):
    job = solve_queue(connection).enqueue("service.jobs.jobs.plan_dailies")
    with caplog.at_level(logging.INFO, logger="service"):
        abandon(job, connection)
        assert retry_abandoned_job_at_once(job, TimeoutError, TimeoutError(), None)
    assert [record.getMessage() for record in ours(caplog)] == [
        f"job {job.id} was abandoned: its worker stopped heartbeating; no retry is left"
    ]
