"""Par and graded decisions through the API: par beside the optimum, the par line under the
optimal line's rule, and the analysis of a run asked for, queued, capped and stored."""

from __future__ import annotations

from datetime import timedelta

import redis
from flask import Flask
from flask.testing import FlaskClient
from rq.job import Job

from puzzles import GAMES, get_game
from service.clock import Clock
from service.domain import daily
from service.jobs.queue import (
    Urgency,
    analysis_job_id,
    par_job_id,
    solve_queue,
)
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web.api.common import PAR_ASKED_SECONDS
from tests.api_support import FINISHING_GAME, client_of, finished_run, play_attempt, todays_daily

RULES = GAMES[FINISHING_GAME].rules_version
PAR_LINE = [{"kind": "expert"}]
ANALYSIS = {"decisions": [], "decision_loss": 1.5}


def queued(app: Flask, urgency: Urgency) -> list[str]:
    connection = redis.Redis.from_url(app.extensions["rally"].config.redis_url)
    return solve_queue(connection, urgency).job_ids


def with_par(store: Store, puzzle: PuzzleRecord) -> PuzzleRecord:
    assert store.puzzles.record_par(puzzle.id, par=17, tiebreak=-19, line=PAR_LINE, seconds=3.0)
    stored = store.puzzles.by_id(puzzle.id)
    assert stored is not None
    return stored


def practice_run(client: FlaskClient, seed: str = "coach-practice") -> dict:
    actions = finished_run(get_game(FINISHING_GAME), seed)
    answer = client.post(f"/api/v1/puzzles/{FINISHING_GAME}/{seed}/runs", json={"actions": actions})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


# Par


def test_puzzle_answers_give_the_par_once_computed_and_null_before(
    client: FlaskClient, api_store: Store, clock: Clock
):
    path = f"/api/v1/puzzles/{FINISHING_GAME}/par-seed"
    assert client.post(path, json={}).status_code == 202
    before = client.get(path).get_json()
    assert (before["par"], before["par_tiebreak"], before["par_computed"]) == (None, None, False)
    with_par(api_store, api_store.puzzles.get(FINISHING_GAME, "par-seed", RULES))
    clock.advance(1)  # past the second each process keeps a puzzle
    shown = client.get(path).get_json()
    assert (shown["par"], shown["par_tiebreak"], shown["par_computed"]) == (17, -19, True)


def test_a_par_run_that_did_not_finish_is_computed_with_a_null_par(
    client: FlaskClient, api_store: Store
):
    path = f"/api/v1/puzzles/{FINISHING_GAME}/unfinished-par"
    assert client.post(path, json={}).status_code == 202
    puzzle = api_store.puzzles.get(FINISHING_GAME, "unfinished-par", RULES)
    api_store.puzzles.record_par(puzzle.id, par=None, tiebreak=None, line=[], seconds=1.0)
    shown = client.get(path).get_json()
    assert (shown["par"], shown["par_tiebreak"], shown["par_computed"]) == (None, None, True)


def test_a_practice_par_line_is_202_until_computed_then_public(
    client: FlaskClient, api_store: Store, clock: Clock
):
    path = f"/api/v1/puzzles/{FINISHING_GAME}/par-line"
    client.post(f"/api/v1/puzzles/{FINISHING_GAME}/par-line", json={})
    pending = client.get(f"{path}/par")
    assert (pending.status_code, pending.get_json()["actions"]) == (202, None)
    with_par(api_store, api_store.puzzles.get(FINISHING_GAME, "par-line", RULES))
    clock.advance(1)
    shown = client.get(f"{path}/par")
    assert shown.status_code == 200
    assert shown.get_json() == {
        "game": FINISHING_GAME,
        "seed": "par-line",
        "par": 17,
        "par_tiebreak": -19,
        "actions": PAR_LINE,
    }


def test_a_known_practice_seed_without_a_par_queues_it_behind_the_solves(
    app: Flask, api_store: Store
):
    """A puzzle stored before pars were: asking for it again queues its par, once."""
    api_store.puzzles.ensure(FINISHING_GAME, "old-seed", RULES)
    for _ in range(2):
        assert (
            client_of(app).post(f"/api/v1/puzzles/{FINISHING_GAME}/old-seed", json={}).status_code
            == 200
        )
    assert queued(app, Urgency.PAR) == [par_job_id(FINISHING_GAME, "old-seed", RULES)]


def test_a_par_asked_for_is_asked_again_only_after_a_minute(
    app: Flask, api_store: Store, clock: Clock
):
    """Runs of a puzzle without a par do not each ask the queue for it: a process remembers
    asking for a minute, after which a par job that ended without a par is queued again."""
    api_store.puzzles.ensure(FINISHING_GAME, "waiting-par", RULES)
    client = client_of(app)
    practice_run(client, "waiting-par")
    job_id = par_job_id(FINISHING_GAME, "waiting-par", RULES)
    assert queued(app, Urgency.PAR) == [job_id]
    connection = redis.Redis.from_url(app.extensions["rally"].config.redis_url)
    solve_queue(connection, Urgency.PAR).remove(job_id)  # a worker took it,
    Job.fetch(job_id, connection=connection).delete()  # and it ended without a par
    practice_run(client, "waiting-par")
    assert queued(app, Urgency.PAR) == []
    clock.advance(PAR_ASKED_SECONDS)
    practice_run(client, "waiting-par")
    assert queued(app, Urgency.PAR) == [job_id]


