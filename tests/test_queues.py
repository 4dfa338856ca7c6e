"""The solve queues: the order of urgency, the caps on the solves players cause, and solves
bounded in time and memory that fail cleanly and are retried later at low priority."""

from __future__ import annotations

import logging
import subprocess
import sys
from datetime import UTC, date, datetime, time, timedelta

import pytest
import redis
from flask.testing import FlaskClient
from rq.job import Job, JobStatus
from rq.registry import ScheduledJobRegistry

from puzzles import GAMES
from service.config import Config
from service.domain import daily, guided
from service.jobs import jobs
from service.jobs.bounded import BoundedCallError
from service.jobs.queue import (
    Urgency,
    enqueue_solve,
    request_solve,
    solve_job_id,
    solve_queue,
    start_planning,
)
from service.storage.puzzles import PuzzleRecord
from tests.api_support import client_of
from tests.queue_support import work_until_empty

GAME = "crazy-rally"
RULES = GAMES[GAME].rules_version
# Seeds whose proofs take a few seconds (Crazy Rally: about 3 s of CPU under cr-2) and
# about 90 MiB more than a worker holds (Rallye Raser: the hungriest of 1,000 seeds under
# rr-3): well over a bound of 1 s or of 1 MiB, even where the job finds freed heap to reuse.
SLOW_SEEDS = {"crazy-rally": "quality-127", "rallye-raser": "quality-545"}


@pytest.fixture
def pars_bounded_to_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """A par given a second, for the tests of the order in which a worker takes its jobs:
    each solve job of today's dailies and the guided games plays the expert's whole game
    for its par (2 s of CPU for Crazy Rally, 4-5 s for Rallye Raser), and the solves of
    practice seeds are followed by par jobs, which those tests do not read. A par not found
    within its bound is left for a later job, so the order of the jobs is the same."""
    monkeypatch.setenv("RALLY_PAR_TIMEOUT", "1")


def queued(connection: redis.Redis, urgency: Urgency) -> list[str]:
    return solve_queue(connection, urgency).job_ids


def ask_for(client: FlaskClient, seed: str):
    return client.post(f"/api/v1/puzzles/{GAME}/{seed}", json={})


def job_ids_of(puzzles: list[PuzzleRecord]) -> list[str]:
    return [solve_job_id(puzzle.game, puzzle.seed, puzzle.rules_version) for puzzle in puzzles]


def noon_of(day: date) -> datetime:
    return datetime.combine(day, time(12), UTC)


def assert_retry_after(answer, status: int) -> None:
    assert answer.status_code == status
    assert answer.is_json
    assert answer.get_json()["retry_after"] == int(answer.headers["Retry-After"]) > 0


# Urgency


def test_each_puzzle_is_queued_by_its_urgency(connection, service_env, job_store, clock):
    today = date(2027, 3, 10)
    clock.set(noon_of(today))
    days = {
        "today": today,
        "tomorrow": today + timedelta(days=1),
        "practice": None,
        "yesterday": today - timedelta(days=1),
    }
    for seed, day in days.items():
        job_store.puzzles.ensure(GAME, seed, RULES, daily_date=day)
        assert request_solve(GAME, seed, service_env, daily_date=day)
    assert queued(connection, Urgency.TODAY) == [solve_job_id(GAME, "today", RULES)]
    assert queued(connection, Urgency.PRACTICE) == [solve_job_id(GAME, "practice", RULES)]
    assert queued(connection, Urgency.ARCHIVE) == [solve_job_id(GAME, "yesterday", RULES)]
    assert queued(connection, Urgency.COMING) == [solve_job_id(GAME, "tomorrow", RULES)]


@pytest.mark.processes
def test_workers_take_the_most_urgent_job_first(connection, service_env, job_store):
    """Queued least urgent first, run most urgent first. (Puzzles of older rules: each job
    ends at once, marking its puzzle failed, so only the order is measured.)"""
    old_rules = "older-rules"
    job_ids = {}
    for urgency in reversed(Urgency):
        seed = f"order-{urgency.name.lower()}"
        job_store.puzzles.ensure(GAME, seed, old_rules)
        enqueue_solve(solve_queue(connection, urgency), service_env, GAME, seed, old_rules)
        job_ids[urgency] = solve_job_id(GAME, seed, old_rules)
    work_until_empty(connection)
    ended = {
        urgency: Job.fetch(job_id, connection=connection).ended_at
        for urgency, job_id in job_ids.items()
    }
    assert sorted(Urgency, key=ended.__getitem__) == [
        Urgency.TODAY,
        Urgency.PRACTICE,
        Urgency.ARCHIVE,
        Urgency.COMING,
        Urgency.RETRY,
        Urgency.ANALYSIS,
        Urgency.PAR,
        Urgency.BACKFILL,
    ]


