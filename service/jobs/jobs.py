"""The queued jobs and the worker that runs them.

- `solve_puzzle` proves one puzzle's optimum and stores it with one guarded
  UPDATE: running it twice, or again after its worker was killed, stores the
  puzzle exactly once. The solver runs in a child process bounded by
  RALLY_SOLVE_TIMEOUT and RALLY_SOLVE_MEMORY_MB: a solve that breaks a bound
  (or fails) marks its puzzle failed with the reason and is tried again later
  on the retry queue, behind everything more urgent. A daily's solve job then
  computes its par (the expert's own run, bounded by RALLY_PAR_TIMEOUT), so it
  is ready when the day starts; a practice seed's solve queues its par behind
  every solve instead (`par_puzzle`).
- `analyse_run` grades the decisions of a run whose analysis a player asked
  for, bounded by RALLY_ANALYSIS_TIMEOUT, and stores it (or why it failed) once.
- `plan_dailies` runs once per planning slot (RALLY_PLAN_INTERVAL): it records
  today's and the coming days' dailies (RALLY_DAYS_AHEAD), the guided first games'
  puzzles (solved and given their par with today's dailies), and every past daily from
  the first day on that is not recorded yet (a fresh install's archive), and queues every pending
  puzzle (the sweep that also picks up puzzles requested while Redis was down), and
  the par of every one of the coming dailies solved without one, each
  in the queue of its urgency now: the coming days' dailies wait behind the
  solves players wait on, and a run moves the next day's into the most urgent
  queue, ahead of them, before its day starts (see service.jobs.queue.urgency_of). Each
  run first schedules the next slot's run with RQ's scheduler under a unique
  job id, and every worker start queues the current slot's, so the chain
  survives restarts and any number of workers keeps one run per slot.
- A worker that finds every queue empty queues the pending puzzles itself
  (`SolveWorker.heartbeat`), so none waits for the next planning run while a worker
  idles: those asked for past a cap, and the past dailies a page records.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from datetime import timedelta
from types import FrameType, TracebackType
from typing import Any, cast

import redis
from rq import Queue, Worker, get_current_job
from rq.job import Job

from puzzles import GAMES, get_game
from service.config import Config
from service.domain import daily, guided
from service.jobs.bounded import BoundedCallError, run_bounded
from service.jobs.queue import (
    QUEUE_NAMES,
    Urgency,
    enqueue_par,
    enqueue_solve,
    par_job_id,
    schedule_next_plan,
    schedule_retry,
    solve_job_id,
    solve_queue,
    solve_queues,
    start_planning,
    sweep_urgency_of,
)
from service.jobs.worker_upkeep import (
    ReconnectNoticingPool,
    noticing_connection,
    redis_came_back,
    release_silent_scheduler_locks,
    retry_abandoned_job_at_once,
)
from service.storage.puzzles import PuzzleRecord

# The solver imports every game's kit, and with them OR-Tools: once, in the worker before
from service.storage.store import Store

# The solver imports every game's kit, and with them OR-Tools: once, in the worker before
# it forks, rather than in each job's process.
from solver import SolveResult, solve
from solver.expert import analyse, par, par_result

log = logging.getLogger(__name__)
# Why a worker queues the pending puzzles, when its connection to Redis is made again.
REDIS_BACK = "Redis is back"
REDIS_RETRY_SECONDS = 1.0
# A scheduler renews its lock every second, and Redis tells a lock's time to live in
# whole seconds, rounded: silent for less than this it may be alive, only busy or
# starved of a core. (At a heartbeat of a second, one second would take a live
# scheduler over every few beats, restarting it each time.)
SCHEDULER_SILENT_SECONDS = 5
# A scheduler checks for a stop request every second: this is ample.
SCHEDULER_STOP_SECONDS = 10

_stores: dict[tuple[int, str], Store] = {}


def worker_context() -> tuple[Config, Store]:
    """The settings and store of this process (a forked job process opens its own connections)."""
    config = Config.from_env()
    key = (os.getpid(), config.database_url)
    if key not in _stores:
        _stores[key] = Store.of(config)
    return config, _stores[key]


def solve_puzzle(game: str, seed: str, rules_version: str, attempt: int = 0) -> str:
    """Prove and store the optimum of a recorded puzzle; a solved one is left alone.

    attempt counts the retries made after solves that failed; one more is
    scheduled on the retry queue until RALLY_SOLVE_RETRIES were made.
    """
    config, store = worker_context()
    puzzle = recorded_puzzle(store, game, seed, rules_version)
    outcome = "already solved"
    if puzzle.status != "solved":
        current = GAMES[game].rules_version
        if current != rules_version:
            message = f"the engine plays rules {current}, not {rules_version}"
            store.puzzles.record_failure(puzzle.id, message)
            return "rules changed"
        try:
            result = run_bounded(
                solve, (game, seed), seconds=config.solve_timeout, memory_mib=config.solve_memory_mb
            )
        except BoundedCallError as failure:
            return fail_and_retry_later(store, config, puzzle, attempt, failure)
        if store_solution(store, puzzle.id, result):
            outcome = "solved"
    return f"{outcome}; {follow_with_par(store, config, puzzle)}"


def recorded_puzzle(store: Store, game: str, seed: str, rules_version: str) -> PuzzleRecord:
    puzzle = store.puzzles.get(game, seed, rules_version)
    if puzzle is None:
        # The seed is not named: it may be a coming daily's, which no log line may show.
        raise LookupError(f"no puzzle of {game} under rules {rules_version} has this seed")
    return puzzle


def follow_with_par(store: Store, config: Config, puzzle: PuzzleRecord) -> str:
    """After a solve: the par of a puzzle the planning prepares ahead (today's or a coming
    daily, a guided first game's) computed now, within its solve job, so that it is ready
    when its day starts, or when a new player first plays. Any other puzzle's is queued: a practice
    seed's or an asked-for past daily's behind every solve, a past daily's solved by the
    backfill behind the backfill's other solves (a fresh install's archive shows every
    optimum first; a par costs several solves)."""
    if puzzle.has_par:
        return "par known"
    if prepared_ahead(puzzle):
        return compute_par(store, config, puzzle)
    key = (puzzle.game, puzzle.seed, puzzle.rules_version)
    urgency = Urgency.BACKFILL if _running_from(Urgency.BACKFILL) else Urgency.PAR
    with redis.Redis.from_url(config.redis_url) as connection:
        return "par queued" if enqueue_par(connection, config, key, urgency) else "par waits"


def prepared_ahead(puzzle: PuzzleRecord) -> bool:
    """Whether puzzle is one the planning prepares before anyone asks: today's or a coming
    daily, or a guided first game's."""
    if guided.is_guided(puzzle):
        return True
    return puzzle.daily_date is not None and puzzle.daily_date >= daily.today()


