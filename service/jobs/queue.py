"""Putting work on the solve queues (RQ on Redis), safely from any process.

Jobs wait in eight queues, and every worker takes the next job from the first
of them that has one: five of solves, then two of the expert's work, behind
every solve, then the archive's backfill, behind everything:

1. "solve": the planning runs and today's dailies, the ones being played (and
   the next day's once its day is near, see `urgency_of`), and the guided first
   games' seeds, which a new player meets first (`sweep_urgency_of`); the name is the
   single queue's of earlier releases, so jobs left there still run;
2. "solve-practice": practice seeds that players are waiting on;
3. "solve-archive": dailies of past days, recorded when the archive first shows them
   (and queued by the planning run's sweep: a GET never queues work);
4. "solve-coming": the dailies of the coming days, which have hours or days to spare;
5. "solve-retry": solves that failed (say over their time or memory bound),
   tried again once nothing more urgent waits;
6. "analysis": the analyses of runs (graded decisions) that players asked for;
7. "par": the par of a practice seed or a past daily asked for (today's and the
   coming dailies' own is computed by their solve job, so it is ready when their
   day starts);
8. "solve-backfill": the past dailies the service solves of its own accord, from
   the first day on (or RALLY_ARCHIVE_DAYS back), so that the archive is ready
   before anyone asks (queued by the planning run's sweep, and by a worker that
   finds nothing else to do), then their pars, behind every such solve.

A flood of analyses therefore never delays a daily's solve: a worker takes one only
when no solve waits, and an analysis is bounded by RALLY_ANALYSIS_TIMEOUT.

The solves players cause (practice seeds and past dailies) are capped: while
RALLY_MAX_PENDING_SOLVES of them wait, a new one is refused for everyone, and a
client (an address, as the rate limits count it) with
RALLY_MAX_PENDING_SOLVES_PER_CLIENT waiting is refused too; `solve_refusal` says
which, with the seconds to wait, and the API answers it (503 or 429).

Analyses are capped the same way: while RALLY_MAX_PENDING_ANALYSES wait, a new one
is refused for everyone, and a player (or, without a player cookie, a client
address) with RALLY_MAX_PENDING_ANALYSES_PER_PLAYER waiting is refused too
(`analysis_refusal`).

Every job has a unique id, so asking twice for the same work queues it once; a
job asked for in a more urgent queue than the one it waits in moves there (a
coming daily whose day is near, when the planning run queues it again).
`request_solve` is what the web app calls: it never raises when Redis is down,
because the puzzle is already recorded as pending in the database: a worker
queues every pending puzzle once it reaches Redis again (service.jobs.jobs.SolveWorker),
and the planning run's sweep (service.jobs.jobs.plan_dailies) each hour.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from enum import IntEnum
from typing import NamedTuple, cast

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry as RedisRetry
from rq import Callback, Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from puzzles import GAMES
from service.clock import CLOCK
from service.config import Config
from service.domain import daily, guided
from service.storage.puzzles import PuzzleRecord


class Urgency(IntEnum):
    """Which queue a job waits in; workers take the lowest value first."""

    TODAY = 0
    PRACTICE = 1
    ARCHIVE = 2
    COMING = 3
    RETRY = 4
    ANALYSIS = 5
    PAR = 6
    BACKFILL = 7


QUEUE_NAMES = {
    Urgency.TODAY: "solve",
    Urgency.PRACTICE: "solve-practice",
    Urgency.ARCHIVE: "solve-archive",
    Urgency.COMING: "solve-coming",
    Urgency.RETRY: "solve-retry",
    Urgency.ANALYSIS: "analysis",
    Urgency.PAR: "par",
    Urgency.BACKFILL: "solve-backfill",
}
URGENCY_OF_QUEUE = {name: urgency for urgency, name in QUEUE_NAMES.items()}
# The queues whose solves players cause, and so are capped.
CAPPED = (Urgency.PRACTICE, Urgency.ARCHIVE)
# A coming daily joins today's in the most urgent queue once its day starts within this
# many planning intervals: the planning run that moves it there leaves it at least one
# more interval to be solved before its day starts, however long the practice queue is
# (a worker takes it after its current job), and a run missed is made up by the next one.
LEAD_PLAN_INTERVALS = 2
# Retry-After of a refused solve: a full queue drains in minutes, one client's few sooner.
QUEUE_FULL_RETRY_AFTER = 60
CLIENT_FULL_RETRY_AFTER = 30
# Retry-After of a refused analysis: one player's take seconds each.
PLAYER_FULL_RETRY_AFTER = 15
# Waits between attempts of a failed job, in multiples of RALLY_RETRY_DELAY.
RETRY_BACKOFF = (1, 6, 30)
# A job may run this much longer than its solve's own bound: the database writes around it.
JOB_TIMEOUT_MARGIN = 60
# A finished job's record is kept this long; its puzzle lives on in the database.
RESULT_TTL = 3600
FAILURE_TTL = 7 * 24 * 3600
# The web app must answer fast when Redis is down: no waiting, no reconnect attempts.
WEB_REDIS_TIMEOUT = 0.5
TERMINAL_STATUSES = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}

log = logging.getLogger(__name__)
_connections: dict[tuple[int, str], redis.Redis] = {}


def solve_job_id(game: str, seed: str, rules_version: str, attempt: int = 0) -> str:
    """The first attempt's id, shared by every request of the puzzle; each retry has its own.

    It names the puzzle by its commitment, not its seed: workers log job ids, and
    the seed of a coming daily must not reach any log.
    """
    first = f"solve-{game}-{rules_version}-{daily.commitment(game, rules_version, seed)[:32]}"
    return f"{first}-retry{attempt}" if attempt else first


def par_job_id(game: str, seed: str, rules_version: str) -> str:
    """Named by the puzzle's commitment, as a solve is (see solve_job_id)."""
    return f"par-{game}-{rules_version}-{daily.commitment(game, rules_version, seed)[:32]}"


