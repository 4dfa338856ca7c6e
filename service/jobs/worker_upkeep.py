"""What a worker notices about the others and about Redis, beyond RQ's own upkeep.

- Redis back: a connection of the worker's that connects again means Redis went
  away (or the network to it) and came back. Puzzles asked for meanwhile were
  recorded pending but could not be queued, so the worker queues every pending
  puzzle then (service.jobs.jobs.SolveWorker), instead of leaving them to the next
  planning run, up to an hour later.
- A silent scheduler: RQ's scheduler runs in one worker at a time, the holder of
  a lock that expires 61 s (RQ's fixed lease) after its last renewal. A worker
  killed with SIGKILL leaves its lock to run out, and the jobs due meanwhile (the
  retry of the job it was running among them) wait for it. The scheduler renews
  its lock every second: a lock not renewed for a worker heartbeat (RALLY_HEARTBEAT)
  is a dead scheduler's, and the next worker to look releases it and takes the
  scheduler over.
- An abandoned job (its worker stopped heartbeating) is retried at once rather
  than after RALLY_RETRY_DELAY, and logged: RQ itself says so only at DEBUG.
"""

from __future__ import annotations

import logging
import threading
import weakref
from types import TracebackType
from typing import Any, cast

import redis
from rq.exceptions import AbandonedJobError
from rq.job import Job
from rq.scheduler import RQScheduler

log = logging.getLogger(__name__)


class ReconnectNoticingPool(redis.ConnectionPool):
    """A connection pool that notes when one of its connections connects again."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reconnected = threading.Event()
        self._connected_once: weakref.WeakSet[Any] = weakref.WeakSet()

    def make_connection(self) -> Any:
        connection = super().make_connection()
        # redis-py leaves this method unannotated.
        connection.register_connect_callback(self._on_connect)  # type: ignore[no-untyped-call]
        return connection

    def _on_connect(self, connection: Any) -> None:
        if connection in self._connected_once:
            self.reconnected.set()
        else:
            self._connected_once.add(connection)


def noticing_connection(redis_url: str) -> redis.Redis:
    """A client of redis_url whose pool notes reconnections (see redis_came_back)."""
    return redis.Redis(connection_pool=ReconnectNoticingPool.from_url(redis_url))


def redis_came_back(connection: redis.Redis) -> bool:
    """True once after a connection of connection's pool reconnected."""
    pool = connection.connection_pool
    if not isinstance(pool, ReconnectNoticingPool) or not pool.reconnected.is_set():
        return False
    pool.reconnected.clear()
    return True


# RQ's scheduler renews its lock every second for its interval (1 s) plus 60 s.
SCHEDULER_LEASE_SECONDS = 61
# Deletes a scheduler lock (KEYS[1]) still held by ARGV[1] and not renewed for ARGV[2]
# seconds (its time to live is at most the lease less those), at once: a lock renewed
# meanwhile, or taken by another scheduler, is left alone. Its holder's remaining seconds.
RELEASE_SILENT_LOCK = """
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
    return -1
end
local left = redis.call("TTL", KEYS[1])
if left > tonumber(ARGV[3]) - tonumber(ARGV[2]) then
    return -1
end
redis.call("DEL", KEYS[1])
return left
"""


def release_silent_scheduler_locks(
    connection: redis.Redis, queue_names: list[str], silent_seconds: int
) -> list[str]:
    """Release each queue's scheduler lock that has not been renewed for silent_seconds, so
    that a live worker takes the scheduler over; the names of the silent schedulers."""
    release = connection.register_script(RELEASE_SILENT_LOCK)
    released: dict[str, int] = {}
    for name in queue_names:
        key = RQScheduler.get_locking_key(name)
        holder = cast("bytes | None", connection.get(key))
        if holder is None:
            continue
        arguments: list[bytes | int] = [holder, silent_seconds, SCHEDULER_LEASE_SECONDS]
        left = int(cast(int, release(keys=[key], args=arguments)))
        if left >= 0:
            released[holder.decode()] = SCHEDULER_LEASE_SECONDS - left
    for scheduler, silent in released.items():
        log.warning(
            "RQ's scheduler %s has been silent for %d s: its worker is gone; taking it over",
            scheduler, silent,
        )  # fmt: skip
    return list(released)


def retry_abandoned_job_at_once(
    job: Job,
    exc_type: type[BaseException],
    _exc_value: BaseException,
    _traceback: TracebackType | Any,
) -> bool:
    """An RQ exception handler: a job whose worker stopped heartbeating (say it was killed)
    is retried at once, not after the retry delay meant for a failing solve (its worker
    died, not its solve), and logged. True: the handlers after it run too."""
    if not issubclass(exc_type, AbandonedJobError):
        return True
    if job.retries_left and job.retry_intervals:
        # RQ takes this retry's delay from the slot below, then counts the retry: the slot
        # is never read again, and the later retries keep their delays.
        slot = max(len(job.retry_intervals) - job.retries_left, 0)
        job.retry_intervals = [
            0 if index == slot else delay for index, delay in enumerate(job.retry_intervals)
        ]
    fate = "retried at once" if job.retries_left else "no retry is left"
    log.warning("job %s was abandoned: its worker stopped heartbeating; %s", job.id, fate)
    return True
