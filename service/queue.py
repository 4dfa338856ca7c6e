"""Putting work on the "solve" queue (RQ on Redis), safely from any process.

Every job has a unique id, so asking twice for the same work queues it once.
`request_solve` is what the web app calls: it never raises when Redis is down,
because the puzzle is already recorded as pending in the database and the
periodic sweep (service.jobs.plan_dailies) queues it once Redis is back.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry as RedisRetry
from rq import Callback, Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from puzzles import GAMES
from service.config import Config
from service.daily import commitment

QUEUE_NAME = "solve"
# Waits between attempts of a failed job, in multiples of RALLY_RETRY_DELAY.
RETRY_BACKOFF = (1, 6, 30)
# A finished job's record is kept this long; its puzzle lives on in the database.
RESULT_TTL = 3600
FAILURE_TTL = 7 * 24 * 3600
# The web app must answer fast when Redis is down: no waiting, no reconnect attempts.
WEB_REDIS_TIMEOUT = 0.5
TERMINAL_STATUSES = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}

log = logging.getLogger(__name__)
_connections: dict[tuple[int, str], redis.Redis] = {}


def solve_job_id(game: str, seed: str, rules_version: str) -> str:
    """The job's id names the puzzle by its commitment: workers log job ids, and the seed of
    a coming daily must not reach any log."""
    return f"solve-{game}-{rules_version}-{commitment(game, rules_version, seed)[:32]}"


def plan_job_id(slot_start: datetime) -> str:
    return f"plan-{slot_start:%Y%m%dT%H%M%S}"


def plan_slot(moment: datetime, interval: int) -> datetime:
    """The start of the planning slot (interval seconds long) holding moment."""
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % interval, UTC)


def solve_queue(connection: redis.Redis) -> Queue:
    return Queue(QUEUE_NAME, connection=connection)


def _retry(config: Config) -> Retry:
    """Retries with backoff; a retried job goes to the front, having waited its turn once."""
    return Retry(
        max=config.solve_retries,
        interval=[config.retry_delay * step for step in RETRY_BACKOFF],
        enqueue_at_front=True,
    )


def _enqueue_unique(queue: Queue, job_id: str, enqueue: Callable[[], Job]) -> bool:
    """Run enqueue(); if job_id exists but has ended, replace it once. True if queued now.

    A job that ended while its puzzle is still pending (say its worker died with
    no retries left) must not block that puzzle forever.
    """
    try:
        enqueue()
        return True
    except DuplicateJobError:
        pass
    try:
        existing = Job.fetch(job_id, connection=queue.connection)
    except NoSuchJobError:
        existing = None
    if existing is not None and existing.get_status() not in TERMINAL_STATUSES:
        return False
    if existing is not None:
        existing.delete()
    try:
        enqueue()
    except DuplicateJobError:
        return False  # another process replaced it at the same moment
    return True


def enqueue_solve(queue: Queue, config: Config, game: str, seed: str, rules_version: str) -> bool:
    """Queue the solving of a recorded puzzle; False if that job is already waiting or running."""
    job_id = solve_job_id(game, seed, rules_version)
    return _enqueue_unique(
        queue,
        job_id,
        lambda: queue.enqueue(
            "service.jobs.solve_puzzle",
            game,
            seed,
            rules_version,
            job_id=job_id,
            description=job_id,  # by default the call with its arguments, the seed among them
            unique=True,
            job_timeout=config.solve_timeout,
            retry=_retry(config),
            on_failure=Callback("service.jobs.record_solve_failure"),
            result_ttl=RESULT_TTL,
            failure_ttl=FAILURE_TTL,
        ),
    )


def schedule_plan(queue: Queue, config: Config, slot_start: datetime) -> bool:
    """Queue (or schedule, if it is ahead) the planning run of the slot starting at
    slot_start; False if that run already waits."""
    job_id = plan_job_id(slot_start)
    job = queue.create_job(
        "service.jobs.plan_dailies",
        job_id=job_id,
        timeout=config.solve_timeout,
        retry=_retry(config),
        result_ttl=RESULT_TTL,
        failure_ttl=FAILURE_TTL,
    )
    if slot_start <= datetime.now(UTC):
        return _enqueue_unique(queue, job_id, lambda: queue.enqueue_job(job, unique=True))
    # Queue.enqueue_at ignores unique=True (rq 2.12); schedule_job honours it.
    return _enqueue_unique(
        queue, job_id, lambda: queue.schedule_job(job, slot_start, unique=True)
    )


def start_planning(queue: Queue, config: Config) -> bool:
    """Run the current slot's planning now unless it already ran or waits (each worker start)."""
    return schedule_plan(queue, config, plan_slot(datetime.now(UTC), config.plan_interval))


def schedule_next_plan(queue: Queue, config: Config) -> bool:
    interval = config.plan_interval
    next_slot = plan_slot(datetime.now(UTC) + timedelta(seconds=interval), interval)
    return schedule_plan(queue, config, next_slot)


def web_connection(redis_url: str) -> redis.Redis:
    """This process's connection to redis_url for the web app: short timeouts, no retries."""
    key = (os.getpid(), redis_url)
    if key not in _connections:
        _connections[key] = redis.Redis.from_url(
            redis_url,
            socket_timeout=WEB_REDIS_TIMEOUT,
            socket_connect_timeout=WEB_REDIS_TIMEOUT,
            retry=RedisRetry(NoBackoff(), retries=0),
        )
    return _connections[key]


def _current_config() -> Config:
    """The running web app's settings, else the environment's."""
    from flask import current_app, has_app_context

    if has_app_context() and "rally" in current_app.extensions:
        return current_app.extensions["rally"].config
    return Config.from_env()


def request_solve(game: str, seed: str, config: Config | None = None) -> bool:
    """Queue the solving of a pending puzzle; False (never an error) when Redis is unreachable."""
    config = config or _current_config()
    queue = solve_queue(web_connection(config.redis_url))
    try:
        return enqueue_solve(queue, config, game, seed, GAMES[game].rules_version)
    except redis.RedisError as error:
        job_id = solve_job_id(game, seed, GAMES[game].rules_version)
        log.warning("Redis unreachable, %s stays pending for the sweep: %s", job_id, error)
        return False
