"""A database write lock held elsewhere: writes answer a JSON 503 with Retry-After after a
short wait, never a 500, and reads go on being answered meanwhile."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from flask import Flask
from sqlalchemy.engine import make_url

from puzzles import get_game
from service.domain import daily
from service.storage.database import BUSY_RETRY_AFTER_SECONDS, LOCK_WAIT_MS
from service.storage.store import Store
from tests.api_support import (
    FINISHING_GAME,
    attempt_batches,
    client_of,
    finished_run,
    play_attempt,
    todays_daily,
)

# These tests wait out the store's lock wait (seconds) before each refusal.
pytestmark = pytest.mark.slow

# Time allowed beyond the documented wait for the request's own work.
SLACK_SECONDS = 2.0
# A read during the lock must not wait for it: well under the lock wait.
READ_SECONDS = LOCK_WAIT_MS / 1000 / 2


@contextmanager
def sqlite_write_lock(database_url: str) -> Iterator[None]:
    """Another connection holding SQLite's write lock, with a write of its own under way."""
    holder = sqlite3.connect(make_url(database_url).database, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO players (id, created_at) VALUES ('holder', '2026-01-01')")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@contextmanager
def postgres_write_lock(database_url: str) -> Iterator[None]:
    """Another connection holding a lock that blocks every insert of a run, not its reads."""
    url = make_url(database_url).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False)) as holder:
        holder.execute("LOCK TABLE runs IN SHARE MODE")
        yield
        holder.rollback()


LOCKS = {"sqlite": sqlite_write_lock, "postgresql": postgres_write_lock}


def timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


def assert_busy(refused: Any, waited: float) -> None:
    """refused is the documented 503: JSON, Retry-After, no cookie, after the lock wait."""
    assert refused.status_code == 503, refused.data
    assert refused.mimetype == "application/json"
    assert refused.headers["Retry-After"] == str(BUSY_RETRY_AFTER_SECONDS)
    body = refused.get_json()
    assert (body["status"], body["retry_after"]) == (503, BUSY_RETRY_AFTER_SECONDS)
    assert "Set-Cookie" not in refused.headers
    assert LOCK_WAIT_MS / 1000 <= waited < LOCK_WAIT_MS / 1000 + SLACK_SECONDS


def test_a_held_write_lock_is_a_503_with_retry_after_and_reads_go_on(make_app, database_url: str):
    app: Flask = make_app(database=database_url)
    store: Store = app.extensions["rally"].store
    past = todays_daily(store, FINISHING_GAME, daily.today() - timedelta(days=1))
    client = client_of(app)
    path = f"/api/v1/puzzles/{past.game}/{past.seed}"
    actions = finished_run(get_game(past.game), past.seed)
    first = client.post(f"{path}/runs", json={"actions": actions, "name": "Ada"})
    assert first.status_code == 201

    with LOCKS[make_url(database_url).get_backend_name()](database_url):
        second = client_of(app)
        refused, waited = timed(lambda: second.post(f"{path}/runs", json={"actions": actions}))
        # A returning player's run that renames them: the rename is undone with the run.
        renaming = {"actions": actions, "name": "Grace"}
        refused_known, waited_known = timed(lambda: client.post(f"{path}/runs", json=renaming))
        for read in (path, f"{path}/leaderboard", f"/api/v1/runs/{first.get_json()['id']}"):
            answer, took = timed(lambda read=read: client.get(read))
            assert answer.status_code == 200, answer.data
            assert took < READ_SECONDS, (read, took)

    assert_busy(refused, waited)
    assert_busy(refused_known, waited_known)
    assert store.runs.player_count(past.id) == 1
    ada = store.runs.get(first.get_json()["id"])
    assert ada is not None and store.players.display_name(ada.player_id) == "Ada"
    retried = client_of(app).post(f"{path}/runs", json={"actions": actions})
    assert retried.status_code == 201
    assert store.runs.player_count(past.id) == 2


def test_an_attempts_last_append_under_a_held_lock_is_a_503_and_applies_once_retried(
    make_app, database_url: str
):
    app: Flask = make_app(database=database_url)
    store: Store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    client = client_of(app)
    *_, last = attempt_batches(puzzle, actions)
    played = len(actions) - len(last)
    attempt = play_attempt(client, puzzle, actions[:played])
    append = f"/api/v1/attempts/{attempt['attempt']}/actions"
    body = {"played": played, "actions": last}

    with LOCKS[make_url(database_url).get_backend_name()](database_url):
        refused, waited = timed(lambda: client.post(append, json=body))

    assert_busy(refused, waited)
    assert store.attempts.get(attempt["attempt"]).played == played
    retried = client.post(append, json=body)
    assert retried.status_code == 200, retried.data
    assert retried.get_json()["over"]
    assert (
        store.runs.player_count(puzzle.id),
        sum(store.runs.score_histogram(puzzle.id).values()),
    ) == (1, 1)


def test_the_503_is_documented_with_its_retry_after(app: Flask):
    document = client_of(app).get("/api/v1/openapi.json").get_json()
    answer = document["paths"]["/puzzles/crazy-rally/{seed}/runs"]["post"]["responses"]["503"]
    assert "Retry-After" in answer["headers"]
