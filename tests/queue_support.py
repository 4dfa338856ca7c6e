"""Running queued jobs in a test (a real worker in burst mode, and RQ's scheduler), and
waiting for a worker's planning run."""

from __future__ import annotations

import time
from contextlib import suppress
from datetime import UTC, datetime

import pytest
import redis
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.scheduler import RQScheduler

from service.config import Config
from service.jobs import jobs
from service.jobs.queue import plan_job_id, plan_slot, solve_queues


def work_until_empty(connection: redis.Redis, max_jobs: int | None = None) -> None:
    """Run the solve queues' jobs (at most max_jobs) with a real worker in burst mode,
    without the solver preload, until no job is queued or due.

    Between bursts RQ's scheduler, run here rather than in a process of its own, queues
    the scheduled jobs that are due (retries, the next planning run). The worker's own
    scheduler process could miss the stop signal it sends it at the end of a burst (sent
    before the process has set its handler) and the worker then waited for it for good.
    """
    queues = solve_queues(connection)
    scheduler = RQScheduler(queues, connection=connection)
    left = max_jobs
    while left is None or left > 0:
        _queue_due_jobs(scheduler)
        if not any(queue.count for queue in queues):
            return
        worker = jobs.SolveWorker(queues, connection=connection, heartbeat=1)
        worker.work(burst=True, max_jobs=left)
        if left is not None:
            worker.refresh()  # the worker counts the jobs it ran in Redis
            left -= worker.successful_job_count + worker.failed_job_count


def _queue_due_jobs(scheduler: RQScheduler) -> None:
    scheduler.acquire_locks()
    try:
        scheduler.enqueue_scheduled_jobs()
    finally:
        scheduler.release_locks()


def wait_for_planning(redis_url: str, config: Config, seconds: float = 60) -> None:
    """Until the worker has finished the current slot's planning run."""
    connection = redis.Redis.from_url(redis_url)
    job_id = plan_job_id(plan_slot(datetime.now(UTC), config.plan_interval))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with suppress(NoSuchJobError):
            if Job.fetch(job_id, connection=connection).get_status() == "finished":
                return
        time.sleep(0.2)
    pytest.fail(f"the worker did not finish {job_id} within {seconds} s")