def _running_from(urgency: Urgency) -> bool:
    """Whether the job running here was taken from urgency's queue."""
    job = get_current_job()
    return job is not None and job.origin == QUEUE_NAMES[urgency]


def compute_par(store: Store, config: Config, puzzle: PuzzleRecord) -> str:
    """Play the expert on the puzzle (bounded like a solve), check its run by replaying it
    through the engine, and store it as the puzzle's par; a failure leaves the par null
    for a later job."""
    try:
        found = run_bounded(
            par,
            (puzzle.game, puzzle.seed),
            seconds=config.par_timeout,
            memory_mib=config.solve_memory_mb,
        )
        checked_par(puzzle, found)
    except (BoundedCallError, ParMismatchError) as failure:
        # Named by its job id, not its seed: the puzzle may be a coming daily.
        job_id = par_job_id(puzzle.game, puzzle.seed, puzzle.rules_version)
        log.warning("%s failed (%s)", job_id, failure)
        return f"par failed: {failure}"
    store.puzzles.record_par(
        puzzle.id,
        par=found["par"],
        tiebreak=found["par_tiebreak"],
        line=found["actions"],
        seconds=found["seconds"],
    )
    return f"par {found['par']}"


class ParMismatchError(RuntimeError):
    """The expert's run does not replay to the par it claims."""


def checked_par(puzzle: PuzzleRecord, found: Mapping[str, Any]) -> None:
    """Raise ParMismatchError unless the par run replays to exactly its claimed result."""
    engine = get_game(puzzle.game)
    final = engine.replay(puzzle.seed, found["actions"])
    reached = par_result(engine, final)
    if not engine.is_over(final) or reached != (found["par"], found["par_tiebreak"]):
        raise ParMismatchError(
            f"the par run replays to {reached}, not {found['par'], found['par_tiebreak']}"
        )


def par_puzzle(game: str, seed: str, rules_version: str) -> str:
    """Compute and store the par of a recorded puzzle (a practice seed's, queued behind the
    solves); one with a par, or of older rules than the engine's, is left alone."""
    config, store = worker_context()
    puzzle = recorded_puzzle(store, game, seed, rules_version)
    if puzzle.has_par:
        return "par known"
    if GAMES[game].rules_version != rules_version:
        return "rules changed"
    return compute_par(store, config, puzzle)