@pytest.mark.processes
def test_a_practice_seed_asked_after_the_week_was_planned_is_solved_before_the_coming_days(
    connection, service_env, job_store, clock, pars_bounded_to_a_second
):
    """Today's dailies and the guided first games first, then the practice seed; the
    coming days' dailies wait."""
    today = date(2027, 3, 10)
    clock.set(noon_of(today))
    start_planning(solve_queue(connection), service_env)
    work_until_empty(connection, max_jobs=1)
    job_store.puzzles.ensure(GAME, "practice-after-planning", RULES)
    assert request_solve(GAME, "practice-after-planning", service_env, daily_date=None)
    todays = job_ids_of(job_store.puzzles.dailies(today) + guided.ensure_guided_puzzles(job_store))
    coming_days = daily.upcoming_days(today, service_env.days_ahead)[1:]
    coming = job_ids_of([p for day in coming_days for p in job_store.puzzles.dailies(day)])
    assert len(coming) == len(coming_days) * len(GAMES)

    work_until_empty(connection, max_jobs=len(todays) + 1)
    practice = Job.fetch(
        solve_job_id(GAME, "practice-after-planning", RULES), connection=connection
    )
    assert practice.get_status() == JobStatus.FINISHED
    assert job_store.puzzles.get(GAME, "practice-after-planning", RULES).status == "solved"
    assert all(
        Job.fetch(job_id, connection=connection).ended_at <= practice.started_at
        for job_id in todays
    )
    assert queued(connection, Urgency.COMING) == coming  # none taken yet, in order of days


@pytest.mark.parametrize(
    ("hours_before_its_day", "moved"), [(2.5, False), (1.5, True), (-0.1, True)]
)
def test_a_coming_daily_moves_ahead_of_the_practice_seeds_as_its_day_nears(
    hours_before_its_day, moved, connection, service_env, job_store, clock
):
    """The planning's sweep, two planning intervals (two hours) before a day starts and
    after it started (a backlog at midnight), moves that day's dailies to the front queue."""
    today = date(2027, 3, 10)
    tomorrow = today + timedelta(days=1)
    clock.set(noon_of(today))
    for day in daily.upcoming_days(today, days_ahead=2):
        daily.ensure_dailies(job_store, service_env.daily_key, day)
    jobs.sweep_pending(job_store, service_env, connection)
    job_store.puzzles.ensure(GAME, "practice", RULES)
    request_solve(GAME, "practice", service_env, daily_date=None)
    todays, tomorrows, afterwards = (
        job_ids_of(job_store.puzzles.dailies(day)) for day in daily.upcoming_days(today, 2)
    )

    day_start = datetime.combine(tomorrow, time.min, UTC)
    clock.set(day_start - timedelta(hours=hours_before_its_day))
    assert jobs.sweep_pending(job_store, service_env, connection) == (len(GAMES) if moved else 0)
    if moved:
        assert queued(connection, Urgency.TODAY) == todays + tomorrows
        assert queued(connection, Urgency.COMING) == afterwards
        assert {Job.fetch(job_id, connection=connection).origin for job_id in tomorrows} == {
            "solve"
        }  # fmt: skip
    else:
        assert queued(connection, Urgency.TODAY) == todays
        assert queued(connection, Urgency.COMING) == tomorrows + afterwards
    assert queued(connection, Urgency.PRACTICE) == [solve_job_id(GAME, "practice", RULES)]


# Caps on the solves players cause


def test_a_new_seed_over_the_total_cap_gets_503_and_records_nothing(make_app):
    app = make_app(RALLY_MAX_PENDING_SOLVES="2")
    store = app.extensions["rally"].store
    assert [ask_for(client_of(app), f"total-{n}").status_code for n in range(2)] == [202, 202]
    refused = ask_for(client_of(app), "total-2")
    assert_retry_after(refused, 503)
    assert "busy" in refused.get_json()["error"]
    assert store.puzzles.get(GAME, "total-2", RULES) is None
    assert ask_for(client_of(app), "total-0").status_code == 200  # a known seed is served


