"""A daily's secret from its commitment to its reveal, walked with the service's clock; the
seed found in no answer of its day; writes from other sites refused; old rules kept."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import subprocess
import sys
import time as time_module
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from puzzles import GAMES, get_game
from service.clock import Clock
from service.config import Config, ConfigError
from service.domain import daily
from service.jobs.jobs import store_solution
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web.players import COOKIE_NAME
from solver import solve
from tests.api_support import (
    DAILY_KEY,
    FINISHING_GAME,
    attempt_batches,
    client_of,
    finished_run,
    over_run,
    play_attempt,
    start_attempt,
    todays_daily,
)
from tests.process_support import stop_process

DAY = date(2026, 12, 10)
KEY = secrets.token_urlsafe(32)


def at(day: date, hour: int = 12) -> datetime:
    return datetime.combine(day, time(hour), UTC)


@pytest.mark.processes
def test_a_daily_is_committed_ahead_hidden_on_its_day_and_revealed_after(
    app: Flask, clock: Clock, api_store: Store
):
    game = FINISHING_GAME
    seed = daily.daily_seed(DAILY_KEY, game, DAY)
    client = client_of(app)

    # Three days ahead the planning job records it: its commitment is public, nothing else.
    clock.set(at(DAY - timedelta(days=3)))
    daily.ensure_dailies(api_store, DAILY_KEY, DAY)
    upcoming = client.get("/api/v1/daily/upcoming").get_json()["puzzles"]
    committed = next(p for p in upcoming if p["game"] == game and p["date"] == DAY.isoformat())
    assert client.get(f"/api/v1/daily/{DAY}").status_code == 404
    puzzle = next(p for p in api_store.puzzles.dailies(DAY) if p.game == game)
    store_solution(api_store, puzzle.id, solve(game, seed))  # what the worker's job stores

    # On its day: the same commitment and the optimum, never the seed.
    clock.set(at(DAY, 0))
    shown = next(p for p in client.get("/api/v1/daily").get_json()["puzzles"] if p["game"] == game)
    assert (shown["commitment"], shown["seed"]) == (committed["commitment"], None)
    assert shown["status"] == "solved"
    clock.set(at(DAY, 23) + timedelta(minutes=59, seconds=59))
    assert client.get(f"/api/v1/daily/{DAY}").get_json()["puzzles"][0]["seed"] is None
    assert client.get(f"/api/v1/puzzles/{game}/{seed}").status_code == 404

    # From 00:00 UTC the next day, the seed stands beside its commitment.
    clock.set(at(DAY + timedelta(days=1), 0))
    revealed = next(
        p for p in client.get(f"/api/v1/daily/{DAY}").get_json()["puzzles"] if p["game"] == game
    )
    assert revealed["seed"] == seed
    hashed = f"{game}:{revealed['rules_version']}:{revealed['seed']}"
    assert hashlib.sha256(hashed.encode()).hexdigest() == committed["commitment"]

    # Anyone checks the optimum with the project's own solver, as docs/verify.md shows.
    checked = subprocess.run(
        [sys.executable, "-m", "service.operations.cli", "solve", game, revealed["seed"], "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    verified = json.loads(checked.stdout)
    assert verified["rules_version"] == revealed["rules_version"]
    assert (verified["optimum"], verified["tiebreak"]) == (
        revealed["optimum"],
        revealed["tiebreak"],
    )


def test_keys_shorter_than_32_bytes_are_refused(tmp_path):
    for name in ("RALLY_SECRET_KEY", "RALLY_DAILY_KEY"):
        with pytest.raises(ConfigError, match=f"{name} .* is 5 bytes long: use at least 32"):
            Config.from_env({"RALLY_INSTANCE_PATH": str(tmp_path), name: "short"})


@pytest.mark.processes
def test_rally_refuses_to_start_with_a_short_key_and_says_why(tmp_path, process_env):
    answer = subprocess.run(
        [sys.executable, "-m", "service.operations.cli", "migrate"],
        env={**process_env, "RALLY_INSTANCE_PATH": str(tmp_path / "i"), "RALLY_DAILY_KEY": "k"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode != 0
    assert "RALLY_DAILY_KEY (from the environment) is 1 bytes long" in answer.stderr
    assert "Traceback" not in answer.stderr


# Nothing of the day shows the seed


class Recorder:
    """Every answer a client got: status, headers and body as text."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        self.seen: list[str] = []
        self.answers: list[Any] = []

    def __call__(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.client.open(path, method=method, **kwargs)
        self.answers.append(answer)
        # The answer only: the request's path may hold a seed the test itself sent.
        self.seen.append(f"{answer.status_code} {answer.headers} {answer.get_data(as_text=True)}")
        return answer


def test_no_answer_page_or_log_line_of_the_day_contains_its_seed(
    app: Flask, api_store: Store, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)
    today = daily.today()
    puzzles = {name: todays_daily(api_store, name) for name in GAMES}
    crazy = puzzles[FINISHING_GAME]
    store_solution(api_store, crazy.id, solve(crazy.game, crazy.seed))
    finisher, visitor = Recorder(client_of(app)), Recorder(client_of(app))
    actions = finished_run(get_game(crazy.game), crazy.seed)
    played = start_attempt(finisher.client, crazy).get_json()
    for name in GAMES:
        for who in (finisher, visitor):
            who("POST", f"/api/v1/daily/{today}/{name}/attempt", json={})
    attempt = played["attempt"]
    finisher(
        "POST",
        f"/api/v1/attempts/{attempt}/actions",
        json={"played": 0, "actions": [{"type": "no-such"}]},
    )
    finisher(
        "POST", f"/api/v1/attempts/{attempt}/actions", json={"played": 5, "actions": actions[:1]}
    )
    for played, batch in enumerate(attempt_batches(crazy, actions)):
        over = finisher(
            "POST",
            f"/api/v1/attempts/{attempt}/actions",
            json={"played": played, "actions": batch, "name": "Ada"},
        ).get_json()
    run_id = over["run"]
    for who in (finisher, visitor):
        for path in [
            "/api/v1/daily",
            f"/api/v1/daily/{today}",
            "/api/v1/daily/upcoming",
            "/api/v1/games",
            "/api/v1/openapi.json",
            f"/api/v1/runs/{run_id}",
            f"/api/v1/attempts/{attempt}",
            "/",
            "/archive",
            "/practice",
            f"/runs/{run_id}",
            *(f"/rules/{name}" for name in GAMES),
            *(
                f"/api/v1/daily/{today}/{name}/{part}"
                for name in GAMES
                for part in ("leaderboard", "solution")
            ),
            *(
                f"/api/v1/puzzles/{p.game}/{p.seed}{part}"
                for p in puzzles.values()
                for part in ("", "/leaderboard", "/solution")
            ),
            *(f"/play/{p.game}/{p.seed}" for p in puzzles.values()),
        ]:
            who("GET", path)
        for p in puzzles.values():
            who("POST", f"/api/v1/daily/{today}/{p.game}/play", json={"actions": []})
            who("POST", f"/api/v1/play/{p.game}/{p.seed}", json={"actions": []})
            who("POST", f"/api/v1/puzzles/{p.game}/{p.seed}/runs", json={"actions": actions})
    assert len(finisher.seen) + len(visitor.seen) > 60
    assert over["over"] is True
    assert sum(seen.startswith("200 ") for seen in finisher.seen) > 15
    everything = "\n".join([*finisher.seen, *visitor.seen, caplog.text])
    for puzzle in puzzles.values():
        assert puzzle.seed not in everything
        assert puzzle.seed.split("-")[1] not in everything


# No line of today's play reaches a second identity


def lines_in(value: Any) -> list[Any]:
    """Every line of play in an answer: the lists under an `actions` or `witness` key."""
    if isinstance(value, list):
        return [line for item in value for line in lines_in(item)]
    if not isinstance(value, dict):
        return []
    found = [v for k, v in value.items() if k in ("actions", "witness") and v is not None]
    return found + [line for v in value.values() for line in lines_in(v)]


def ask_for_every_line(who: Recorder, puzzle: PuzzleRecord, run_ids: list[str]) -> None:
    """What a player may ask for to learn a line of play on today's daily."""
    base = f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}"
    who("GET", f"{base}/solution")
    who("POST", f"{base}/play", json={"actions": []})
    who("GET", f"{base}/leaderboard")
    who("GET", "/api/v1/players/me/runs")
    for run_id in run_ids:
        who("GET", f"/api/v1/runs/{run_id}")
        who("GET", f"/api/v1/runs/{run_id}/steps/1")


