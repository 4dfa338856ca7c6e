"""GET /livez: does this web process answer? GET /healthz: can it do its work right now?

/livez answers 200 whenever the process answers at all, whatever its database, Redis
or the queues do: it is what an orchestrator acts on (deploy.yml's health checks of
the web replicas and of the proxy). A Redis outage is the whole system's, not one
replica's, and the web keeps taking attempts and runs through it; a health check that
followed /healthz would take every replica out at once.

/healthz is the whole system's report, for people and monitoring. It checks the
database (a trivial query), Redis (PING) and every RQ queue, the six of solves and
the expert's two (how many jobs wait in each, how long the oldest has waited, how
many workers there are and how many are busy). The queues fail when a job has
waited longer than RALLY_HEALTH_MAX_JOB_AGE while no worker is busy: nothing is
getting through. A long wait while workers are busy is a backlog (low-priority
work waits by design), not a failure.

A worker counts while it heartbeats: one silent for SILENT_HEARTBEATS of its
heartbeats (RALLY_HEARTBEAT) is dead, say killed with SIGKILL, which left its entry
in RQ's registry for its key's remaining time (a minute or more; as long as its
job's timeout while it was busy), and so counted as a worker, busy, keeping the
queues "ok" while nothing was getting through. It is reported as silent instead.
200 when every part is well, else 503; both in JSON naming each part:

    {"status": "ok" | "failing", "failing": [part, ...],
     "checks": {"database": {"ok": true, "ms": 0.4}, "redis": {...},
                "queue": {"ok": true, "depth": 14,
                          "queues": {"solve": 0, "solve-practice": 2, "solve-archive": 0,
                                     "solve-coming": 12, "solve-retry": 0, "analysis": 0,
                                     "par": 0, "solve-backfill": 0},
                          "oldest_job_age_seconds": 3.1, "max_job_age_seconds": 900,
                          "workers": 1, "busy_workers": 1, "silent_workers": 0}}}

`rally serve` asks it to find a hung web process (any answer, 503 included, shows
the process is not hung) and logs each change of its status.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import redis
import sqlalchemy
from flask import Blueprint, Response, current_app, jsonify
from rq import Queue, Worker
from rq.worker import BaseWorker, WorkerStatus

from service.jobs.queue import solve_queues, web_connection

blueprint = Blueprint("health", __name__)
# An error is reported by its kind and first line, cut to this length.
ERROR_CHARS = 200
# A worker that has not heartbeaten for this many heartbeats is dead (service.config).
SILENT_HEARTBEATS = 3


def _error_text(error: Exception) -> str:
    lines = str(error).strip().splitlines() or [""]
    return f"{type(error).__name__}: {lines[0]}"[:ERROR_CHARS]


def _timed(check: dict[str, Any], started: float) -> dict[str, Any]:
    return {**check, "ms": round((time.perf_counter() - started) * 1000, 1)}


def check_database(engine: sqlalchemy.Engine) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text("SELECT 1"))
    except sqlalchemy.exc.SQLAlchemyError as error:
        return _timed({"ok": False, "error": _error_text(error)}, started)
    return _timed({"ok": True}, started)


def check_redis(connection: redis.Redis) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        connection.ping()
    except redis.RedisError as error:
        return _timed({"ok": False, "error": _error_text(error)}, started)
    return _timed({"ok": True}, started)


def oldest_job_age(queue: Queue, now: datetime) -> float | None:
    """Seconds the job at the head of queue has waited; None when none waits."""
    head = queue.get_job_ids(0, 0)
    job = queue.fetch_job(head[0]) if head else None
    if job is None or job.enqueued_at is None:
        return None
    return (now - job.enqueued_at).total_seconds()


def is_heartbeating(worker: BaseWorker, now: datetime, heartbeat: int) -> bool:
    """True when the worker's last heartbeat is recent: it is alive."""
    last = worker.last_heartbeat
    if last is None:
        return False
    if last.tzinfo is None:
        last = last.replace(tzinfo=UTC)
    return (now - last).total_seconds() <= SILENT_HEARTBEATS * heartbeat


def check_queues(connection: redis.Redis, max_age: int, heartbeat: int) -> dict[str, Any]:
    """Every queue, most urgent first: jobs waiting in each, the longest wait of any,
    and the workers alive (heartbeating every `heartbeat` seconds); failing when a job has
    waited too long and no living worker is busy."""
    started = time.perf_counter()
    now = datetime.now(UTC)
    try:
        queues = solve_queues(connection)
        depths = {queue.name: queue.count for queue in queues}
        ages = [age for queue in queues if (age := oldest_job_age(queue, now)) is not None]
        registered = Worker.all(connection=connection)
        alive = [worker for worker in registered if is_heartbeating(worker, now, heartbeat)]
        states = [worker.get_state() for worker in alive]
    except redis.RedisError as error:
        return _timed({"ok": False, "error": _error_text(error)}, started)
    oldest = round(max(ages), 1) if ages else None
    busy = states.count(WorkerStatus.BUSY)
    return _timed(
        {
            "ok": oldest is None or oldest <= max_age or busy > 0,
            "depth": sum(depths.values()),
            "queues": depths,
            "oldest_job_age_seconds": oldest,
            "max_job_age_seconds": max_age,
            "workers": len(alive),
            "busy_workers": busy,
            "silent_workers": len(registered) - len(alive),
        },
        started,
    )


@blueprint.get("/livez")
def livez() -> Response:
    """200 while the process answers: nothing else is checked, so nothing else can fail it."""
    answer = jsonify({"status": "live"})
    answer.headers["Cache-Control"] = "no-store"
    return answer


@blueprint.get("/healthz")
def healthz() -> tuple[Response, int]:
    services = current_app.extensions["rally"]
    connection = web_connection(services.config.redis_url)
    checks = {
        "database": check_database(services.store.database.engine),
        "redis": check_redis(connection),
    }
    if checks["redis"]["ok"]:
        checks["queue"] = check_queues(
            connection, services.config.health_max_job_age, services.config.heartbeat
        )
    else:
        checks["queue"] = {"ok": False, "error": "not checked: Redis is unreachable"}
    failing = [part for part, check in checks.items() if not check["ok"]]
    answer = jsonify(
        {"status": "failing" if failing else "ok", "failing": failing, "checks": checks}
    )
    answer.headers["Cache-Control"] = "no-store"
    return answer, 503 if failing else 200