def analysis_job_id(run_id: str) -> str:
    return f"analysis-{run_id}"


def plan_job_id(slot_start: datetime) -> str:
    return f"plan-{slot_start:%Y%m%dT%H%M%S}"


def plan_slot(moment: datetime, interval: int) -> datetime:
    """The start of the planning slot (interval seconds long) holding moment."""
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % interval, UTC)


def urgency_of(daily_date: date | None, config: Config) -> Urgency:
    """A puzzle's queue: a practice seed's, a past daily's, today's daily's (or a coming
    daily's whose day starts within LEAD_PLAN_INTERVALS planning intervals), or else a
    coming daily's."""
    if daily_date is None:
        return Urgency.PRACTICE
    if daily_date < daily.today():
        return Urgency.ARCHIVE
    lead = timedelta(seconds=LEAD_PLAN_INTERVALS * config.plan_interval)
    return Urgency.TODAY if daily.starts_within(daily_date, lead) else Urgency.COMING


def sweep_urgency_of(puzzle: PuzzleRecord, config: Config) -> Urgency:
    """The queue the worker's own sweep or planning puts a recorded puzzle in: its urgency's,
    but a guided first game's goes with today's dailies (solved ahead like them, with its
    par: service.domain.guided), and a past daily no one is waiting on goes to the
    backfill, behind everything else and outside the caps on what players cause (a player
    asking for it moves it ahead, to the archive queue)."""
    if guided.is_guided(puzzle):
        return Urgency.TODAY
    urgency = urgency_of(puzzle.daily_date, config)
    return Urgency.BACKFILL if urgency is Urgency.ARCHIVE else urgency


def solve_queue(connection: redis.Redis, urgency: Urgency = Urgency.TODAY) -> Queue:
    return Queue(QUEUE_NAMES[urgency], connection=connection)


def solve_queues(connection: redis.Redis) -> list[Queue]:
    """Every queue, most urgent first: the order in which workers take jobs."""
    return [solve_queue(connection, urgency) for urgency in Urgency]


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


def solve_job_timeout(config: Config) -> int:
    """A solve job's bound: the solve's, then a daily's par (computed in the same job)."""
    return config.solve_timeout + config.par_timeout + JOB_TIMEOUT_MARGIN


