"""The API as the contract describes it, through Flask's test client on a real database."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from rq.job import Job

from puzzles import GAMES, get_game
from service import api, daily
from service.jobs import store_solution
from service.players import COOKIE_NAME
from service.store import PuzzleRecord, Store
from solver import SolveResult, solve
from tests.api_fixtures import *  # noqa: F403 - the fixtures
from tests.api_fixtures import (
    DAILY_KEY,
    FINISHING_GAME,
    client_of,
    finished_run,
    over_run,
    todays_daily,
)

GAME_NAMES = sorted(GAMES)
games = pytest.mark.parametrize("game_name", GAME_NAMES)
PUZZLE_KEYS = {"game", "seed", "number", "date", "rules_version", "status", "optimum", "tiebreak"}
PRACTICE_SEED = "api-practice"


def submit(client: FlaskClient, puzzle: PuzzleRecord, actions: list[Any], **extra: Any):
    return client.post(
        f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/runs", json={"actions": actions, **extra}
    )


@functools.cache
def solved(game_name: str, seed: str) -> SolveResult:
    """The solver's answer for (game, seed), computed once per test session."""
    return solve(game_name, seed)


def record_solved(store: Store, puzzle: PuzzleRecord) -> SolveResult:
    """Solve the puzzle and store the answer, as the worker's job does."""
    result = solved(puzzle.game, puzzle.seed)
    store_solution(store, puzzle.id, result)
    return result


# Dailies


def test_today_has_one_puzzle_per_game_with_its_secret_seed(client: FlaskClient):
    today = daily.today()
    response = client.get("/api/v1/daily")
    assert response.status_code == 200
    body = response.get_json()
    assert body["date"] == today.isoformat()
    assert [puzzle["game"] for puzzle in body["puzzles"]] == GAME_NAMES
    for puzzle in body["puzzles"]:
        assert set(puzzle) == PUZZLE_KEYS
        assert puzzle["seed"] == daily.daily_seed(DAILY_KEY, puzzle["game"], today)
        assert puzzle["number"] == daily.puzzle_number(today)
        assert puzzle["date"] == today.isoformat()
        assert (puzzle["status"], puzzle["optimum"]) == ("pending", None)


def test_daily_gets_carry_cors_etag_and_cache_control_and_answer_304(client: FlaskClient):
    first = client.get("/api/v1/daily")
    assert first.headers["Access-Control-Allow-Origin"] == "*"
    assert "max-age=" in first.headers["Cache-Control"]
    assert "public" in first.headers["Cache-Control"]
    again = client.get("/api/v1/daily", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    assert again.data == b""
    dated = client.get(f"/api/v1/daily/{daily.today()}")
    assert dated.headers["ETag"] == first.headers["ETag"]


def test_a_solved_puzzle_changes_the_daily_etag(app: Flask, client: FlaskClient, api_store: Store):
    app.config["RALLY_CACHE_SECONDS"] = 0  # each process may otherwise answer from a 1 s cache
    before = client.get("/api/v1/daily")
    puzzle = todays_daily(api_store, FINISHING_GAME)
    result = record_solved(api_store, puzzle)
    after = client.get("/api/v1/daily", headers={"If-None-Match": before.headers["ETag"]})
    assert after.status_code == 200
    shown = next(p for p in after.get_json()["puzzles"] if p["game"] == puzzle.game)
    assert (shown["status"], shown["optimum"], shown["tiebreak"]) == (
        "solved",
        result.optimum,
        result.tiebreak,
    )


def test_an_earlier_date_has_its_own_puzzles(client: FlaskClient):
    yesterday = daily.today() - timedelta(days=1)
    response = client.get(f"/api/v1/daily/{yesterday}")
    assert response.cache_control.max_age == api.UNSETTLED_MAX_AGE  # its puzzles are pending
    body = response.get_json()
    assert body["date"] == yesterday.isoformat()
    assert [p["seed"] for p in body["puzzles"]] == [
        daily.daily_seed(DAILY_KEY, name, yesterday) for name in GAME_NAMES
    ]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (f"/api/v1/daily/{daily.today() + timedelta(days=1)}", 404),
        (f"/api/v1/daily/{daily.FIRST_DAY - timedelta(days=1)}", 404),
        ("/api/v1/daily/2026-02-30", 400),
        ("/api/v1/daily/yesterday", 400),
    ],
)
def test_a_date_without_a_published_daily_is_refused(client: FlaskClient, path: str, status: int):
    response = client.get(path)
    assert response.status_code == status
    assert response.get_json()["error"]