def analyse_run(run_id: str) -> str:
    """Grade the decisions of a run whose analysis is pending and store the analysis, or
    the reason it failed (over its time or memory bound); a settled one is left alone."""
    config, store = worker_context()
    record = store.analyses.get(run_id)
    if record is None or record.status != "pending":
        return "already analysed"
    run = store.runs.get(run_id)
    assert run is not None, "an analysis keeps its run by a foreign key"
    puzzle = store.puzzles.by_id(run.puzzle_id)
    assert puzzle is not None, "a run keeps its puzzle by a foreign key"
    current = GAMES[puzzle.game].rules_version
    if puzzle.rules_version != current:
        store.analyses.record_failure(
            run_id, f"the expert plays rules {current}, not {puzzle.rules_version}"
        )
        return "rules changed"
    # The stored optimum spares the analysis a solve of its own.
    optimum = (puzzle.optimum, puzzle.tiebreak) if puzzle.status == "solved" else None
    started = time.perf_counter()
    try:
        analysis = run_bounded(
            analyse,
            (puzzle.game, puzzle.seed, run.actions, record.rng_seed, optimum),
            seconds=config.analysis_timeout,
            memory_mib=config.solve_memory_mb,
        )
    except BoundedCallError as failure:
        store.analyses.record_failure(run_id, f"analysing failed: {failure}")
        return f"failed: {failure}"
    store.analyses.record(run_id, analysis, seconds=round(time.perf_counter() - started, 3))
    return "analysed"


def fail_and_retry_later(
    store: Store, config: Config, puzzle: PuzzleRecord, attempt: int, failure: Exception
) -> str:
    """Mark the puzzle failed with the reason and schedule its next retry, if one is left."""
    if not store.puzzles.record_failure(puzzle.id, f"solving failed: {failure}"):
        return "already solved"  # by another job meanwhile
    with redis.Redis.from_url(config.redis_url) as connection:
        retried = schedule_retry(
            connection, config, (puzzle.game, puzzle.seed, puzzle.rules_version), attempt + 1
        )
    # Named by its job id, not its seed: the puzzle may be a coming daily.
    job_id = solve_job_id(puzzle.game, puzzle.seed, puzzle.rules_version, attempt)
    log.warning("%s failed (%s)%s", job_id, failure, ", to be retried later" if retried else "")
    return f"failed: {failure}"


def store_solution(store: Store, puzzle_id: int, result: SolveResult) -> bool:
    """Store a solver's answer for the puzzle; False if it was solved already."""
    return store.puzzles.record_solution(
        puzzle_id,
        optimum=result.optimum,
        tiebreak=result.tiebreak,
        witness=result.actions,
        proved=result.proved,
        solve_seconds=result.seconds,
    )


def record_solve_failure(
    job: Job,
    _connection: redis.Redis,
    exc_type: type[BaseException],
    exc_value: BaseException,
    _traceback: TracebackType | list[Any] | None,
) -> None:
    """RQ's failure callback: once no retry is left, mark the puzzle failed with the reason.

    Also called when a dead worker's job is found abandoned. It must not raise:
    an error here would stop RQ's clean-up of the other abandoned jobs.
    """
    if job.retries_left:
        return
    game, seed, rules_version = job.args
    try:
        _config, store = worker_context()
        puzzle = store.puzzles.get(game, seed, rules_version)
        if puzzle is not None:
            store.puzzles.record_failure(puzzle.id, f"{exc_type.__name__}: {exc_value}")
    except Exception:
        log.exception("could not record the failure of job %s", job.id)


def queue_solving(
    connection: redis.Redis,
    config: Config,
    puzzles: Iterable[PuzzleRecord],
    urgency: Urgency | None = None,
) -> int:
    """Queue the solving of each puzzle of a known game, in the given urgency's queue or
    else the one a sweep puts it in; the number newly queued or moved ahead."""
    queued = 0
    for puzzle in puzzles:
        if puzzle.game not in GAMES:
            continue
        own = sweep_urgency_of(puzzle, config) if urgency is None else urgency
        queue = solve_queue(connection, own)
        queued += enqueue_solve(queue, config, puzzle.game, puzzle.seed, puzzle.rules_version)
    return queued