def _solve_job(queue: Queue, config: Config, puzzle: tuple[str, str, str], attempt: int) -> Job:
    """The job solving puzzle (game, seed, rules version), bounded by RALLY_SOLVE_TIMEOUT
    (and RALLY_PAR_TIMEOUT for a daily's par)."""
    job_id = solve_job_id(*puzzle, attempt)
    return queue.create_job(
        "service.jobs.jobs.solve_puzzle",
        args=puzzle,
        kwargs={"attempt": attempt},
        job_id=job_id,
        description=job_id,  # by default the call with its arguments, the seed among them
        timeout=solve_job_timeout(config),
        retry=_retry(config),
        on_failure=Callback("service.jobs.jobs.record_solve_failure"),
        result_ttl=RESULT_TTL,
        failure_ttl=FAILURE_TTL,
    )


# Moves a waiting job from one queue (KEYS[1]) to the back of another (KEYS[2]) at once:
# a process dying halfway must not leave it in no queue, where it would never run, yet,
# its record saying it waits, no later request could queue its puzzle again.
MOVE_WAITING_JOB = """
if redis.call("LREM", KEYS[1], 1, ARGV[1]) == 0 then
    return 0
end
redis.call("HSET", KEYS[3], "origin", ARGV[2])
redis.call("SADD", KEYS[4], KEYS[2])
redis.call("RPUSH", KEYS[2], ARGV[1])
return 1
"""


def _move_ahead(queue: Queue, job_id: str) -> bool:
    """Move the job to the back of queue if it waits in a less urgent one; True if moved.

    A job that runs, or waits for its retry, is left alone: it is in no queue then.
    """
    job_key = Job.key_for(job_id)
    origin = cast("bytes | None", queue.connection.hget(job_key, "origin"))
    waits_in = URGENCY_OF_QUEUE.get(origin.decode()) if origin else None
    if waits_in is None or waits_in <= URGENCY_OF_QUEUE[queue.name]:
        return False
    source = solve_queue(queue.connection, waits_in)
    move = queue.connection.register_script(MOVE_WAITING_JOB)
    keys = [source.key, queue.key, job_key, queue.redis_queues_keys]
    return bool(move(keys=keys, args=[job_id, queue.name]))


def enqueue_solve(queue: Queue, config: Config, game: str, seed: str, rules_version: str) -> bool:
    """Queue the solving of a recorded puzzle, or move its job here if it waits in a less
    urgent queue; False if that job already runs or waits in this queue or a more urgent one."""
    job = _solve_job(queue, config, (game, seed, rules_version), attempt=0)
    queued = _enqueue_unique(queue, job.id, lambda: queue.enqueue_job(job, unique=True))
    return queued or _move_ahead(queue, job.id)


def enqueue_par(
    connection: redis.Redis,
    config: Config,
    puzzle: tuple[str, str, str],
    urgency: Urgency = Urgency.PAR,
) -> bool:
    """Queue the computing of puzzle's (game, seed, rules version) par, by default behind
    every solve (a daily's whose solve job could not compute it, in its daily's queue);
    False if that job already waits or runs."""
    queue = solve_queue(connection, urgency)
    job_id = par_job_id(*puzzle)
    job = queue.create_job(
        "service.jobs.jobs.par_puzzle",
        args=puzzle,
        job_id=job_id,
        description=job_id,
        timeout=config.par_timeout + JOB_TIMEOUT_MARGIN,
        result_ttl=RESULT_TTL,
        failure_ttl=FAILURE_TTL,
    )
    return _enqueue_unique(queue, job_id, lambda: queue.enqueue_job(job, unique=True))


def schedule_retry(
    connection: redis.Redis, config: Config, puzzle: tuple[str, str, str], attempt: int
) -> bool:
    """Try solving puzzle again (its attempt-th retry) on the retry queue after a backoff
    delay; False once RALLY_SOLVE_RETRIES retries were made, or if that retry already waits."""
    if attempt > config.solve_retries:
        return False
    queue = solve_queue(connection, Urgency.RETRY)
    job = _solve_job(queue, config, puzzle, attempt)
    step = RETRY_BACKOFF[min(attempt, len(RETRY_BACKOFF)) - 1]
    due = CLOCK.now() + timedelta(seconds=config.retry_delay * step)
    return _enqueue_unique(queue, job.id, lambda: queue.schedule_job(job, due, unique=True))