@pytest.mark.slow  # it solves both dailies
@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_finished_attempt_hands_no_line_to_a_second_identity(
    game: str, app: Flask, api_store: Store, clock: Clock
):
    """The cheat of two cookies: a throwaway identity plays the daily out badly and asks for
    every line of play on it (the optimal one, the best player's, practice play), for a
    second identity to play as its official run. Neither learns more than its own play
    showed until the day is over; then everyone sees every line."""
    puzzle = todays_daily(api_store, game)
    witness = solve(game, puzzle.seed).actions
    store_solution(api_store, puzzle.id, solve(game, puzzle.seed))
    adas_run = play_attempt(client_of(app), puzzle, witness, name="Ada")["run"]
    scout, second = Recorder(client_of(app)), Recorder(client_of(app))
    scouted = over_run(get_game(game), puzzle.seed)
    scouts_run = play_attempt(scout.client, puzzle, scouted)["run"]

    ask_for_every_line(scout, puzzle, [adas_run, scouts_run])
    start_attempt(second.client, puzzle)
    ask_for_every_line(second, puzzle, [adas_run, scouts_run])

    opens = daily.revealed_at(puzzle.daily_date)
    for who, own_line in ((scout, scouted), (second, None)):
        answers = who.answers
        assert [a.status_code for a in answers[:2]] == [403, 403]
        for refused in answers[:2]:
            assert refused.get_json()["line_opens_at"] == opens.isoformat()
            assert int(refused.headers["Retry-After"]) >= 1
        seen = [line for answer in answers for line in lines_in(answer.get_json())]
        assert all(line == own_line for line in seen), "a line of play reached another player"

    clock.set(opens)
    after = Recorder(client_of(app))
    ask_for_every_line(after, puzzle, [adas_run, scouts_run])
    answers = after.answers
    assert [a.status_code for a in answers[:2]] == [200, 200]
    seen = [line for answer in answers for line in lines_in(answer.get_json())]
    assert witness in seen and scouted in seen


