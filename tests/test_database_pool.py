"""The database pool of a process: a request holds one connection at a time, so a pool of
one serves a whole daily; when every connection stays taken, a request answers a JSON 503
with Retry-After after RALLY_DATABASE_POOL_TIMEOUT, never a 500 after SQLAlchemy's 30 s."""

from __future__ import annotations

import time
from datetime import timedelta

from flask import Flask

from puzzles import get_game
from service.domain import daily
from service.storage.database import BUSY_RETRY_AFTER_SECONDS
from service.storage.store import Store
from tests.api_support import (
    FINISHING_GAME,
    attempt_batches,
    client_of,
    finished_run,
    start_attempt,
    todays_daily,
)

ONE_CONNECTION = {"RALLY_DATABASE_POOL_SIZE": "1", "RALLY_DATABASE_POOL_TIMEOUT": "1"}


def forget_cached_puzzle(app: Flask, puzzle_id: int) -> None:
    """Drop the process's brief copy of the puzzle, so that the next request reads it."""
    app.extensions["rally"].cache.drop(("puzzle-id", puzzle_id))


def test_a_whole_daily_plays_on_a_pool_of_one_connection(make_app, database_url: str):
    """Each append, its retry (the replay of a lost answer) and a wrong `played` (the 409
    that carries the attempt) are served by one connection: none waits for a second one
    while holding the first."""
    app: Flask = make_app(database=database_url, **ONE_CONNECTION)
    store: Store = app.extensions["rally"].store
    assert (store.database.pool.size, store.database.pool.timeout) == (1, 1)
    puzzle = todays_daily(store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    client = client_of(app)
    started = start_attempt(client, puzzle, name="Ada")
    assert started.status_code == 201, started.data
    append = f"/api/v1/attempts/{started.get_json()['attempt']}/actions"
    played = 0
    for batch in attempt_batches(puzzle, actions):
        body = {"played": played, "actions": batch}
        for _sent in ("first", "again, as a client whose answer was lost"):
            forget_cached_puzzle(app, puzzle.id)
            answer = client.post(append, json=body)
            assert answer.status_code == 200, answer.data
        played += len(batch)
        if played < len(actions):
            forget_cached_puzzle(app, puzzle.id)
            ahead = client.post(append, json={"played": played + 1, "actions": batch})
            assert ahead.status_code == 409, ahead.data
    run = answer.get_json()["run"]
    board = f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/leaderboard"
    for read in (f"/api/v1/runs/{run}", board, "/api/v1/me"):
        forget_cached_puzzle(app, puzzle.id)
        assert client.get(read).status_code == 200, read


def test_every_connection_taken_is_a_503_with_retry_after_and_nothing_done(
    make_app, database_url: str
):
    app: Flask = make_app(database=database_url, **ONE_CONNECTION)
    store: Store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME, daily.today() - timedelta(days=1))
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    client = client_of(app)
    submit = f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/runs"

    with store.database.engine.connect():  # the pool's only connection, held elsewhere
        started = time.monotonic()
        refused = client.post(submit, json={"actions": actions, "name": "Ada"})
        waited = time.monotonic() - started

    assert refused.status_code == 503, refused.data
    assert refused.mimetype == "application/json"
    assert refused.headers["Retry-After"] == str(BUSY_RETRY_AFTER_SECONDS)
    assert refused.get_json()["retry_after"] == BUSY_RETRY_AFTER_SECONDS
    assert waited >= store.database.pool.timeout
    assert store.runs.player_count(puzzle.id) == 0
    retried = client.post(submit, json={"actions": actions, "name": "Ada"})
    assert retried.status_code == 201, retried.data
    assert store.runs.player_count(puzzle.id) == 1