def schedule_plan(queue: Queue, config: Config, slot_start: datetime) -> bool:
    """Queue (or schedule, if it is ahead) the planning run of the slot starting at
    slot_start; False if that run already waits."""
    job_id = plan_job_id(slot_start)
    job = queue.create_job(
        "service.jobs.jobs.plan_dailies",
        job_id=job_id,
        timeout=config.solve_timeout,
        retry=_retry(config),
        result_ttl=RESULT_TTL,
        failure_ttl=FAILURE_TTL,
    )
    if slot_start <= CLOCK.now():
        return _enqueue_unique(queue, job_id, lambda: queue.enqueue_job(job, unique=True))
    # Queue.enqueue_at ignores unique=True (rq 2.12); schedule_job honours it.
    return _enqueue_unique(queue, job_id, lambda: queue.schedule_job(job, slot_start, unique=True))


def start_planning(queue: Queue, config: Config) -> bool:
    """Run the current slot's planning now unless it already ran or waits (each worker start)."""
    return schedule_plan(queue, config, plan_slot(CLOCK.now(), config.plan_interval))


def schedule_next_plan(queue: Queue, config: Config) -> bool:
    interval = config.plan_interval
    next_slot = plan_slot(CLOCK.now() + timedelta(seconds=interval), interval)
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


# The caps on what players cause


def _client_solves_key(client: str) -> str:
    return f"rally:pending-solves:{client}"


def _player_analyses_key(requester: str) -> str:
    return f"rally:pending-analyses:{requester}"


def _client_waiting(connection: redis.Redis, key: str) -> int:
    """How many of the jobs tracked under key still wait or run (forgetting those that
    ended)."""
    job_ids = [job_id.decode() for job_id in cast("set[bytes]", connection.smembers(key))]
    if not job_ids:
        return 0
    jobs = Job.fetch_many(job_ids, connection=connection)
    ended = [
        job_id
        for job_id, job in zip(job_ids, jobs, strict=True)
        if job is None or job.get_status(refresh=False) in TERMINAL_STATUSES
    ]
    if ended:
        connection.srem(key, *ended)
    return len(job_ids) - len(ended)


def _track(connection: redis.Redis, key: str, job_id: str) -> None:
    """Count job_id among the jobs tracked under key (the record outlives any job)."""
    with connection.pipeline(transaction=False) as pipeline:
        pipeline.sadd(key, job_id)
        pipeline.expire(key, FAILURE_TTL)
        pipeline.execute()


class SolveRefusal(NamedTuple):
    """Why one more solve that a player causes may not be queued now."""

    # True when the capped queues are full for everyone; False when this client has its share.
    queues_full: bool
    message: str
    retry_after: int  # seconds until asking again may succeed


def _refusal(connection: redis.Redis, config: Config, client: str) -> SolveRefusal | None:
    """Why one more solve of the client may not be queued now, or None if it may."""
    waiting = sum(solve_queue(connection, urgency).count for urgency in CAPPED)
    if waiting >= config.max_pending_solves:
        return SolveRefusal(
            True,
            f"the solver is busy: {waiting} practice and archive puzzles wait; "
            "ask for a new one later",
            QUEUE_FULL_RETRY_AFTER,
        )
    if (
        _client_waiting(connection, _client_solves_key(client))
        >= config.max_pending_solves_per_client
    ):
        limit = config.max_pending_solves_per_client
        return SolveRefusal(
            False,
            f"too many puzzles waiting for the solver: at most {limit} per client; "
            "ask for a new one when one of yours is solved",
            CLIENT_FULL_RETRY_AFTER,
        )
    return None


def solve_refusal(daily_date: date | None, client: str, config: Config) -> SolveRefusal | None:
    """Before a player's request records a new puzzle: why its solve would pass a cap, or
    None when it may be queued. None too when Redis is unreachable: the puzzle then waits
    for the sweep, and the rate limits still hold."""
    if urgency_of(daily_date, config) not in CAPPED:
        return None
    try:
        return _refusal(web_connection(config.redis_url), config, client)
    except redis.RedisError as error:
        log.warning("Redis unreachable, solve caps not checked: %s", error)
        return None


