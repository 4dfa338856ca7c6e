"""GET /healthz: 200 when the database, Redis and the queues are well, else 503 naming the part;
GET /livez: 200 whenever the process answers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import redis
from flask.testing import FlaskClient
from rq import Queue, Worker
from rq.utils import utcformat
from rq.worker import WorkerStatus

from service.config import Config
from service.jobs.queue import Urgency, solve_queue
from tests.api_support import client_of
from tests.process_support import free_port, kill_everything_under


def practice_queue(redis_url: str) -> Queue:
    return solve_queue(redis.Redis.from_url(redis_url), Urgency.PRACTICE)


def test_a_healthy_service_answers_200_with_every_solve_queue(make_app, redis_url: str):
    practice_queue(redis_url).enqueue(print, "queued")
    answer = client_of(make_app()).get("/healthz")
    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] == "no-store"
    body = answer.get_json()
    assert body["status"] == "ok"
    assert body["failing"] == []
    assert {part for part, check in body["checks"].items() if check["ok"]} == {
        "database", "redis", "queue"
    }  # fmt: skip
    queue = body["checks"]["queue"]
    assert queue["depth"] == 1
    assert queue["queues"] == {
        "solve": 0, "solve-practice": 1, "solve-archive": 0, "solve-coming": 0, "solve-retry": 0,
        "analysis": 0, "par": 0, "solve-backfill": 0,
    }  # fmt: skip
    assert 0 <= queue["oldest_job_age_seconds"] < 60


def test_redis_down_is_503_naming_redis(make_app):
    closed = f"redis://127.0.0.1:{free_port()}/0"
    answer = client_of(make_app(redis=closed)).get("/healthz")
    assert answer.status_code == 503
    body = answer.get_json()
    assert body["status"] == "failing"
    assert body["failing"] == ["redis", "queue"]
    assert "ConnectionError" in body["checks"]["redis"]["error"]
    assert body["checks"]["database"]["ok"] is True


def test_livez_is_200_while_redis_and_the_database_fail(make_app, tmp_path: Path):
    closed = f"redis://127.0.0.1:{free_port()}/0"
    app = make_app(redis=closed)
    (tmp_path / "api.sqlite3").unlink()
    (tmp_path / "api.sqlite3").mkdir()  # a folder where the database file was: cannot open
    app.extensions["rally"].store.database.engine.dispose()
    client = client_of(app)
    assert client.get("/healthz").get_json()["failing"] == ["database", "redis", "queue"]
    answer = client.get("/livez")
    assert (answer.status_code, answer.get_json()) == (200, {"status": "live"})
    assert answer.headers["Cache-Control"] == "no-store"


def test_an_unreachable_database_is_503_naming_the_database(make_app, tmp_path: Path):
    app = make_app()
    (tmp_path / "api.sqlite3").unlink()
    (tmp_path / "api.sqlite3").mkdir()  # a folder where the database file was: cannot open
    app.extensions["rally"].store.database.engine.dispose()
    answer = client_of(app).get("/healthz")
    assert answer.status_code == 503
    body = answer.get_json()
    assert body["failing"] == ["database"]
    assert body["checks"]["database"]["error"].startswith("OperationalError")


def enqueue_waiting_since(queue: Queue, seconds: float) -> None:
    job = queue.enqueue(print, "waiting")
    job.enqueued_at = datetime.now(UTC) - timedelta(seconds=seconds)
    job.save()


def test_a_job_waiting_too_long_with_no_worker_busy_fails_the_queue(make_app, redis_url: str):
    connection = redis.Redis.from_url(redis_url)
    queue = practice_queue(redis_url)
    enqueue_waiting_since(queue, 300)
    idle = Worker([queue], connection=connection)
    idle.register_birth()
    idle.set_state(WorkerStatus.IDLE)
    answer = client_of(make_app(RALLY_HEALTH_MAX_JOB_AGE="120")).get("/healthz")
    assert answer.status_code == 503
    body = answer.get_json()
    assert body["failing"] == ["queue"]
    check = body["checks"]["queue"]
    assert check["oldest_job_age_seconds"] >= 300
    assert (check["max_job_age_seconds"], check["workers"], check["busy_workers"]) == (120, 1, 0)


def test_a_backlog_behind_a_busy_worker_is_healthy(make_app, redis_url: str):
    connection = redis.Redis.from_url(redis_url)
    queue = practice_queue(redis_url)
    enqueue_waiting_since(queue, 300)
    busy = Worker([queue], connection=connection)
    busy.register_birth()
    busy.set_state(WorkerStatus.BUSY)
    answer = client_of(make_app(RALLY_HEALTH_MAX_JOB_AGE="120")).get("/healthz")
    assert answer.status_code == 200
    assert answer.get_json()["checks"]["queue"]["busy_workers"] == 1


def heartbeat_at(worker: Worker, moment: datetime) -> None:
    worker.connection.hset(worker.key, "last_heartbeat", utcformat(moment))


def test_a_silent_busy_worker_is_dead_and_keeps_no_queue_ok(make_app, redis_url: str):
    """A worker killed with SIGKILL leaves its entry, busy, until its key expires: counted,
    it would keep a stuck queue "ok". Silent for three heartbeats, it counts for nothing."""
    connection = redis.Redis.from_url(redis_url)
    queue = practice_queue(redis_url)
    enqueue_waiting_since(queue, 300)
    killed = Worker([queue], connection=connection)
    killed.register_birth()
    killed.set_state(WorkerStatus.BUSY)
    app = make_app(RALLY_HEALTH_MAX_JOB_AGE="120", RALLY_HEARTBEAT="10")
    heartbeat_at(killed, datetime.now(UTC) - timedelta(seconds=29))
    assert client_of(app).get("/healthz").status_code == 200  # two heartbeats late: alive
    heartbeat_at(killed, datetime.now(UTC) - timedelta(seconds=31))
    answer = client_of(app).get("/healthz")
    assert answer.status_code == 503
    check = answer.get_json()["checks"]["queue"]
    assert (check["workers"], check["busy_workers"], check["silent_workers"]) == (0, 0, 1)


def healthz_workers(client: FlaskClient) -> int:
    return client.get("/healthz").get_json()["checks"]["queue"]["workers"]


@pytest.mark.processes
def test_a_worker_killed_with_sigkill_stops_counting_within_a_minute(
    make_app, service_env: Config, process_env: dict[str, str]
):
    client = client_of(make_app(database=service_env.database_url, redis=service_env.redis_url))
    env = {**process_env, **{k: v for k, v in os.environ.items() if k.startswith("RALLY_")}}
    env |= {"DATABASE_URL": service_env.database_url, "REDIS_URL": service_env.redis_url}
    worker = subprocess.Popen(
        [sys.executable, "-m", "service.operations.cli", "worker"], env=env, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        while healthz_workers(client) != 1:
            assert time.monotonic() < deadline, "the worker never counted"
            time.sleep(0.2)
        os.kill(worker.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        while healthz_workers(client) != 0:
            assert time.monotonic() - killed_at < 60, "a killed worker still counts"
            time.sleep(0.5)
    finally:
        kill_everything_under(worker)
