"""Queued work on the local Redis: unique jobs, the planning chain, failures and solving."""

from __future__ import annotations

import io
import logging
import os
import signal
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest
import redis
from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry

from puzzles import GAMES
from service.config import Config
from service.domain import daily, guided
from service.jobs import jobs
from service.jobs.queue import (
    JOB_TIMEOUT_MARGIN,
    Urgency,
    enqueue_solve,
    plan_job_id,
    plan_slot,
    request_solve,
    schedule_next_plan,
    solve_job_id,
    solve_queue,
    solve_queues,
    start_planning,
)
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from tests.queue_support import work_until_empty


class SignalOnWrite(io.StringIO):
    """A log stream that sends this process SIGTERM while it writes the first line holding
    `text`, as a signal arriving in the middle of a log write does."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text, self.sent = text, False

    def write(self, line: str) -> int:
        if self.text in line and not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGTERM)
        return super().write(line)


def test_a_stop_signal_landing_in_a_log_write_still_stops_the_worker(
    connection: redis.Redis, queue: Queue, service_env: Config
):
    """RQ stops an idle worker by raising out of its signal handler; in a log write logging
    swallows that, and the worker ran on for good. It stops before taking more work."""
    assert enqueue_solve(queue, service_env, "crazy-rally", "stopped-before", "v1")
    stream = SignalOnWrite("cleaning registries")
    handler = logging.StreamHandler(stream)
    rq_log = logging.getLogger("rq.worker")
    rq_log.addHandler(handler)
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    worker = jobs.SolveWorker(solve_queues(connection), connection=connection, heartbeat=1)
    try:
        worker.work(burst=True, logging_level="INFO")
    finally:
        rq_log.removeHandler(handler)
        for number, previous in handlers.items():
            signal.signal(number, previous)
    assert stream.sent, "the worker wrote no line to interrupt"
    assert queue.job_ids == [solve_job_id("crazy-rally", "stopped-before", "v1")]


def test_the_same_solve_is_queued_once(queue: Queue, service_env: Config):
    assert enqueue_solve(queue, service_env, "crazy-rally", "s1", "v1")
    assert not enqueue_solve(queue, service_env, "crazy-rally", "s1", "v1")
    assert queue.job_ids == [solve_job_id("crazy-rally", "s1", "v1")]
    job = queue.fetch_job(queue.job_ids[0])
    # A daily's par is computed in its solve job, after the solve.
    assert job.timeout == service_env.solve_timeout + service_env.par_timeout + JOB_TIMEOUT_MARGIN
    assert job.retries_left == 1


def test_a_solve_request_without_redis_returns_false_at_once(instance_path):
    config = Config.from_env(
        {"RALLY_INSTANCE_PATH": str(instance_path), "REDIS_URL": "redis://127.0.0.1:1/0"}
    )
    started = datetime.now(UTC)
    assert request_solve(sorted(GAMES)[0], "s1", config, daily_date=None) is False
    assert datetime.now(UTC) - started < timedelta(seconds=5)


@pytest.mark.processes
def test_planning_runs_once_per_slot_and_schedules_the_next(queue, connection, service_env):
    assert start_planning(queue, service_env)
    assert not start_planning(queue, service_env)  # a second worker starting: no second run
    work_until_empty(connection, max_jobs=1)
    now = datetime.now(UTC)
    this_slot = plan_slot(now, service_env.plan_interval)
    next_slot = plan_slot(
        now + timedelta(seconds=service_env.plan_interval), service_env.plan_interval
    )
    assert Job.fetch(plan_job_id(this_slot), connection=connection).get_status() == "finished"
    scheduled = ScheduledJobRegistry(queue=queue).get_job_ids()
    assert scheduled == [plan_job_id(next_slot)]
    assert not schedule_next_plan(queue, service_env)


@pytest.mark.processes
def test_planning_records_the_coming_dailies_and_queues_them(
    queue, connection, service_env, job_store: Store, clock
):
    clock.set(datetime(2027, 3, 10, 12, tzinfo=UTC))
    today = date(2027, 3, 10)
    failed_today = daily.ensure_dailies(job_store, service_env.daily_key, today)[0]
    job_store.puzzles.record_failure(failed_today.id, "the solver of an older release failed")
    start_planning(queue, service_env)
    work_until_empty(connection, max_jobs=1)
    days = daily.upcoming_days(today, service_env.days_ahead)
    recorded = {day: job_store.puzzles.dailies(day) for day in days}
    assert sum(map(len, recorded.values())) == len(days) * len(GAMES)
    job_ids = {
        puzzle.id: solve_job_id(puzzle.game, puzzle.seed, puzzle.rules_version)
        for puzzles in recorded.values()
        for puzzle in puzzles
    }
    # The failed one is tried again behind everything else; today's other one comes first,
    # with the guided first games' puzzles (a new player's first game shows its optimum at
    # once); the coming days' wait behind the solves players wait on.
    assert solve_queue(connection, Urgency.RETRY).job_ids == [job_ids.pop(failed_today.id)]
    guided_puzzles = [
        job_store.puzzles.get(game, guided.GUIDED_SEED, GAMES[game].rules_version)
        for game in sorted(GAMES)
    ]
    assert queue.job_ids == [job_ids[puzzle.id] for puzzle in recorded[today][1:]] + job_ids_of(
        guided_puzzles
    )
    assert solve_queue(connection, Urgency.COMING).job_ids == [
        job_ids[puzzle.id] for day in days[1:] for puzzle in recorded[day]
    ]
    # Every past daily from the first day on is recorded and waits behind everything else.
    past = daily.days_between(daily.FIRST_DAY, today)
    backfill = [puzzle for day in past for puzzle in job_store.puzzles.dailies(day)]
    assert len(backfill) == len(past) * len(GAMES)
    assert solve_queue(connection, Urgency.BACKFILL).job_ids == job_ids_of(
        sorted(backfill, key=lambda puzzle: puzzle.id)
    )


def test_the_archive_days_setting_bounds_the_past_dailies_recorded(
    job_store: Store, service_env: Config
):
    config = replace(service_env, archive_days=3)
    today = daily.today()
    assert jobs.record_past_dailies(job_store, config) == 3 * len(GAMES)
    recorded = {day for _game, day in job_store.puzzles.recorded_dailies()}
    assert recorded == {today - timedelta(days=back) for back in (1, 2, 3)}
    assert jobs.record_past_dailies(job_store, replace(service_env, archive_days=0)) == 0


@pytest.mark.processes
def test_a_waiting_job_moves_to_a_more_urgent_queue_and_runs_there(
    connection, service_env, job_store
):
    """Never to a less urgent one. (A puzzle of older rules: its job ends at once.)"""
    job_store.puzzles.ensure("crazy-rally", "moved", "older-rules")
    coming, practice, today = (
        solve_queue(connection, urgency)
        for urgency in (Urgency.COMING, Urgency.PRACTICE, Urgency.TODAY)
    )
    job_id = solve_job_id("crazy-rally", "moved", "older-rules")
    assert enqueue_solve(coming, service_env, "crazy-rally", "moved", "older-rules")
    assert enqueue_solve(practice, service_env, "crazy-rally", "moved", "older-rules")
    assert enqueue_solve(today, service_env, "crazy-rally", "moved", "older-rules")
    assert not enqueue_solve(coming, service_env, "crazy-rally", "moved", "older-rules")
    assert (coming.job_ids, practice.job_ids, today.job_ids) == ([], [], [job_id])
    work_until_empty(connection)
    job = Job.fetch(job_id, connection=connection)
    assert (job.get_status(), job.origin) == (JobStatus.FINISHED, "solve")
    assert job.return_value() == "rules changed"


def test_the_sweep_queues_puzzles_left_pending(queue, connection, service_env, job_store):
    game = sorted(GAMES)[0]
    puzzle = job_store.puzzles.ensure(game, "asked-while-redis-was-down", GAMES[game].rules_version)
    assert jobs.sweep_pending(job_store, service_env, connection) == 1
    assert jobs.sweep_pending(job_store, service_env, connection) == 0
    practice = solve_queue(connection, Urgency.PRACTICE)
    assert practice.job_ids == [solve_job_id(game, puzzle.seed, puzzle.rules_version)]


@pytest.mark.processes
def test_a_failing_solve_is_retried_then_marked_failed(queue, connection, service_env, job_store):
    puzzle = job_store.puzzles.ensure("no-such-game", "s1", "v1")
    enqueue_solve(queue, service_env, "no-such-game", "s1", "v1")
    work_until_empty(connection)
    job = Job.fetch(solve_job_id("no-such-game", "s1", "v1"), connection=connection)
    assert job.get_status() == JobStatus.FAILED
    assert job.retries_left == 0
    failed = job_store.puzzles.by_id(puzzle.id)
    assert failed.status == "failed"
    assert "KeyError" in failed.error


@pytest.mark.processes
def test_an_ended_job_does_not_block_a_puzzle_still_pending(queue, connection, service_env):
    enqueue_solve(queue, service_env, "no-such-game", "s1", "v1")
    work_until_empty(connection)
    assert enqueue_solve(queue, service_env, "no-such-game", "s1", "v1")
    assert queue.job_ids == [solve_job_id("no-such-game", "s1", "v1")]


@pytest.mark.parametrize("game_name", sorted(GAMES))
@pytest.mark.processes
def test_a_puzzle_is_solved_and_stored_exactly_once(
    game_name, queue, connection, service_env, job_store
):
    game = GAMES[game_name]
    puzzle = job_store.puzzles.ensure(game_name, "solved-once", game.rules_version)
    enqueue_solve(queue, service_env, game_name, puzzle.seed, puzzle.rules_version)
    work_until_empty(connection)
    solved = job_store.puzzles.by_id(puzzle.id)
    assert solved.status == "solved"
    again = jobs.solve_puzzle(game_name, puzzle.seed, puzzle.rules_version)
    assert again == "already solved; par known"
    assert job_store.puzzles.by_id(puzzle.id) == solved
    if solved.optimum is not None:
        final = game.replay(puzzle.seed, solved.witness)
        assert (game.score(final), game.tiebreak(final)) == (solved.optimum, solved.tiebreak)


@pytest.mark.processes
def test_the_planning_chain_runs_on_at_the_next_slot(queue, connection, service_env, clock):
    # The service's time one slot behind RQ's: the next slot it schedules is due at once.
    clock.set(datetime.now(UTC) - timedelta(seconds=service_env.plan_interval))
    start_planning(queue, service_env)
    work_until_empty(connection, max_jobs=1)
    (next_plan,) = ScheduledJobRegistry(queue=queue).get_job_ids()
    queue.empty()  # the dailies' solving is not what this test waits for
    work_until_empty(connection, max_jobs=1)  # RQ's scheduler queues the due run first
    assert Job.fetch(next_plan, connection=connection).get_status() == JobStatus.FINISHED
    assert ScheduledJobRegistry(queue=queue).get_job_ids() != [next_plan]


# Crazy Rally: solved in well under a second.
GAME = "crazy-rally"


def job_ids_of(puzzles: list[PuzzleRecord]) -> list[str]:
    return [solve_job_id(p.game, p.seed, p.rules_version) for p in puzzles]


@pytest.mark.processes
def test_an_idle_worker_queues_the_puzzles_that_wait(connection, service_env, job_store: Store):
    """Puzzles recorded but not queued (a past daily a page showed, a practice seed past
    its client's cap) are queued by the first heartbeat of a worker with nothing to do, and
    solved: none waits for the next planning run."""
    rules = GAMES[GAME].rules_version
    waiting = [
        job_store.puzzles.ensure(GAME, "idle-practice", rules),
        daily.ensure_daily(job_store, service_env.daily_key, GAME, daily.FIRST_DAY),
    ]
    queues = solve_queues(connection)
    worker = jobs.SolveWorker(queues, connection=connection, heartbeat=1)
    busy = solve_queue(connection, Urgency.COMING)
    busy.enqueue("service.jobs.jobs.plan_dailies")  # while any job waits, the worker sweeps nothing
    worker.heartbeat()
    assert not any(solve_queue(connection, u).count for u in (Urgency.PRACTICE, Urgency.BACKFILL))
    busy.empty()
    worker.heartbeat()
    assert solve_queue(connection, Urgency.PRACTICE).job_ids == job_ids_of(waiting[:1])
    assert solve_queue(connection, Urgency.BACKFILL).job_ids == job_ids_of(waiting[1:])
    work_until_empty(connection)
    assert [job_store.puzzles.by_id(p.id).status for p in waiting] == ["solved", "solved"]