def request_solve(
    game: str,
    seed: str,
    config: Config,
    *,
    daily_date: date | None,
    client: str | None = None,
) -> bool:
    """Queue the solving of a pending puzzle in the queue of its urgency (daily_date is the
    puzzle's: None for practice); False (never an error) when Redis is unreachable, or when
    the solve of client's request would pass a cap: the puzzle then stays pending for the
    planning sweep."""
    urgency = urgency_of(daily_date, config)
    connection = web_connection(config.redis_url)
    capped_client = client if urgency in CAPPED else None
    try:
        if capped_client is not None and _refusal(connection, config, capped_client) is not None:
            return False
        rules_version = GAMES[game].rules_version
        queued = enqueue_solve(solve_queue(connection, urgency), config, game, seed, rules_version)
        if queued and capped_client is not None:
            key = _client_solves_key(capped_client)
            _track(connection, key, solve_job_id(game, seed, rules_version))
        return queued
    except redis.RedisError as error:
        job_id = solve_job_id(game, seed, GAMES[game].rules_version)
        log.warning("Redis unreachable, %s stays pending for the sweep: %s", job_id, error)
        return False


def request_par(game: str, seed: str, config: Config) -> bool | None:
    """Queue the par of a recorded puzzle behind the solves; False when it already waits,
    None (never an error) when Redis is unreachable (a later request queues it)."""
    rules_version = GAMES[game].rules_version
    try:
        return enqueue_par(web_connection(config.redis_url), config, (game, seed, rules_version))
    except redis.RedisError as error:
        job_id = par_job_id(game, seed, rules_version)
        log.warning("Redis unreachable, %s not queued: %s", job_id, error)
        return None


# Analyses of runs


def _job_waits(connection: redis.Redis, job_id: str) -> bool:
    """True when the job exists and has not ended (it waits, is scheduled or runs)."""
    try:
        job = Job.fetch(job_id, connection=connection)
    except NoSuchJobError:
        return False
    return job.get_status(refresh=False) not in TERMINAL_STATUSES


def analysis_refusal(run_id: str, requester: str, config: Config) -> SolveRefusal | None:
    """Why the analysis of run_id may not be queued now for requester (a player id, or a
    client's bucket), or None when it may be, or already waits (asking again costs
    nothing), or Redis is unreachable (the next request tries again)."""
    try:
        connection = web_connection(config.redis_url)
        if _job_waits(connection, analysis_job_id(run_id)):
            return None
        waiting = solve_queue(connection, Urgency.ANALYSIS).count
        if waiting >= config.max_pending_analyses:
            return SolveRefusal(
                True,
                f"the analyser is busy: {waiting} analyses wait; ask again later",
                QUEUE_FULL_RETRY_AFTER,
            )
        limit = config.max_pending_analyses_per_player
        if _client_waiting(connection, _player_analyses_key(requester)) >= limit:
            return SolveRefusal(
                False,
                f"too many analyses waiting: at most {limit} per player; ask again when one "
                "of yours is done",
                PLAYER_FULL_RETRY_AFTER,
            )
        return None
    except redis.RedisError as error:
        log.warning("Redis unreachable, analysis caps not checked: %s", error)
        return None


def request_analysis(run_id: str, requester: str, config: Config) -> bool:
    """Queue the analysis of a run whose analysis is recorded pending, behind every solve,
    counted among requester's; False (never an error) when it already waits or Redis is
    unreachable (the next request tries again). The caller checked analysis_refusal."""
    job_id = analysis_job_id(run_id)
    try:
        connection = web_connection(config.redis_url)
        queue = solve_queue(connection, Urgency.ANALYSIS)
        job = queue.create_job(
            "service.jobs.jobs.analyse_run",
            args=(run_id,),
            job_id=job_id,
            description=job_id,
            timeout=config.analysis_timeout + JOB_TIMEOUT_MARGIN,
            result_ttl=RESULT_TTL,
            failure_ttl=FAILURE_TTL,
        )
        queued = _enqueue_unique(queue, job_id, lambda: queue.enqueue_job(job, unique=True))
        if queued:
            _track(connection, _player_analyses_key(requester), job_id)
        return queued
    except redis.RedisError as error:
        log.warning("Redis unreachable, %s not queued: %s", job_id, error)
        return False
