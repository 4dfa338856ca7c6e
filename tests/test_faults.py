"""The faults the service must survive, caused for real: a worker SIGKILLed mid-solve,
Redis stopped, the web process SIGKILLed during a burst of submissions."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import redis
from rq.job import Job

from puzzles import GAMES
from puzzles.playout import random_playout, seeded_chooser
from service.config import Config
from service.domain import daily
from service.jobs.jobs import sweep_pending
from service.jobs.queue import enqueue_solve, solve_job_id, solve_queue
from service.operations.redis_server import EmbeddedRedis
from service.storage.migrations import upgrade
from service.storage.store import Store
from tests.api_support import client_of, over_run, play_attempt
from tests.process_support import free_port, kill_everything_under, stop_process, wait_for_http

pytestmark = pytest.mark.processes  # these tests run service processes

GAME = "crazy-rally"
# A seed whose solve takes about a second, long enough to kill its worker in the middle.
SLOW_SEED = "killed-mid-solve"
SOLVED_WITHIN = 60.0
# Time to solve the coming week's dailies of every game, then one practice puzzle.
SOLVED_AFTER_THE_DAILIES = 300.0


def rally(*args: str) -> list[str]:
    return [sys.executable, "-m", "service.operations.cli", *args]


# How often a condition is looked at: often enough to catch a solve of about a second in
# the middle; a wait of seconds for a worker is looked at less often, since each look is a
# read of Redis or of the database on the cores the worker solves on.
CATCH_SECONDS = 0.01
POLL_SECONDS = 0.2


def wait_until(condition, seconds: float, what: str, every: float = CATCH_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        time.sleep(every)


def worker_env(process_env: dict[str, str], config: Config) -> dict[str, str]:
    """A worker with short heartbeats, so that a dead worker's job is found in seconds."""
    return {
        **process_env,
        "RALLY_INSTANCE_PATH": str(config.instance_path),
        "DATABASE_URL": config.database_url,
        "REDIS_URL": config.redis_url,
        "RALLY_DAILY_KEY": config.daily_key,
        "RALLY_HEARTBEAT": "1",
        "RALLY_RETRY_DELAY": "0",
    }


def test_a_worker_killed_mid_solve_leaves_the_job_retried_and_stored_once(
    service_env: Config, process_env: dict[str, str]
):
    with Store(service_env.database_url) as store:
        puzzle = store.puzzles.ensure(GAME, SLOW_SEED, GAMES[GAME].rules_version)
        connection = redis.Redis.from_url(service_env.redis_url)
        enqueue_solve(solve_queue(connection), service_env, GAME, puzzle.seed, puzzle.rules_version)
        job_id = solve_job_id(GAME, puzzle.seed, puzzle.rules_version)
        env = worker_env(process_env, service_env)

        first = subprocess.Popen(rally("worker"), env=env, start_new_session=True)
        wait_until(
            lambda: Job.fetch(job_id, connection=connection).get_status() == "started",
            60,
            "the worker starts solving",
        )
        kill_everything_under(first)
        assert store.puzzles.by_id(puzzle.id).status == "pending"

        second = subprocess.Popen(rally("worker"), env=env, start_new_session=True)
        try:
            wait_until(
                lambda: store.puzzles.by_id(puzzle.id).status != "pending",
                SOLVED_WITHIN,
                "the abandoned job is retried",
                every=POLL_SECONDS,
            )
        finally:
            stop_process(second)
        solved = store.puzzles.by_id(puzzle.id)
        assert solved.status == "solved"
        assert solved.solve_seconds > 0.2, f"{SLOW_SEED} solves too fast to be killed mid-solve"
        assert Job.fetch(job_id, connection=connection).retries_left == 0
        assert store.puzzles.get(GAME, puzzle.seed, puzzle.rules_version) == solved
        final = GAMES[GAME].replay(puzzle.seed, solved.witness)
        assert (GAMES[GAME].score(final), GAMES[GAME].tiebreak(final)) == (
            solved.optimum,
            solved.tiebreak,
        )