def queue_missing_pars(
    connection: redis.Redis, config: Config, prepared: Iterable[PuzzleRecord]
) -> int:
    """Queue the par of each solved puzzle prepared ahead (a coming daily, a guided first
    game's) that has none (solved before pars were, or its par failed), in the queue of its
    urgency now: ahead of the analyses, so that it is ready when its day starts. The number
    queued."""
    queued = 0
    for puzzle in prepared:
        if puzzle.status == "solved" and not puzzle.has_par and puzzle.game in GAMES:
            key = (puzzle.game, puzzle.seed, puzzle.rules_version)
            queued += enqueue_par(connection, config, key, sweep_urgency_of(puzzle, config))
    return queued


def sweep_pending(store: Store, config: Config, connection: redis.Redis) -> int:
    """Queue every pending puzzle (those asked for while Redis was down, and those that
    waited out the caps, among them) in the queue of its urgency now, moving a coming
    daily whose day came near ahead of the solves players wait on; a past daily goes to
    the backfill (service.jobs.queue.sweep_urgency_of)."""
    return queue_solving(connection, config, store.puzzles.pending())


def record_past_dailies(store: Store, config: Config) -> int:
    """Record every daily of the archive's days (config.archive_days back from yesterday,
    at most to the first day) that is not recorded yet (under any rules version), as
    pending; the number recorded."""
    today = daily.today()
    first = daily.FIRST_DAY
    if config.archive_days is not None:
        first = max(first, today - timedelta(days=config.archive_days))
    recorded = store.puzzles.recorded_dailies()
    missing = [
        (game, day)
        for day in daily.days_between(first, today)
        for game in sorted(GAMES)
        if (game, day) not in recorded
    ]
    for game, day in missing:
        daily.ensure_daily(store, config.daily_key, game, day)
    return len(missing)


def plan_dailies() -> int:
    """Record the coming days' dailies and the guided first games' puzzles, and queue every
    pending puzzle; the number queued.

    A coming daily or guided puzzle whose solving failed is queued again too, on the retry
    queue (say after a release fixed its solver): a day must not start without its
    optimum, yet a solve that failed must not hold up the others.
    """
    config, store = worker_context()
    job = get_current_job()
    assert job is not None, "plan_dailies runs as a job"
    connection = job.connection
    queue = solve_queue(connection)
    schedule_next_plan(queue, config)  # first: a failure below keeps the chain
    prepared = [
        puzzle
        for day in daily.upcoming_days(daily.today(), config.days_ahead)
        for puzzle in daily.ensure_dailies(store, config.daily_key, day)
    ] + guided.ensure_guided_puzzles(store)
    failed = [puzzle for puzzle in prepared if puzzle.status == "failed"]
    retried = queue_solving(connection, config, failed, Urgency.RETRY)
    record_past_dailies(store, config)
    return (
        retried
        + sweep_pending(store, config, connection)
        + queue_missing_pars(connection, config, prepared)
    )


