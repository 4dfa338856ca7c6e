"""What service.jobs.jobs.SolveWorker uses of RQ beyond its documented API, each use
checked here against the RQ installed, so that an upgrade that changes one fails this file
rather than a worker in production. Checked against RQ 2.12.0 (`rq.__version__` is printed
with each failure).

- `Worker._stop_requested`: the flag RQ's work loop reads at each turn. SolveWorker sets it
  in its SIGTERM handler, since RQ's own way to stop an idle worker (an exception raised
  out of the signal handler) is lost when the signal lands in a log write.
- `RQScheduler._process`: the scheduler's process, which SolveWorker watches (is it
  alive?) and stops with a bound, since RQ's own stop may wait on it for good.
"""

from __future__ import annotations

import redis
import rq
from rq import Queue, Worker
from rq.scheduler import RQScheduler

CHECKED_AGAINST = "2.12.0"


def nothing() -> None:
    """A job that does nothing."""


def test_a_worker_stops_at_its_next_turn_when_its_stop_flag_is_set(redis_url: str):
    connection = redis.Redis.from_url(redis_url)
    queue = Queue("contract", connection=connection)
    queue.enqueue(nothing)
    worker = Worker([queue], connection=connection)
    assert worker._stop_requested is False, (rq.__version__, CHECKED_AGAINST)
    worker._stop_requested = True
    worker.work(burst=True)
    assert queue.count == 1, f"RQ {rq.__version__} ignored the flag (checked: {CHECKED_AGAINST})"
    Worker([queue], connection=connection).work(burst=True)
    assert queue.count == 0  # the same job, without the flag, is taken


def test_a_scheduler_keeps_the_process_it_starts(redis_url: str):
    connection = redis.Redis.from_url(redis_url)
    scheduler = RQScheduler(["contract"], connection=connection)
    assert scheduler._process is None, (rq.__version__, CHECKED_AGAINST)
    assert scheduler.acquire_locks(auto_start=True) == {"contract"}
    process = scheduler._process
    try:
        assert process is not None and process.is_alive(), (rq.__version__, CHECKED_AGAINST)
    finally:
        if process is not None:
            process.kill()
            process.join()
        scheduler.release_locks()