def test_a_future_daily_is_not_served_by_its_seed(client: FlaskClient, api_store: Store):
    tomorrow = todays_daily(api_store, FINISHING_GAME, daily.today() + timedelta(days=1))
    for path in ("", "/leaderboard", "/solution"):
        response = client.get(f"/api/v1/puzzles/{tomorrow.game}/{tomorrow.seed}{path}")
        assert response.status_code == 404


# Puzzles


@games
def test_a_new_seed_is_recorded_pending_and_queued_for_solving(
    game_name: str, client: FlaskClient, api_store: Store, redis_url: str
):
    response = client.get(f"/api/v1/puzzles/{game_name}/{PRACTICE_SEED}")
    assert response.status_code == 200
    body = response.get_json()
    rules_version = GAMES[game_name].rules_version
    assert body == {
        "game": game_name,
        "seed": PRACTICE_SEED,
        "number": None,
        "date": None,
        "rules_version": rules_version,
        "status": "pending",
        "optimum": None,
        "tiebreak": None,
    }
    assert api_store.get_puzzle(game_name, PRACTICE_SEED, rules_version) is not None
    job_id = f"solve-{game_name}-{PRACTICE_SEED}-{rules_version}"
    assert Job.exists(job_id, connection=redis.Redis.from_url(redis_url))


def test_a_daily_seed_is_recognised_before_the_scheduler_records_it(client: FlaskClient):
    today = daily.today()
    seed = daily.daily_seed(DAILY_KEY, FINISHING_GAME, today)
    body = client.get(f"/api/v1/puzzles/{FINISHING_GAME}/{seed}").get_json()
    assert (body["date"], body["number"]) == (today.isoformat(), daily.puzzle_number(today))


def test_the_games_are_listed(client: FlaskClient):
    games_listed = client.get("/api/v1/games").get_json()["games"]
    assert [game["name"] for game in games_listed] == GAME_NAMES
    for listed in games_listed:
        assert listed["max_actions"] == GAMES[listed["name"]].max_actions


# Runs


@games
def test_a_run_is_replayed_and_scored_by_the_server(
    game_name: str, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, game_name)
    game = get_game(game_name)
    actions = over_run(game, puzzle.seed)
    final = game.replay(puzzle.seed, actions)
    response = submit(client, puzzle, actions)
    assert response.status_code == 201
    run = response.get_json()
    assert (run["score"], run["tiebreak"], run["finished"]) == (
        game.score(final),
        game.tiebreak(final),
        game.is_finished(final),
    )
    assert run["official"] is game.is_finished(final)
    assert run["share_url"] == f"http://localhost/runs/{run['id']}"
    assert run["puzzle"]["seed"] == puzzle.seed
    assert client.get(f"/api/v1/runs/{run['id']}").get_json() == run