class SolveWorker(Worker):
    """RQ's forking worker with its dead-worker detection scaled to RALLY_HEARTBEAT.

    RQ counts a job as abandoned 60 s after its last heartbeat; here it is two
    heartbeats, so a killed worker's job is retried promptly: at once, and logged
    (service.jobs.worker_upkeep). A scheduler silent for a heartbeat is taken over: the
    retries of failed solves and the next planning run wait for one. Once Redis is
    back after this worker lost it, every pending puzzle is queued: those asked
    for meanwhile could not be.
    """

    def __init__(self, queues: Sequence[Queue], *, heartbeat: int, **kwargs: Any) -> None:
        super().__init__(
            queues,
            job_monitoring_interval=heartbeat,
            worker_ttl=heartbeat + 15,  # RQ listens for worker_ttl - 15 s between chores
            maintenance_interval=heartbeat,
            exception_handlers=[retry_abandoned_job_at_once],
            **kwargs,
        )
        self.heartbeat_grace = 2 * heartbeat
        # RQ waits up to 60 s between attempts to reach a lost Redis: here one heartbeat.
        self.max_connection_wait_time = float(heartbeat)
        self.stop_requested = False

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        """RQ's heartbeat, which an idle worker beats between its waits for a job. It queues
        the pending puzzles once its connection to Redis is made again (those asked for
        while Redis was down were recorded but could not be queued), and whenever every
        queue is empty, so that no worker sits idle beside a puzzle that waits."""
        super().heartbeat(timeout, pipeline)
        if pipeline is not None:
            return
        if redis_came_back(self.connection):
            self.queue_pending_puzzles(REDIS_BACK)
        elif not any(queue.count for queue in self.queues):
            self.queue_pending_puzzles("every queue is empty")

    def queue_pending_puzzles(self, why: str) -> None:
        """Queue every pending puzzle; on failure, try again at the next heartbeat."""
        try:
            config, store = worker_context()
            if not store.puzzles.pending(limit=1):
                return
            queued = sweep_pending(store, config, self.connection)
        except Exception:  # the worker goes on: its jobs matter more than this sweep
            log.exception("%s, but the pending puzzles could not be queued", why)
            if why == REDIS_BACK:
                cast(ReconnectNoticingPool, self.connection.connection_pool).reconnected.set()
            return
        log.info("%s: queued %d pending puzzles", why, queued)

    def run_maintenance_tasks(self) -> None:
        """RQ's upkeep, after releasing the locks of dead schedulers; RQ then starts the
        scheduler here with every lock it can take."""
        if self.scheduler is not None:
            names = self.queue_names()
            silent = max(self.job_monitoring_interval, SCHEDULER_SILENT_SECONDS)
            if release_silent_scheduler_locks(self.connection, names, silent):
                # A scheduler running here holds only some queues' locks, and would take
                # the others only minutes later: stopped, it is started again below.
                self.stop_scheduler()
        running = self.runs_scheduler()
        super().run_maintenance_tasks()  # type: ignore[no-untyped-call]  # RQ's is unannotated
        if not running and self.runs_scheduler():
            log.info("worker %s runs RQ's scheduler now", self.name)

    def runs_scheduler(self) -> bool:
        # RQ's scheduler keeps its process in a private attribute (tests/test_rq_contract.py).
        process = self.scheduler._process if self.scheduler is not None else None
        return process is not None and process.is_alive()

    def stop_scheduler(self) -> None:
        """RQ's stop of the scheduler process (SIGTERM, then join), bounded: a scheduler
        forked while another thread held a lock it needs (logging's, say) never gets to its
        loop, and RQ would wait on it for good, holding the worker (its upkeep or its
        exit). Still running after SCHEDULER_STOP_SECONDS, it is killed."""
        process = self.scheduler._process if self.scheduler is not None else None
        if process is None or process.pid is None:
            return
        with suppress(OSError):
            os.kill(process.pid, signal.SIGTERM)
        process.join(SCHEDULER_STOP_SECONDS)
        if process.is_alive():
            log.warning(
                "RQ's scheduler (pid %d) did not stop within %d s: killed",
                process.pid, SCHEDULER_STOP_SECONDS,
            )  # fmt: skip
            process.kill()
            process.join()

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop_requested = True
        # An idle RQ worker stops by raising StopRequested out of this signal handler, which
        # is lost when the signal lands in a log write (logging reports and swallows what a
        # write raises): the worker then ran on for good. RQ's own flag ends its loop at the
        # next turn all the same (a private flag: tests/test_rq_contract.py).
        self._stop_requested = True
        super().request_stop(signum, frame)  # type: ignore[no-untyped-call]  # RQ's is unannotated

    def get_heartbeat_ttl(self, job: Job) -> int:
        if job.timeout and job.timeout > 0:
            remaining = job.timeout - self.current_job_working_time
            return int(min(remaining, self.job_monitoring_interval)) + self.heartbeat_grace
        return int(self.job_monitoring_interval) + self.heartbeat_grace


def wait_for_redis(connection: redis.Redis) -> None:
    """Return once Redis answers; SIGTERM or Ctrl-C ends the wait (and the process)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    while True:
        try:
            connection.ping()
            return
        except redis.RedisError as error:
            log.warning("waiting for Redis: %s", error)
            time.sleep(REDIS_RETRY_SECONDS)


def run_worker(config: Config) -> None:
    """Work the solve queues, most urgent first, and run RQ's scheduler until stopped.

    RQ's worker quits when Redis goes away in the middle of a job; here a new
    worker takes over as soon as Redis is back, so queued work resumes by itself.
    """
    connection = noticing_connection(config.redis_url)
    while True:
        wait_for_redis(connection)
        worker = SolveWorker(
            solve_queues(connection), connection=connection, heartbeat=config.heartbeat
        )
        try:
            start_planning(solve_queue(connection), config)
            worker.work(with_scheduler=True, logging_level="INFO")
        except redis.RedisError as error:
            log.warning("worker lost Redis: %s", error)
        if worker.stop_requested:
            return