# Writes from other sites


CROSS_SITE = {
    "text/plain body": {"content_type": "text/plain"},
    "form body": {"content_type": "application/x-www-form-urlencoded"},
    "no content type": {"content_type": ""},
    "another origin": {"headers": {"Origin": "https://evil.example"}},
    "a sibling origin": {"headers": {"Origin": "http://127.0.0.1:8001"}},
    "opaque origin": {"headers": {"Origin": "null"}},
    "cross-site fetch": {"headers": {"Sec-Fetch-Site": "cross-site"}},
    "same-site fetch": {"headers": {"Sec-Fetch-Site": "same-site"}},
}


def cookie_of(client: FlaskClient) -> str | None:
    cookie = client.get_cookie(COOKIE_NAME)
    return None if cookie is None else cookie.value


@pytest.mark.parametrize("request_kind", CROSS_SITE.values(), ids=CROSS_SITE.keys())
def test_a_write_from_another_site_is_refused_and_leaves_the_cookie_alone(
    request_kind: dict[str, Any], app: Flask, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    stranger = client_of(app)
    visitor = client_of(app)
    attempt = start_attempt(visitor, puzzle, name="Ada").get_json()
    cookie = cookie_of(visitor)
    practice = api_store.puzzles.ensure(puzzle.game, "csrf", puzzle.rules_version)
    body = json.dumps({"played": 0, "actions": actions[:2], "name": "Mallory"})
    writes = [
        (f"/api/v1/attempts/{attempt['attempt']}/actions", body),
        (f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/attempt", "{}"),
        (
            f"/api/v1/puzzles/{practice.game}/{practice.seed}/runs",
            json.dumps({"actions": actions, "name": "Mallory"}),
        ),
    ]
    for client in (visitor, stranger):
        for path, data in writes:
            answer = client.post(
                path, data=data, **{"content_type": "application/json", **request_kind}
            )
            assert answer.status_code == 403, (path, answer.get_json())
            assert answer.get_json()["error"]
            assert "Set-Cookie" not in answer.headers
    assert cookie_of(visitor) == cookie
    assert cookie_of(stranger) is None
    assert api_store.attempts.get(attempt["attempt"]).played == 0
    assert (
        api_store.players.display_name(api_store.attempts.get(attempt["attempt"]).player_id)
        == "Ada"
    )
    assert api_store.players.count() == 1


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "http://127.0.0.1:8000", "Sec-Fetch-Site": "same-origin"},
        {"Origin": "http://localhost"},
    ],
    ids=["no browser headers", "the public origin", "the origin asked"],
)
def test_a_same_origin_json_write_is_accepted(
    headers: dict[str, str], client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    answer = client.post(
        f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/attempt", json={}, headers=headers
    )
    assert answer.status_code == 201


# Puzzles of older rules


def old_rules(game: str) -> str:
    return re.sub(r"\d+$", "0", GAMES[game].rules_version)


def test_a_past_daily_of_older_rules_keeps_its_results_and_is_practised_under_the_new(
    client: FlaskClient, api_store: Store, clock: Clock
):
    game = FINISHING_GAME
    seed = daily.daily_seed(DAILY_KEY, game, DAY)
    old = api_store.puzzles.ensure(
        game, seed, old_rules(game), daily_date=DAY, number=daily.puzzle_number(DAY)
    )
    api_store.puzzles.record_solution(
        old.id, optimum=1234, tiebreak=5, witness=[], proved=True, solve_seconds=1.0
    )
    stored_run = api_store.runs.add(
        old,
        "p-old",
        actions=["from the old rules"],
        score=999,
        tiebreak=1,
        finished=True,
        display_name="Old",
        today=DAY,
    )
    clock.set(at(DAY + timedelta(days=2)))
    shown = next(
        p for p in client.get(f"/api/v1/daily/{DAY}").get_json()["puzzles"] if p["game"] == game
    )
    assert (shown["rules_version"], shown["optimum"], shown["seed"]) == (
        old_rules(game),
        1234,
        seed,
    )
    board = client.get(f"/api/v1/daily/{DAY}/{game}/leaderboard").get_json()
    assert [(e["name"], e["score"]) for e in board["entries"]] == [("Old", 999)]
    run = client.get(f"/api/v1/runs/{stored_run.id}").get_json()
    assert (run["score"], run["rules_version"]) == (999, old_rules(game))
    practice = client.post(f"/api/v1/puzzles/{game}/{seed}", json={}).get_json()
    assert practice["rules_version"] == GAMES[game].rules_version
    assert (practice["date"], practice["status"]) == (None, "pending")
    actions = finished_run(get_game(game), seed)
    played = client.post(f"/api/v1/daily/{DAY}/{game}/play", json={"actions": actions})
    assert played.get_json()["finished"] is True
    assert api_store.puzzles.by_id(old.id).optimum == 1234


def test_todays_daily_stored_under_older_rules_is_played_under_the_current(
    client: FlaskClient, api_store: Store
):
    game = FINISHING_GAME
    today = daily.today()
    seed = daily.daily_seed(DAILY_KEY, game, today)
    old = api_store.puzzles.ensure(
        game, seed, old_rules(game), daily_date=today, number=daily.puzzle_number(today)
    )
    attempt = start_attempt(client, old).get_json()
    assert attempt["puzzle"]["rules_version"] == GAMES[game].rules_version
    over = play_attempt(client, todays_puzzle(api_store, game), finished_run(get_game(game), seed))
    assert client.get(f"/api/v1/runs/{over['run']}").get_json()["official"] is True


def todays_puzzle(store: Store, game: str) -> PuzzleRecord:
    return next(
        p
        for p in store.puzzles.dailies(daily.today())
        if p.game == game and p.rules_version == GAMES[game].rules_version
    )


@pytest.mark.processes
def test_a_working_worker_logs_no_seed_of_a_coming_daily(
    service_env, process_env: dict[str, str], tmp_path
):
    """The real `rally worker` plans the coming week and starts solving it: its log names
    the jobs (by commitment), never a seed, even at DEBUG, where RQ logs every job."""
    log_path = tmp_path / "worker.log"
    env = {
        **process_env,
        **{
            name: value
            for name, value in os.environ.items()
            if name.startswith("RALLY_") or name in ("DATABASE_URL", "REDIS_URL")
        },
        "RALLY_DAILY_KEY": KEY,
        "RALLY_LOG_LEVEL": "DEBUG",
    }
    with log_path.open("w") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "service.operations.cli", "worker"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time_module.monotonic() + 120
            while log_path.read_text().count("solve-") < 2:
                assert time_module.monotonic() < deadline, log_path.read_text()
                time_module.sleep(0.2)
        finally:
            stop_process(worker, 60)
    logged = log_path.read_text()
    days = daily.upcoming_days(daily.today(), Config.from_env(env).days_ahead)
    seeds = [daily.daily_seed(KEY, game, day) for day in days for game in GAMES]
    assert len(seeds) >= 2 * len(GAMES)  # today's dailies and at least the next day's
    for seed in seeds:
        assert seed not in logged
        assert seed.split("-")[1] not in logged