def test_with_redis_stopped_the_service_serves_and_stores_then_resumes(
    make_app,
    tmp_path: Path,
    process_env: dict[str, str],
):
    private = EmbeddedRedis(tmp_path / "r.sock", tmp_path / "redis")
    private.start()
    app = make_app(redis=private.url, RALLY_WRITES_PER_MINUTE="1000", RALLY_RETRY_DELAY="0")
    config: Config = app.extensions["rally"].config
    store: Store = app.extensions["rally"].store
    client = client_of(app)
    worker = subprocess.Popen(
        rally("worker"), env=worker_env(process_env, config), start_new_session=True
    )
    try:
        today = client.get("/api/v1/daily").get_json()
        private.stop()

        assert client.get("/api/v1/daily").get_json() == today
        puzzle = next(p for p in store.puzzles.dailies(daily.today()) if p.game == GAME)
        over = play_attempt(client, puzzle, over_run(GAMES[GAME], puzzle.seed))
        assert store.runs.get(over["run"]) is not None
        submitted = client.post(
            f"/api/v1/puzzles/{GAME}/practice-while-down/runs",
            json={"actions": over_run(GAMES[GAME], "practice-while-down")},
        )
        assert submitted.status_code == 201
        asked = client.post(f"/api/v1/puzzles/{GAME}/asked-while-redis-was-down", json={})
        assert asked.get_json()["status"] == "pending"

        private.start()
        connection = redis.Redis.from_url(private.url)
        sweep_pending(store, config, connection)  # what the next planning run does
        practice = store.puzzles.get(GAME, "asked-while-redis-was-down", GAMES[GAME].rules_version)
        # The coming week's dailies are solved first: they are more urgent than practice.
        wait_until(
            lambda: store.puzzles.by_id(practice.id).status != "pending",
            SOLVED_AFTER_THE_DAILIES,
            "the worker takes up the puzzle asked for while Redis was down",
            every=POLL_SECONDS,
        )
        assert store.puzzles.by_id(practice.id).status == "solved"
    finally:
        stop_process(worker)
        private.stop()


def post_json(url: str, body: object) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status, json.loads(answer.read())


def test_every_acknowledged_run_survives_a_killed_web_process(
    instance_path: Path, redis_url: str, process_env: dict[str, str]
):
    env = {
        **process_env,
        "RALLY_INSTANCE_PATH": str(instance_path),
        "REDIS_URL": redis_url,
        "RALLY_WRITES_PER_MINUTE": "1000000",
        "RALLY_NEW_PLAYERS_PER_HOUR": "1000000",  # every cookieless submission is a new player
    }
    config = Config.from_env(env)
    upgrade(config.database_url)
    port = free_port()
    base = f"http://127.0.0.1:{port}/api/v1"
    web = subprocess.Popen(rally("web", "--port", str(port)), env=env, start_new_session=True)
    wait_for_http(f"{base}/daily")
    seed = "burst"
    runs = [
        random_playout(GAMES[GAME], seed, seeded_chooser(seed, f"burst/{n}"))[1] for n in range(40)
    ]
    acknowledged: list[str] = []
    failures: list[Exception] = []

    def submit_until_refused(offset: int) -> None:
        for number in range(offset, 10_000):
            try:
                status, body = post_json(
                    f"{base}/puzzles/{GAME}/{seed}/runs", {"actions": runs[number % len(runs)]}
                )
            except (OSError, http.client.HTTPException) as error:
                failures.append(error)
                return
            if 200 <= status < 300:
                acknowledged.append(body["id"])

    senders = [threading.Thread(target=submit_until_refused, args=(n * 1000,)) for n in range(6)]
    for sender in senders:
        sender.start()
    wait_until(lambda: len(acknowledged) >= 50, 60, "the burst is under way")
    kill_everything_under(web)
    for sender in senders:
        sender.join(30)
    assert len(failures) == len(senders)

    restarted = subprocess.Popen(rally("web", "--port", str(port)), env=env, start_new_session=True)
    try:
        wait_for_http(f"{base}/daily")
        for run_id in acknowledged:
            with urllib.request.urlopen(f"{base}/runs/{run_id}", timeout=10) as answer:
                assert json.loads(answer.read())["id"] == run_id
    finally:
        stop_process(restarted)
    with Store(config.database_url) as store:
        assert all(store.runs.get(run_id) for run_id in acknowledged)
