"""Attempts against `rally web` processes: a request whose answer is lost is applied once
when retried, and two appends racing from two connections let exactly one through, on
SQLite and on PostgreSQL."""

from __future__ import annotations

import http.client
import json
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from threading import Barrier
from typing import Any

import pytest

from puzzles import GAMES
from service.domain import daily
from service.storage.migrations import upgrade
from service.storage.store import Store
from tests.api_support import finished_run
from tests.process_support import free_port, stop_process, wait_for_http

pytestmark = pytest.mark.processes  # these tests run service processes

GAME = "crazy-rally"
KEY = secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Web:
    port: int
    database_url: str

    def call(
        self, method: str, path: str, body: Any = None, cookie: str | None = None
    ) -> tuple[int, dict[str, str], Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Content-Type": "application/json"}
        if cookie:
            headers["Cookie"] = cookie
        data = None if body is None else json.dumps(body)
        connection.request(method, f"/api/v1{path}", data, headers)
        answer = connection.getresponse()
        result = (answer.status, dict(answer.getheaders()), json.loads(answer.read()))
        connection.close()
        return result


@pytest.fixture(params=["sqlite", "postgresql"])
def web(request, tmp_path: Path, redis_url: str, process_env: dict[str, str]) -> Iterator[Web]:
    """`rally web` with two worker processes on a fresh database of each kind."""
    if request.param == "sqlite":
        database_url = f"sqlite:///{tmp_path / 'live.sqlite3'}"
    else:
        database_url = request.getfixturevalue("postgres_factory")()
    upgrade(database_url)
    port = free_port()
    env = {
        **process_env,
        "RALLY_INSTANCE_PATH": str(tmp_path / "i"),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "RALLY_SECRET_KEY": KEY,
        "RALLY_DAILY_KEY": KEY,
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service.operations.cli",
            "web",
            "--port",
            str(port),
            "--workers",
            "2",
        ],
        env=env,
        start_new_session=True,
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/v1/games")
        yield Web(port, database_url)
    finally:
        stop_process(process)


def started(web: Web) -> tuple[dict[str, Any], str, list[Any]]:
    """A new player's attempt of today's daily, their cookie and a finished run of it."""
    status, headers, attempt = web.call("POST", f"/daily/{daily.today()}/{GAME}/attempt", {})
    assert status == 201
    cookie = headers["Set-Cookie"].split(";", 1)[0]
    seed = daily.daily_seed(KEY, GAME, daily.today())
    return attempt, cookie, finished_run(GAMES[GAME], seed)


def send_and_hang_up(web: Web, path: str, body: Any, cookie: str) -> None:
    """Send a request and close the connection without reading its answer."""
    data = json.dumps(body).encode()
    head = (
        f"POST /api/v1{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", web.port)) as connection:
        connection.sendall(head.encode() + data)


def test_an_append_whose_answer_was_lost_is_applied_once_when_retried(web: Web):
    attempt, cookie, actions = started(web)
    game = GAMES[GAME]
    first, *rest = game.batches(game.new_game(daily.daily_seed(KEY, GAME, daily.today())), actions)
    path = f"/attempts/{attempt['attempt']}/actions"
    body = {"played": 0, "actions": first}
    send_and_hang_up(web, path, body, cookie)
    with Store(web.database_url) as store:
        deadline = time.monotonic() + 20
        while store.attempts.get(attempt["attempt"]).played == 0:
            assert time.monotonic() < deadline, "the request sent was never applied"
            time.sleep(0.05)
        status, _headers, retried = web.call("POST", path, body, cookie)
        assert (status, retried["played"]) == (200, len(first))
        assert store.attempts.actions(attempt["attempt"]) == first
    played = len(first)
    for batch in rest:
        status, _headers, answer = web.call(
            "POST", path, {"played": played, "actions": batch}, cookie
        )
        assert status == 200
        played += len(batch)
    assert (answer["played"], answer["over"]) == (len(actions), True)
    status, _headers, run = web.call("GET", f"/runs/{answer['run']}", cookie=cookie)
    assert (run["actions"], run["official"]) == (actions, True)


def test_two_appends_racing_with_the_same_count_give_one_success_and_one_conflict(web: Web):
    attempt, cookie, _actions = started(web)
    path = f"/attempts/{attempt['attempt']}/actions"
    rounds = 0
    with ThreadPoolExecutor(2) as pool:
        while len(attempt["legal_actions"]) >= 2 and rounds < 8:
            barrier = Barrier(2)

            def send(action: Any, played=attempt["played"], barrier=barrier) -> tuple[int, Any]:
                barrier.wait()
                status, _headers, body = web.call(
                    "POST", path, {"played": played, "actions": [action]}, cookie
                )
                return status, body

            outcomes = list(pool.map(send, attempt["legal_actions"][:2]))
            assert sorted(status for status, _ in outcomes) == [200, 409]
            winner = next(body for status, body in outcomes if status == 200)
            loser = next(body for status, body in outcomes if status == 409)
            assert loser["played"] == winner["played"] == attempt["played"] + 1
            assert loser["actions"][-1] in attempt["legal_actions"][:2]
            attempt = winner
            rounds += 1
    assert rounds >= 3
