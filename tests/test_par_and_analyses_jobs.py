"""The expert's jobs: a daily's par computed by its solve job, a practice seed's queued
behind the solves, a run's analysis stored once, and analyses that never delay a solve."""

from __future__ import annotations

from datetime import date, timedelta

import jsonschema_rs
import pytest
from rq.job import Job, JobStatus

from puzzles import GAMES
from puzzles.playout import random_playout, seeded_chooser
from service.domain import daily, guided
from service.jobs import jobs
from service.jobs.queue import (
    Urgency,
    analysis_job_id,
    enqueue_solve,
    par_job_id,
    solve_job_id,
    solve_queue,
)
from service.web.api import api
from service.web.openapi import resolved
from solver.expert import par_result
from tests.api_support import client_of, finished_run
from tests.queue_support import work_until_empty
from tests.test_queues import noon_of, queued

GAME = "crazy-rally"
RULES = GAMES[GAME].rules_version
DAY = date(2027, 3, 10)
# More analyses than a worker runs in a minute, all asked for before the daily's solve.
FLOOD = 40


def test_a_practice_seeds_solve_queues_its_par_behind_every_solve(
    connection, service_env, job_store
):
    puzzle = job_store.puzzles.ensure(GAME, "practice-par", RULES)
    assert jobs.follow_with_par(job_store, service_env, puzzle) == "par queued"
    assert jobs.follow_with_par(job_store, service_env, puzzle) == "par waits"
    assert queued(connection, Urgency.PAR) == [par_job_id(GAME, puzzle.seed, RULES)]


def test_a_guided_games_solve_computes_its_par_at_once(service_env, job_store):
    """As a daily's does: a new player's first game shows its par with its optimum."""
    puzzle = next(p for p in guided.ensure_guided_puzzles(job_store) if p.game == GAME)
    found = jobs.follow_with_par(job_store, service_env, puzzle)
    stored = job_store.puzzles.by_id(puzzle.id)
    assert stored.has_par
    assert found == f"par {stored.par}"


def test_the_planning_run_queues_the_pars_its_solved_dailies_lack(
    connection, service_env, job_store, clock
):
    """Dailies solved before pars were (or whose par failed): in their daily's queue, ahead
    of every analysis."""
    clock.set(noon_of(DAY))
    todays = daily.ensure_dailies(job_store, service_env.daily_key, DAY)
    for puzzle in todays:
        job_store.puzzles.record_solution(
            puzzle.id, optimum=1, tiebreak=0, witness=[], proved=True, solve_seconds=1.0
        )
    with_par, without_par = (job_store.puzzles.by_id(puzzle.id) for puzzle in todays)
    job_store.puzzles.record_par(with_par.id, par=1, tiebreak=0, line=[], seconds=1.0)
    with_par = job_store.puzzles.by_id(with_par.id)
    assert jobs.queue_missing_pars(connection, service_env, [with_par, without_par]) == 1
    assert jobs.queue_missing_pars(connection, service_env, [with_par, without_par]) == 0
    expected = par_job_id(without_par.game, without_par.seed, without_par.rules_version)
    assert queued(connection, Urgency.TODAY) == [expected]


@pytest.mark.processes
def test_a_flood_of_analysis_requests_never_delays_a_dailys_solve(
    make_app, service_env, connection, job_store, clock
):
    """FLOOD players ask for analyses, then today's daily is queued: a worker takes the
    daily first, and the flood waits, never longer than the cap. (The daily is stored under
    older rules, so its job ends at once: only the order is measured.)"""
    clock.set(noon_of(DAY))
    app = make_app(database=service_env.database_url, RALLY_MAX_PENDING_ANALYSES=str(FLOOD))
    practice = job_store.puzzles.ensure(GAME, "flooded", RULES)
    runs = [
        job_store.runs.add(practice, f"p{n}", actions=[], score=None, tiebreak=0, finished=False)
        for n in range(FLOOD + 1)
    ]
    asked = [client_of(app).get(f"/api/v1/runs/{run.id}/analysis").status_code for run in runs]
    assert asked == [202] * FLOOD + [503]
    todays = job_store.puzzles.ensure(GAME, "todays", "older-rules", daily_date=DAY)
    enqueue_solve(solve_queue(connection), service_env, GAME, todays.seed, todays.rules_version)
    work_until_empty(connection, max_jobs=1)
    solve = Job.fetch(solve_job_id(GAME, todays.seed, "older-rules"), connection=connection)
    assert solve.get_status() == JobStatus.FINISHED
    assert queued(connection, Urgency.ANALYSIS) == [analysis_job_id(run.id) for run in runs[:FLOOD]]