def test_todays_par_line_is_hidden_from_everyone_until_the_day_is_over(
    client: FlaskClient, api_store: Store, clock: Clock
):
    puzzle = with_par(api_store, todays_daily(api_store, FINISHING_GAME))
    path = f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/par"
    opens = daily.revealed_at(puzzle.daily_date)
    assert client.get(f"/api/v1/daily/{puzzle.daily_date}").get_json()["puzzles"][0]["par"] == 17
    # The player whose attempt is over is refused too, as for the optimal line.
    play_attempt(client, puzzle, finished_run(get_game(puzzle.game), puzzle.seed))
    clock.set(opens - timedelta(seconds=90))
    hidden = client.get(path)
    assert (hidden.status_code, hidden.headers["Retry-After"]) == (403, "90")
    assert hidden.get_json()["line_opens_at"] == opens.isoformat()
    assert "par line" in hidden.get_json()["error"]
    clock.set(opens)
    shown = client.get(path)
    assert (shown.status_code, shown.get_json()["actions"]) == (200, PAR_LINE)


# Analyses


def test_an_analysis_is_queued_once_behind_the_solves_then_served_when_stored(
    client: FlaskClient, api_store: Store
):
    run = practice_run(client)
    path = f"/api/v1/runs/{run['id']}/analysis"
    first = client.get(path)
    assert first.status_code == 202
    assert first.get_json() == {
        "run_id": run["id"],
        "status": "pending",
        "rng_seed": 0,
        "analysis": None,
        "error": None,
        "seconds": None,
    }
    assert client.get(path).status_code == 202
    assert queued(client.application, Urgency.ANALYSIS) == [analysis_job_id(run["id"])]
    assert api_store.analyses.record(run["id"], ANALYSIS, seconds=4.0)
    done = client.get(path)
    assert done.status_code == 200
    assert (done.get_json()["status"], done.get_json()["analysis"]) == ("done", ANALYSIS)
    assert done.headers["Cache-Control"] == "no-store"


def test_a_failed_analysis_says_why(client: FlaskClient, api_store: Store):
    run = practice_run(client)
    client.get(f"/api/v1/runs/{run['id']}/analysis")
    api_store.analyses.record_failure(run["id"], "no answer within the time bound of 1 s")
    failed = client.get(f"/api/v1/runs/{run['id']}/analysis")
    assert failed.status_code == 200
    assert failed.get_json()["error"] == "no answer within the time bound of 1 s"


def test_an_analysis_of_no_run_is_404(client: FlaskClient):
    assert client.get("/api/v1/runs/no-such-run/analysis").status_code == 404


def test_the_analysis_of_todays_run_is_its_players_alone_until_the_day_is_over(
    app: Flask, api_store: Store, clock: Clock
):
    """It shows the run's moves (and only what its player saw), so it follows their rule."""
    puzzle = todays_daily(api_store, FINISHING_GAME)
    player = client_of(app)
    attempt = play_attempt(player, puzzle, finished_run(get_game(puzzle.game), puzzle.seed))
    path = f"/api/v1/runs/{attempt['run']}/analysis"
    other = client_of(app)
    refused = other.get(path)
    assert refused.status_code == 403
    assert refused.get_json()["line_opens_at"] == daily.revealed_at(puzzle.daily_date).isoformat()
    assert api_store.analyses.get(attempt["run"]) is None
    assert player.get(path).status_code == 202  # as soon as their attempt is over
    api_store.analyses.record(attempt["run"], {**ANALYSIS, "seed": puzzle.seed}, seconds=1.0)
    mine = player.get(path)
    assert mine.status_code == 200
    assert puzzle.seed not in mine.get_data(as_text=True)  # the seed stays secret all day
    assert mine.get_json()["analysis"] == {**ANALYSIS, "seed": None}
    clock.set(daily.revealed_at(puzzle.daily_date))
    assert other.get(path).get_json()["analysis"] == {**ANALYSIS, "seed": puzzle.seed}


def test_one_player_may_have_only_so_many_analyses_waiting(make_app):
    app = make_app(RALLY_MAX_PENDING_ANALYSES_PER_PLAYER="2")
    player = client_of(app)
    runs = [practice_run(player, f"capped-{n}")["id"] for n in range(3)]
    assert [player.get(f"/api/v1/runs/{run}/analysis").status_code for run in runs[:2]] == [
        202,
        202,
    ]
    refused = player.get(f"/api/v1/runs/{runs[2]}/analysis")
    assert (refused.status_code, int(refused.headers["Retry-After"]) > 0) == (429, True)
    assert app.extensions["rally"].store.analyses.get(runs[2]) is None
    assert player.get(f"/api/v1/runs/{runs[0]}/analysis").status_code == 202  # asked already
    assert client_of(app).get(f"/api/v1/runs/{runs[2]}/analysis").status_code == 202


def test_a_new_analysis_over_the_total_cap_gets_503_and_records_nothing(make_app):
    app = make_app(RALLY_MAX_PENDING_ANALYSES="1")
    first, second = (practice_run(client_of(app), f"total-{n}")["id"] for n in range(2))
    assert client_of(app).get(f"/api/v1/runs/{first}/analysis").status_code == 202
    refused = client_of(app).get(f"/api/v1/runs/{second}/analysis")
    assert (refused.status_code, int(refused.headers["Retry-After"]) > 0) == (503, True)
    assert "busy" in refused.get_json()["error"]
    assert app.extensions["rally"].store.analyses.get(second) is None


def test_the_analysis_of_a_run_of_older_rules_is_422(client: FlaskClient, api_store: Store):
    old = api_store.puzzles.ensure(FINISHING_GAME, "old-rules", "v0")
    run = api_store.runs.add(old, "p1", actions=[], score=None, tiebreak=0, finished=False)
    refused = client.get(f"/api/v1/runs/{run.id}/analysis")
    assert refused.status_code == 422
    assert "v0" in refused.get_json()["error"]