def test_a_score_sent_by_the_client_is_refused(client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    response = submit(client, puzzle, actions, score=10**6)
    assert response.status_code == 400
    assert "score" in response.get_json()["error"]
    assert api_store.leaderboard(puzzle.id) == []


def test_the_answer_carries_the_optimum_once_solved(client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    result = record_solved(api_store, puzzle)
    for variant in range(3):
        run = submit(client, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, variant))
        body = run.get_json()
        assert (body["optimum"], body["optimum_tiebreak"]) == (result.optimum, result.tiebreak)
        assert (body["score"], body["tiebreak"]) <= (result.optimum, result.tiebreak)


@games
def test_the_optimal_run_scores_the_optimum_and_is_official(
    game_name: str, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, game_name)
    result = record_solved(api_store, puzzle)
    run = submit(client, puzzle, result.actions).get_json()
    assert (run["score"], run["tiebreak"]) == (result.optimum, result.tiebreak)
    assert run["official"] is True


def test_only_the_first_finished_run_of_a_daily_is_official(client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    first = submit(client, puzzle, actions, name="Ada").get_json()
    second = submit(client, puzzle, actions).get_json()
    assert (first["official"], second["official"]) == (True, False)
    board = client.get(f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/leaderboard").get_json()
    assert [entry["run_id"] for entry in board["entries"]] == [first["id"]]
    assert board["entries"][0]["name"] == "Ada"
    assert board["histogram"] == [{"score": first["score"], "count": 1}]
    assert board["players"] == 1


def test_official_runs_and_the_leaderboard_on_each_database(make_app, database_url: str):
    app = make_app(database=database_url)
    client, _store, puzzle, actions = a_daily_to_finish(app)
    other = finished_run(get_game(puzzle.game), puzzle.seed, 1)
    runs = [submit(client, puzzle, actions), submit(client, puzzle, other)]
    runs.append(submit(client_of(app), puzzle, other, name="Bo"))
    assert [run.get_json()["official"] for run in runs] == [True, False, True]
    board = client.get(f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/leaderboard").get_json()
    assert sorted(entry["run_id"] for entry in board["entries"]) == sorted(
        runs[index].get_json()["id"] for index in (0, 2)
    )
    assert sum(bar["count"] for bar in board["histogram"]) == 2
    assert board["players"] == 2


def test_practice_runs_are_never_official(client: FlaskClient):
    game_name = FINISHING_GAME
    actions = finished_run(get_game(game_name), PRACTICE_SEED)
    run = client.post(
        f"/api/v1/puzzles/{game_name}/{PRACTICE_SEED}/runs", json={"actions": actions}
    ).get_json()
    assert run["official"] is False
    assert run["puzzle"]["date"] is None


def test_the_leaderboard_ranks_players_and_counts_scores(app: Flask, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    game = get_game(puzzle.game)
    runs = [finished_run(game, puzzle.seed, variant) for variant in range(4)]
    for number, actions in enumerate(runs):
        assert submit(client_of(app), puzzle, actions, name=f"P{number}").status_code == 201
    board = client_of(app).get(f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/leaderboard")
    entries = board.get_json()["entries"]
    results = [(entry["score"], entry["tiebreak"]) for entry in entries]
    assert len(entries) == len(runs)
    assert results == sorted(results, reverse=True)
    for position, entry in enumerate(entries, start=1):
        first_equal = results.index((entry["score"], entry["tiebreak"])) + 1
        assert entry["rank"] == first_equal <= position
    histogram = board.get_json()["histogram"]
    assert [bar["score"] for bar in histogram] == sorted({score for score, _ in results})
    assert sum(bar["count"] for bar in histogram) == len(runs)
    assert board.get_json()["players"] == len(runs)


def test_an_illegal_run_names_the_action_and_rule_and_stores_nothing(
    client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    game = get_game(puzzle.game)
    actions = finished_run(game, puzzle.seed)
    broken = [*actions[:3], {"not": "an action"}, *actions[4:]]
    response = submit(client, puzzle, broken)
    assert response.status_code == 422
    body = response.get_json()
    assert body["index"] == 3
    assert body["reason"]
    assert "3" in body["error"]
    assert api_store.player_count(puzzle.id) == 0
    assert COOKIE_NAME not in response.headers.get("Set-Cookie", "")


def test_a_run_that_is_not_over_is_refused(client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    response = submit(client, puzzle, actions[:-1])
    assert response.status_code == 422
    assert response.get_json()["index"] == len(actions) - 1
    assert api_store.player_count(puzzle.id) == 0


def test_an_unknown_run_is_a_404(client: FlaskClient):
    response = client.get("/api/v1/runs/no-such-run")
    assert response.status_code == 404
    assert response.get_json()["status"] == 404


# Players


def test_the_first_write_hands_out_a_signed_player_cookie(client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    first = submit(client, puzzle, actions)
    assert COOKIE_NAME in first.headers["Set-Cookie"]
    assert "HttpOnly" in first.headers["Set-Cookie"]
    second = submit(client, puzzle, actions)
    assert "Set-Cookie" not in second.headers
    assert api_store.player_count(puzzle.id) == 1


def test_a_forged_player_cookie_is_a_new_player(client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    assert submit(client, puzzle, actions).get_json()["official"]
    stolen = client.get_cookie(COOKIE_NAME).value
    forged_id = "someone-else." + stolen.rsplit(".", 1)[1]
    client.set_cookie(COOKIE_NAME, forged_id)
    assert submit(client, puzzle, actions).get_json()["official"] is True
    assert api_store.player_count(puzzle.id) == 2


# Solutions


def test_todays_solution_is_hidden_until_the_player_finishes_a_run(
    client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    result = record_solved(api_store, puzzle)
    path = f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/solution"
    hidden = client.get(path)
    assert hidden.status_code == 403
    assert hidden.get_json()["error"]
    submit(client, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, 1))
    shown = client.get(path)
    assert shown.status_code == 200
    assert shown.get_json()["actions"] == result.actions


def test_a_past_daily_and_a_practice_solution_are_public(client: FlaskClient, api_store: Store):
    yesterday = todays_daily(api_store, FINISHING_GAME, daily.today() - timedelta(days=1))
    practice = api_store.ensure_puzzle(
        FINISHING_GAME, PRACTICE_SEED, GAMES[FINISHING_GAME].rules_version
    )
    for puzzle in (yesterday, practice):
        result = record_solved(api_store, puzzle)
        response = client.get(f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/solution")
        assert response.status_code == 200
        assert response.get_json()["actions"] == result.actions


def test_an_unsolved_solution_is_202_pending(client: FlaskClient):
    client.get(f"/api/v1/puzzles/{FINISHING_GAME}/{PRACTICE_SEED}")
    response = client.get(f"/api/v1/puzzles/{FINISHING_GAME}/{PRACTICE_SEED}/solution")
    assert response.status_code == 202
    assert (response.get_json()["status"], response.get_json()["actions"]) == ("pending", None)


# Play


@games
def test_play_shows_the_view_and_legal_actions_after_a_prefix(game_name: str, client: FlaskClient):
    game = get_game(game_name)
    actions = over_run(game, PRACTICE_SEED)
    for prefix in (actions[:0], actions[: len(actions) // 2], actions):
        state = game.replay(PRACTICE_SEED, prefix)
        path = f"/api/v1/play/{game_name}/{PRACTICE_SEED}"
        response = client.post(path, json={"actions": prefix})
        assert response.status_code == 200
        assert response.get_json() == {
            "view": game.view(state),
            "legal_actions": game.legal_actions(state),
            "over": game.is_over(state),
            "finished": game.is_finished(state),
            "score": game.score(state),
            "tiebreak": game.tiebreak(state),
            "actions": prefix,
        }


def test_play_names_the_first_illegal_action(client: FlaskClient):
    game = get_game(FINISHING_GAME)
    actions = finished_run(game, PRACTICE_SEED)
    broken = [*actions[:5], {"not": "an action"}]
    response = client.post(f"/api/v1/play/{game.name}/{PRACTICE_SEED}", json={"actions": broken})
    assert response.status_code == 422
    assert response.get_json()["index"] == 5


# Rate limits


def a_daily_to_finish(app: Flask) -> tuple[FlaskClient, Store, PuzzleRecord, list[Any]]:
    """A new client of app, its store, today's daily and a finished run of it."""
    store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME)
    return client_of(app), store, puzzle, finished_run(get_game(puzzle.game), puzzle.seed)


def test_writes_over_the_limit_get_429_with_retry_after(make_app):
    app = make_app(RALLY_WRITES_PER_MINUTE="2")
    client, store, puzzle, actions = a_daily_to_finish(app)
    statuses = [submit(client, puzzle, actions).status_code for _ in range(3)]
    assert statuses == [201, 201, 429]
    refused = submit(client, puzzle, actions)
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.get_json()["retry_after"] == int(refused.headers["Retry-After"])
    assert len(store.leaderboard(puzzle.id)) == 1
    assert submit(client_of(app), puzzle, actions).status_code == 201  # another address


def test_new_seeds_over_the_limit_get_429_but_known_ones_are_served(make_app):
    app = make_app(RALLY_NEW_SEEDS_PER_HOUR="1")
    client = client_of(app)
    game_name = FINISHING_GAME
    assert client.get(f"/api/v1/puzzles/{game_name}/first-seed").status_code == 200
    assert client.get(f"/api/v1/puzzles/{game_name}/second-seed").status_code == 429
    assert client.get(f"/api/v1/puzzles/{game_name}/first-seed").status_code == 200
    store = app.extensions["rally"].store
    assert store.get_puzzle(game_name, "second-seed", GAMES[game_name].rules_version) is None


def test_runs_are_accepted_while_redis_is_down(make_app):
    client, store, puzzle, actions = a_daily_to_finish(make_app(redis="redis://127.0.0.1:1/0"))
    assert submit(client, puzzle, actions).status_code == 201
    assert client.get(f"/api/v1/puzzles/{FINISHING_GAME}/{PRACTICE_SEED}").status_code == 200
    assert client.get("/api/v1/daily").status_code == 200
    assert len(store.leaderboard(puzzle.id)) == 1