@pytest.mark.processes
def test_a_backfilled_past_dailys_par_waits_behind_the_backfills_solves(
    connection, service_env, job_store, clock
):
    clock.set(noon_of(DAY))
    past = [
        daily.ensure_daily(job_store, service_env.daily_key, GAME, DAY - timedelta(days=back))
        for back in (1, 2)
    ]
    backfill = solve_queue(connection, Urgency.BACKFILL)
    for puzzle in past:
        enqueue_solve(backfill, service_env, GAME, puzzle.seed, RULES)
    work_until_empty(connection, max_jobs=1)
    assert job_store.puzzles.by_id(past[0].id).status == "solved"
    assert not job_store.puzzles.by_id(past[0].id).has_par
    assert queued(connection, Urgency.BACKFILL) == [
        solve_job_id(GAME, past[1].seed, RULES),
        par_job_id(GAME, past[0].seed, RULES),
    ]


UNFINISHED_PAR_SEED = "unfinished-par"


def eliminated_par(seed: str) -> dict:
    """A par that does not finish, as par() answers it: the expert's own run can end
    eliminated (a body point left and only purple cards in hand) where the optimum
    finishes; here a seeded random run that ends so stands for it."""
    for attempt in range(100):
        chooser = seeded_chooser(seed, f"eliminated/{attempt}")
        final, actions = random_playout(GAMES[GAME], seed, chooser)
        if final["outcome"] == "eliminated":
            score, tiebreak = par_result(GAMES[GAME], final)
            return {"par": score, "par_tiebreak": tiebreak, "actions": actions, "seconds": 0.0}
    raise AssertionError(f"no random run of {seed} was eliminated in 100 tries")


def test_a_par_run_that_does_not_finish_is_stored_without_a_par(job_store):
    puzzle = job_store.puzzles.ensure(GAME, UNFINISHED_PAR_SEED, RULES)
    found = eliminated_par(UNFINISHED_PAR_SEED)
    assert GAMES[GAME].replay(UNFINISHED_PAR_SEED, found["actions"])["outcome"] == "eliminated"
    assert (found["par"], found["par_tiebreak"]) == (None, None)
    jobs.checked_par(puzzle, found)  # the job's check takes it as the engine's word
    for forged in ({"par_tiebreak": 8}, {"par": 100, "par_tiebreak": 8}):
        with pytest.raises(jobs.ParMismatchError, match=r"replays to \(None, None\)"):
            jobs.checked_par(puzzle, {**found, **forged})


@pytest.mark.processes
def test_a_daily_is_solved_with_its_par_in_one_job(connection, service_env, job_store, clock):
    clock.set(noon_of(DAY))
    puzzle = daily.ensure_daily(job_store, service_env.daily_key, GAME, DAY)
    enqueue_solve(solve_queue(connection), service_env, GAME, puzzle.seed, RULES)
    work_until_empty(connection, max_jobs=1)
    stored = job_store.puzzles.by_id(puzzle.id)
    outcome = Job.fetch(solve_job_id(GAME, puzzle.seed, RULES), connection=connection)
    assert stored.status == "solved"
    assert stored.has_par, outcome.return_value()
    assert stored.optimum is not None and (stored.par or 0) <= stored.optimum
    final = GAMES[GAME].replay(puzzle.seed, stored.par_line)
    assert par_result(GAMES[GAME], final) == (stored.par, stored.par_tiebreak)
    assert queued(connection, Urgency.PAR) == []


@pytest.mark.processes
def test_a_runs_analysis_is_computed_once_and_stored(make_app, service_env, connection, job_store):
    app = make_app(database=service_env.database_url)
    puzzle = job_store.puzzles.ensure(GAME, "analysed", RULES)
    actions = finished_run(GAMES[GAME], puzzle.seed)
    final = GAMES[GAME].replay(puzzle.seed, actions)
    run = job_store.runs.add(
        puzzle,
        "p1",
        actions=actions,
        score=GAMES[GAME].score(final),
        tiebreak=GAMES[GAME].tiebreak(final),
        finished=True,
    )
    player = client_of(app)
    assert player.get(f"/api/v1/runs/{run.id}/analysis").status_code == 202
    work_until_empty(connection)
    stored = job_store.analyses.get(run.id)
    assert stored.status == "done", stored.error
    analysis = stored.analysis
    assert analysis["result"]["points"] == run.score
    assert {decision["index"] for decision in analysis["decisions"]} <= set(range(len(actions)))
    assert jobs.analyse_run(run.id) == "already analysed"
    answer = player.get(f"/api/v1/runs/{run.id}/analysis")
    assert (answer.status_code, answer.get_json()["analysis"]) == (200, analysis)
    jsonschema_rs.validate(resolved(api.schemas["Analysis"]), answer.get_json())  # as documented
