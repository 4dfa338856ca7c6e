"""GET /healthz: 200 when the database, Redis and the queues are well, else 503 naming the part."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis
from rq import Queue, Worker
from rq.worker import WorkerStatus

from service.queue import Urgency, solve_queue
from tests.api_support import client_of
from tests.process_support import free_port


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
        "solve": 0, "solve-practice": 1, "solve-archive": 0, "solve-coming": 0, "solve-retry": 0
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


def test_an_unreachable_database_is_503_naming_the_database(make_app, tmp_path: Path):
    app = make_app()
    (tmp_path / "api.sqlite3").unlink()
    (tmp_path / "api.sqlite3").mkdir()  # a folder where the database file was: cannot open
    app.extensions["rally"].store.engine.dispose()
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