def test_a_seed_refused_for_a_full_queue_spends_none_of_the_clients_budget(make_app, connection):
    app = make_app(RALLY_MAX_PENDING_SOLVES="1", RALLY_NEW_SEEDS_PER_HOUR="1")
    assert ask_for(client_of(app), "fills-it").status_code == 202
    client = client_of(app)
    assert ask_for(client, "refused-first").status_code == 503
    solve_queue(connection, Urgency.PRACTICE).empty()  # as a worker taking the waiting solve
    assert ask_for(client, "refused-first").status_code == 202


def test_one_client_may_have_only_so_many_solves_waiting(make_app, connection):
    app = make_app(RALLY_MAX_PENDING_SOLVES_PER_CLIENT="2")
    client = client_of(app)
    assert [ask_for(client, f"mine-{n}").status_code for n in range(2)] == [202, 202]
    assert_retry_after(ask_for(client, "mine-2"), 429)
    assert app.extensions["rally"].store.puzzles.get(GAME, "mine-2", RULES) is None
    assert ask_for(client_of(app), "theirs").status_code == 202
    assert len(queued(connection, Urgency.PRACTICE)) == 3


@pytest.mark.processes
def test_a_client_may_ask_again_once_a_solve_of_theirs_ended(make_app, service_env, connection):
    app = make_app(database=service_env.database_url, RALLY_MAX_PENDING_SOLVES_PER_CLIENT="1")
    client = client_of(app)
    assert ask_for(client, "cap-b").status_code == 202
    assert ask_for(client, "cap-a").status_code == 429
    work_until_empty(connection)
    known = ask_for(client, "cap-b")
    assert (known.status_code, known.get_json()["status"]) == (200, "solved")
    assert ask_for(client, "cap-a").status_code == 202


def test_a_get_of_a_day_queues_nothing_and_the_sweep_queues_its_dailies_past_any_cap(
    make_app, connection, service_env
):
    """Reading a day records its dailies (one per game, derived from the key) and queues
    no work; the planning run's sweep queues them, today's first and the past day's on
    the backfill queue, whatever the caps on the solves players cause."""
    app = make_app(
        database=service_env.database_url,
        RALLY_MAX_PENDING_SOLVES="1",
        RALLY_MAX_PENDING_SOLVES_PER_CLIENT="1",
    )
    store = app.extensions["rally"].store
    client = client_of(app)
    assert ask_for(client, "fills-the-queue").status_code == 202
    past = daily.today() - timedelta(days=2)
    for day in (daily.today(), past):
        shown = client.get(f"/api/v1/daily/{day}")
        assert shown.status_code == 200
        assert {puzzle["status"] for puzzle in shown.get_json()["puzzles"]} == {"pending"}
    assert queued(connection, Urgency.TODAY) == queued(connection, Urgency.ARCHIVE) == []
    jobs.sweep_pending(store, service_env, connection)
    for urgency, day in ((Urgency.TODAY, daily.today()), (Urgency.BACKFILL, past)):
        assert sorted(queued(connection, urgency)) == sorted(job_ids_of(store.puzzles.dailies(day)))


# Bounded solves


def assert_retry_scheduled(connection, game: str, seed: str, within: timedelta) -> None:
    """The first retry of the puzzle waits on the retry queue, due within the given time."""
    retry_id = solve_job_id(game, seed, GAMES[game].rules_version, attempt=1)
    scheduled = ScheduledJobRegistry(queue=solve_queue(connection, Urgency.RETRY))
    assert scheduled.get_job_ids() == [retry_id]
    wait = scheduled.get_scheduled_time(retry_id) - datetime.now(UTC)
    assert within - timedelta(seconds=10) < wait <= within
    assert Job.fetch(retry_id, connection=connection).kwargs == {"attempt": 1}


@pytest.mark.processes
def test_a_solve_over_its_time_bound_fails_and_is_retried_later_at_low_priority(
    connection, job_store, monkeypatch
):
    monkeypatch.setenv("RALLY_SOLVE_TIMEOUT", "1")
    monkeypatch.setenv("RALLY_RETRY_DELAY", "60")
    puzzle = job_store.puzzles.ensure(GAME, SLOW_SEEDS[GAME], RULES)
    enqueue_solve(
        solve_queue(connection, Urgency.PRACTICE), Config.from_env(), GAME, puzzle.seed, RULES
    )
    work_until_empty(connection)
    job = Job.fetch(solve_job_id(GAME, puzzle.seed, RULES), connection=connection)
    assert job.ended_at - job.started_at < timedelta(seconds=2.5)  # unbounded: about 3 s
    failed = job_store.puzzles.by_id(puzzle.id)
    assert failed.status == "failed"
    assert "time bound of 1 s" in failed.error
    assert_retry_scheduled(connection, GAME, puzzle.seed, timedelta(seconds=60))


# A worker process as `rally worker` has it: the solvers loaded (the kits' registry imports
# them with service.jobs.jobs), nothing else on its heap.
# (Forked from this test process instead, a solve could live off the free memory that
# earlier tests left on the heap, which the bound does not count.)
FRESH_WORKER = """
import os, redis
from service.jobs import jobs
from service.jobs.queue import solve_queues
connection = redis.Redis.from_url(os.environ["REDIS_URL"])
jobs.SolveWorker(solve_queues(connection), connection=connection, heartbeat=1).work(burst=True)
"""


def work_in_a_fresh_worker_process() -> None:
    subprocess.run([sys.executable, "-c", FRESH_WORKER], check=True, timeout=300)


@pytest.mark.slow
@pytest.mark.processes
def test_a_solve_over_its_memory_bound_fails_and_is_retried_later_at_low_priority(
    connection, job_store, monkeypatch
):
    monkeypatch.setenv("RALLY_SOLVE_MEMORY_MB", "1")
    monkeypatch.setenv("RALLY_RETRY_DELAY", "60")
    game, rules = "rallye-raser", GAMES["rallye-raser"].rules_version
    puzzle = job_store.puzzles.ensure(game, SLOW_SEEDS[game], rules)
    enqueue_solve(
        solve_queue(connection, Urgency.TODAY), Config.from_env(), game, puzzle.seed, rules
    )
    work_in_a_fresh_worker_process()
    failed = job_store.puzzles.by_id(puzzle.id)
    assert failed.status == "failed"
    assert "memory bound" in failed.error
    assert_retry_scheduled(connection, game, puzzle.seed, timedelta(seconds=60))


@pytest.mark.processes
def test_a_failed_solve_is_solved_by_its_retry_after_the_more_urgent_work(
    connection, service_env, job_store, monkeypatch, pars_bounded_to_a_second
):
    monkeypatch.setenv("RALLY_SOLVE_TIMEOUT", "1")
    puzzle = job_store.puzzles.ensure(GAME, SLOW_SEEDS[GAME], RULES)
    enqueue_solve(solve_queue(connection, Urgency.PRACTICE), service_env, GAME, puzzle.seed, RULES)
    work_until_empty(connection, max_jobs=1)
    assert job_store.puzzles.by_id(puzzle.id).status == "failed"

    monkeypatch.delenv("RALLY_SOLVE_TIMEOUT")
    other = job_store.puzzles.ensure(GAME, "cap-b", RULES)
    enqueue_solve(solve_queue(connection, Urgency.ARCHIVE), service_env, GAME, other.seed, RULES)
    work_until_empty(connection)  # RQ's scheduler queues the due retry; the archive goes first
    solved = job_store.puzzles.by_id(puzzle.id)
    assert (solved.status, solved.error) == ("solved", None)
    retry = Job.fetch(solve_job_id(GAME, puzzle.seed, RULES, attempt=1), connection=connection)
    archive = Job.fetch(solve_job_id(GAME, other.seed, RULES), connection=connection)
    assert retry.origin == "solve-retry"
    assert archive.ended_at <= retry.started_at


def test_no_job_id_description_or_log_line_names_a_coming_dailys_seed(
    connection, service_env, job_store, caplog, clock
):
    caplog.set_level(logging.DEBUG)
    clock.set(noon_of(date(2027, 3, 10)))
    tomorrow = daily.today() + timedelta(days=1)
    puzzle = daily.ensure_daily(job_store, service_env.daily_key, GAME, tomorrow)
    assert request_solve(GAME, puzzle.seed, service_env, daily_date=tomorrow)
    jobs.fail_and_retry_later(
        job_store, service_env, puzzle, 0, BoundedCallError("no answer within the time bound")
    )
    retries = ScheduledJobRegistry(queue=solve_queue(connection, Urgency.RETRY)).get_job_ids()
    job_ids = [*queued(connection, Urgency.COMING), *retries]
    assert job_ids == [solve_job_id(GAME, puzzle.seed, RULES, attempt) for attempt in (0, 1)]
    assert "to be retried later" in caplog.text
    descriptions = [Job.fetch(job_id, connection=connection).description for job_id in job_ids]
    for text in [caplog.text, *job_ids, *descriptions]:
        assert puzzle.seed not in text
        assert puzzle.seed.split("-")[1] not in text
