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
from service.clock import Clock
from service.domain import daily
from service.jobs.jobs import store_solution
from service.jobs.queue import solve_job_id
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web.api import dailies
from service.web.players import COOKIE_NAME
from solver import SolveResult, solve
from tests.api_support import (
    DAILY_KEY,
    FINISHING_GAME,
    AppFactory,
    client_of,
    finished_run,
    over_run,
    play_attempt,
    todays_daily,
)

GAME_NAMES = sorted(GAMES)
games = pytest.mark.parametrize("game_name", GAME_NAMES)
PUZZLE_KEYS = {
    "game", "seed", "number", "date", "rules_version", "status", "optimum", "tiebreak", "par",
    "par_tiebreak", "par_computed",
    "commitment", "line_opens_at",
}  # fmt: skip
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


def test_today_has_one_puzzle_per_game_with_its_commitment_and_no_seed(client: FlaskClient):
    today = daily.today()
    response = client.get("/api/v1/daily")
    assert response.status_code == 200
    body = response.get_json()
    assert body["date"] == today.isoformat()
    assert [puzzle["game"] for puzzle in body["puzzles"]] == GAME_NAMES
    for puzzle in body["puzzles"]:
        assert set(puzzle) == PUZZLE_KEYS
        seed = daily.daily_seed(DAILY_KEY, puzzle["game"], today)
        assert puzzle["seed"] is None
        assert puzzle["commitment"] == daily.commitment(
            puzzle["game"], puzzle["rules_version"], seed
        )
        assert puzzle["number"] == daily.puzzle_number(today)
        assert puzzle["date"] == today.isoformat()
        assert puzzle["line_opens_at"] == daily.revealed_at(today).isoformat()
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
    app.extensions["rally"].cache.seconds = 0  # each process may otherwise answer from a 1 s cache
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


def test_an_earlier_date_has_its_own_puzzles_with_their_seeds_revealed(client: FlaskClient):
    yesterday = daily.today() - timedelta(days=1)
    response = client.get(f"/api/v1/daily/{yesterday}")
    assert response.cache_control.max_age == dailies.UNSETTLED_MAX_AGE  # its puzzles are pending
    body = response.get_json()
    assert body["date"] == yesterday.isoformat()
    seeds = [daily.daily_seed(DAILY_KEY, name, yesterday) for name in GAME_NAMES]
    assert [p["seed"] for p in body["puzzles"]] == seeds
    for puzzle, seed in zip(body["puzzles"], seeds, strict=True):
        assert puzzle["commitment"] == daily.commitment(
            puzzle["game"], puzzle["rules_version"], seed
        )


@pytest.mark.parametrize("days_ahead", [3, 7])
def test_the_coming_dailies_publish_their_commitments_only(make_app: AppFactory, days_ahead: int):
    """Those of the days RALLY_DAYS_AHEAD covers (a week by default)."""
    app = make_app(**({} if days_ahead == 7 else {"RALLY_DAYS_AHEAD": str(days_ahead)}))
    api_store = app.extensions["rally"].store
    today = daily.today()
    coming = [
        todays_daily(api_store, FINISHING_GAME, today + timedelta(days=n)) for n in (1, days_ahead)
    ]
    todays_daily(api_store, FINISHING_GAME, today + timedelta(days=days_ahead + 1))  # beyond
    body = client_of(app).get("/api/v1/daily/upcoming").get_json()
    assert body["puzzles"] == [
        {
            "game": puzzle.game,
            "number": puzzle.number,
            "date": puzzle.daily_date.isoformat(),
            "rules_version": puzzle.rules_version,
            "commitment": daily.commitment(puzzle.game, puzzle.rules_version, puzzle.seed),
        }
        for puzzle in coming
    ]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/daily/{tomorrow}", 404),
        ("/api/v1/daily/{before_the_first}", 404),
        ("/api/v1/daily/2026-02-30", 400),
        ("/api/v1/daily/yesterday", 400),
        (f"/api/v1/daily/{{tomorrow}}/{FINISHING_GAME}/leaderboard", 404),
        (f"/api/v1/daily/{{tomorrow}}/{FINISHING_GAME}/solution", 404),
        ("/api/v1/daily/{today}/no-such-game/leaderboard", 404),
    ],
)
def test_a_date_without_a_published_daily_is_refused(client: FlaskClient, path: str, status: int):
    """The days are read as the test runs, not as it is collected: a run across midnight
    would otherwise ask for today as if it were tomorrow."""
    today = daily.today()
    days = {
        "today": today,
        "tomorrow": today + timedelta(days=1),
        "before_the_first": daily.FIRST_DAY - timedelta(days=1),
    }
    response = client.get(path.format(**days))
    assert response.status_code == status
    assert response.get_json()["error"]


@pytest.mark.parametrize("days_ahead", [0, 1])
def test_todays_and_coming_dailies_are_never_reachable_by_seed(
    days_ahead: int, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME, daily.today() + timedelta(days=days_ahead))
    actions = over_run(get_game(puzzle.game), puzzle.seed)
    base = f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}"
    answers = [client.get(base + path) for path in ("", "/leaderboard", "/solution")]
    answers.append(client.post(base, json={}))
    answers.append(submit(client, puzzle, actions))
    answers.append(client.post(f"/api/v1/play/{puzzle.game}/{puzzle.seed}", json={"actions": []}))
    for answer in answers:
        assert answer.status_code == 404
        assert puzzle.seed not in answer.get_data(as_text=True)
    assert api_store.players.count() == 0


@pytest.mark.parametrize("form", [daily.daily_seed, daily.legacy_daily_seed])
def test_a_daily_seed_not_yet_recorded_is_still_hidden(form, client: FlaskClient, api_store: Store):
    seed = form(DAILY_KEY, FINISHING_GAME, daily.today())
    assert client.get(f"/api/v1/puzzles/{FINISHING_GAME}/{seed}").status_code == 404
    assert client.post(f"/api/v1/puzzles/{FINISHING_GAME}/{seed}", json={}).status_code == 404
    assert api_store.puzzles.pending() == []


def test_a_past_daily_seed_is_recognised_as_that_daily(client: FlaskClient):
    yesterday = daily.today() - timedelta(days=1)
    seed = daily.daily_seed(DAILY_KEY, FINISHING_GAME, yesterday)
    body = client.post(f"/api/v1/puzzles/{FINISHING_GAME}/{seed}", json={}).get_json()
    assert (body["date"], body["number"]) == (yesterday.isoformat(), daily.puzzle_number(yesterday))
    assert body["seed"] == seed


def test_an_old_form_seed_of_a_day_never_recorded_is_a_practice_puzzle(client: FlaskClient):
    """A day recorded from now on has a 128-bit seed: the 64-bit one of its date is not it."""
    yesterday = daily.today() - timedelta(days=1)
    seed = daily.legacy_daily_seed(DAILY_KEY, FINISHING_GAME, yesterday)
    body = client.post(f"/api/v1/puzzles/{FINISHING_GAME}/{seed}", json={}).get_json()
    assert (body["date"], body["number"], body["seed"]) == (None, None, seed)


# Puzzles


@games
def test_a_new_seed_asked_for_is_recorded_pending_and_queued_for_solving(
    game_name: str, client: FlaskClient, api_store: Store, redis_url: str
):
    path = f"/api/v1/puzzles/{game_name}/{PRACTICE_SEED}"
    response = client.post(path, json={})
    assert response.status_code == 202
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
        "par": None,
        "par_tiebreak": None,
        "par_computed": False,
        "commitment": daily.commitment(game_name, rules_version, PRACTICE_SEED),
        "line_opens_at": None,
    }
    assert api_store.puzzles.get(game_name, PRACTICE_SEED, rules_version) is not None
    job_id = solve_job_id(game_name, PRACTICE_SEED, rules_version)
    assert Job.exists(job_id, connection=redis.Redis.from_url(redis_url))
    again = client.post(path, json={})
    assert (again.status_code, again.get_json()) == (200, body)
    assert (client.get(path).status_code, client.get(path).get_json()) == (200, body)


def test_a_get_never_queues_work_and_an_unknown_seed_says_how_to_ask_for_it(
    client: FlaskClient, api_store: Store, redis_url: str
):
    """A page of another site can make its visitors' browsers GET anything: no GET may
    record a seed or spend the solver's queues and the visitors' budgets."""
    path = f"/api/v1/puzzles/{FINISHING_GAME}/{PRACTICE_SEED}"
    for asked in ("", "/leaderboard", "/solution"):
        answer = client.get(path + asked, headers={"Sec-Fetch-Site": "cross-site"})
        assert answer.status_code == 404
        assert (
            f"POST /api/v1/puzzles/{FINISHING_GAME}/<seed> and the JSON body {{}}"
            in (answer.get_json()["error"])
        )
    cross_site = client.post(path, json={}, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross_site.status_code == 403
    assert client.post(path, data="{}", content_type="text/plain").status_code == 403
    assert client.post(path, json={"seed": "x"}).status_code == 400
    assert api_store.puzzles.pending() == []
    assert redis.Redis.from_url(redis_url).keys("rq:job:*") == []


def test_the_games_are_listed(client: FlaskClient):
    games_listed = client.get("/api/v1/games").get_json()["games"]
    assert [game["name"] for game in games_listed] == GAME_NAMES
    assert [game["max_actions"] for game in games_listed] == [
        GAMES[name].max_actions for name in GAME_NAMES
    ]


def test_each_game_says_what_its_tiebreak_counts_and_which_way_is_better(client: FlaskClient):
    listed = {game["name"]: game["tiebreak"] for game in client.get("/api/v1/games").json["games"]}
    assert listed == {
        "crazy-rally": {
            "counts": "final speed",
            "better": "higher",
            "sign": 1,
            "description": "final speed, higher is better",
        },
        "rallye-raser": {
            "counts": "rounds",
            "better": "fewer",
            "sign": -1,
            "description": "rounds, fewer is better, given as minus the rounds",
        },
    }


@games
def test_a_tiebreak_times_its_sign_is_what_the_game_counts(client: FlaskClient, game_name: str):
    """What a client reads back from a tie-break with /games' sign is the count it names:
    Rallye Raser's rounds played, Crazy Rally's final speed."""
    games_listed = client.get("/api/v1/games").json["games"]
    (listed,) = [game for game in games_listed if game["name"] == game_name]
    game = GAMES[game_name]
    final = game.replay(PRACTICE_SEED, over_run(game, PRACTICE_SEED))
    counted = {"rallye-raser": "rounds_played", "crazy-rally": "speed"}[game_name]
    assert listed["tiebreak"]["sign"] * game.tiebreak(final) == final[counted] > 0


# Practice runs


def practice(store: Store, game_name: str = FINISHING_GAME) -> PuzzleRecord:
    return store.puzzles.ensure(game_name, PRACTICE_SEED, GAMES[game_name].rules_version)


@games
def test_a_run_is_replayed_and_scored_by_the_server(
    game_name: str, client: FlaskClient, api_store: Store
):
    puzzle = practice(api_store, game_name)
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
    assert run["official"] is False
    assert run["yours"] is True
    assert run["share_url"] == f"http://127.0.0.1:8000/runs/{run['id']}"
    assert (run["seed"], run["actions"]) == (puzzle.seed, actions)
    assert client.get(f"/api/v1/runs/{run['id']}").get_json() == run


def test_the_share_url_comes_from_the_public_url_never_the_host(make_app):
    app = make_app(RALLY_PUBLIC_URL="https://rally.example.org/")
    client = client_of(app)
    puzzle = practice(app.extensions["rally"].store)
    answer = client.post(
        f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/runs",
        json={"actions": over_run(get_game(puzzle.game), puzzle.seed)},
        headers={"Host": "evil.example.com"},
    )
    assert answer.get_json()["share_url"].startswith("https://rally.example.org/runs/")


def test_a_score_sent_by_the_client_is_refused(client: FlaskClient, api_store: Store):
    puzzle = practice(api_store)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    response = submit(client, puzzle, actions, score=10**6)
    assert response.status_code == 400
    assert "score" in response.get_json()["error"]
    assert api_store.players.count() == 0


def test_the_answer_carries_the_optimum_once_solved(client: FlaskClient, api_store: Store):
    puzzle = practice(api_store)
    result = record_solved(api_store, puzzle)
    for variant in range(3):
        run = submit(client, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, variant))
        body = run.get_json()
        assert (body["optimum"], body["optimum_tiebreak"]) == (result.optimum, result.tiebreak)
        assert (body["score"], body["tiebreak"]) <= (result.optimum, result.tiebreak)


def test_a_past_daily_is_practice_by_seed_and_never_official(client: FlaskClient, api_store: Store):
    yesterday = todays_daily(api_store, FINISHING_GAME, daily.today() - timedelta(days=1))
    result = record_solved(api_store, yesterday)
    run = submit(client, yesterday, result.actions).get_json()
    assert (run["score"], run["tiebreak"], run["official"]) == (
        result.optimum,
        result.tiebreak,
        False,
    )
    assert run["date"] == yesterday.daily_date.isoformat()
    play = client.post(
        f"/api/v1/play/{yesterday.game}/{yesterday.seed}", json={"actions": result.actions}
    )
    assert (play.get_json()["score"], play.get_json()["over"]) == (result.optimum, True)
    assert api_store.runs.leaderboard(yesterday.id) == []


def test_an_illegal_run_names_the_action_and_rule_and_stores_nothing(
    client: FlaskClient, api_store: Store
):
    puzzle = practice(api_store)
    game = get_game(puzzle.game)
    actions = finished_run(game, puzzle.seed)
    broken = [*actions[:3], {"type": "not-an-action"}, *actions[4:]]
    response = submit(client, puzzle, broken)
    assert response.status_code == 422
    body = response.get_json()
    assert body["index"] == 3
    assert body["reason"]
    assert "3" in body["error"]
    assert api_store.runs.player_count(puzzle.id) == 0
    assert COOKIE_NAME not in response.headers.get("Set-Cookie", "")


def test_a_run_that_is_not_over_is_refused(client: FlaskClient, api_store: Store):
    puzzle = practice(api_store)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    response = submit(client, puzzle, actions[:-1])
    assert response.status_code == 422
    assert response.get_json()["index"] == len(actions) - 1
    assert api_store.runs.player_count(puzzle.id) == 0


def test_an_unknown_run_is_a_404(client: FlaskClient):
    response = client.get("/api/v1/runs/no-such-run")
    assert response.status_code == 404
    assert response.get_json()["status"] == 404


# Official runs: attempts on the daily's day


@games
def test_the_optimal_line_played_through_the_attempt_scores_the_optimum_and_is_official(
    game_name: str, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, game_name)
    result = record_solved(api_store, puzzle)
    over = play_attempt(client, puzzle, result.actions)
    run = client.get(f"/api/v1/runs/{over['run']}").get_json()
    assert (run["score"], run["tiebreak"], run["official"]) == (
        result.optimum,
        result.tiebreak,
        True,
    )
    assert (run["optimum"], run["optimum_tiebreak"]) == (result.optimum, result.tiebreak)


def test_the_leaderboard_ranks_players_and_counts_scores(app: Flask, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    game = get_game(puzzle.game)
    runs = [finished_run(game, puzzle.seed, variant) for variant in range(4)]
    for number, actions in enumerate(runs):
        play_attempt(client_of(app), puzzle, actions, name=f"P{number}")
    board = client_of(app).get(f"/api/v1/daily/{daily.today()}/{puzzle.game}/leaderboard")
    entries = board.get_json()["entries"]
    results = [(entry["score"], entry["tiebreak"]) for entry in entries]
    assert len(entries) == len(runs)
    assert results == sorted(results, reverse=True)
    assert {entry["name"] for entry in entries} == {f"P{n}" for n in range(4)}
    for position, entry in enumerate(entries, start=1):
        first_equal = results.index((entry["score"], entry["tiebreak"])) + 1
        assert entry["rank"] == first_equal <= position
    histogram = board.get_json()["histogram"]
    assert [bar["score"] for bar in histogram] == sorted({score for score, _ in results})
    assert sum(bar["count"] for bar in histogram) == len(runs)
    assert board.get_json()["players"] == len(runs)
    assert board.get_json()["puzzle"]["seed"] is None


def test_official_runs_and_the_leaderboard_on_each_database(make_app, database_url: str):
    app = make_app(database=database_url)
    store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME)
    first, second = (client_of(app), client_of(app))
    play_attempt(first, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, 0))
    play_attempt(second, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, 1), name="Bo")
    submit(first, practice(store), over_run(get_game(puzzle.game), PRACTICE_SEED))
    board = first.get(f"/api/v1/daily/{daily.today()}/{puzzle.game}/leaderboard").get_json()
    assert len(board["entries"]) == 2
    assert sum(bar["count"] for bar in board["histogram"]) == 2
    assert board["players"] == 2


# Players


def test_the_first_write_hands_out_a_signed_player_cookie(client: FlaskClient, api_store: Store):
    puzzle = practice(api_store)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    first = submit(client, puzzle, actions)
    assert COOKIE_NAME in first.headers["Set-Cookie"]
    assert "HttpOnly" in first.headers["Set-Cookie"]
    assert "SameSite=Lax" in first.headers["Set-Cookie"]
    second = submit(client, puzzle, actions)
    assert "Set-Cookie" not in second.headers
    assert api_store.runs.player_count(puzzle.id) == 1


def test_a_forged_player_cookie_is_a_new_player(client: FlaskClient, api_store: Store):
    puzzle = practice(api_store)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    assert submit(client, puzzle, actions).status_code == 201
    stolen = client.get_cookie(COOKIE_NAME).value
    forged_id = "someone-else." + stolen.rsplit(".", 1)[1]
    client.set_cookie(COOKIE_NAME, forged_id)
    assert submit(client, puzzle, actions).get_json()["yours"] is True
    assert api_store.runs.player_count(puzzle.id) == 2


# Solutions


def test_todays_solution_is_hidden_from_everyone_until_the_day_is_over(
    client: FlaskClient, api_store: Store, clock: Clock
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    result = record_solved(api_store, puzzle)
    path = f"/api/v1/daily/{daily.today()}/{puzzle.game}/solution"
    opens = daily.revealed_at(puzzle.daily_date)
    hidden = client.get(path)
    assert hidden.status_code == 403
    assert hidden.get_json()["line_opens_at"] == opens.isoformat()
    assert "00:00 UTC" in hidden.get_json()["error"]
    # The player whose attempt is over is refused too: a second identity of theirs would
    # play the line as its official run.
    play_attempt(client, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, 1))
    assert client.get(path).status_code == 403
    clock.set(opens - timedelta(seconds=1))
    assert client.get(path).status_code == 403
    clock.set(opens)
    shown = client.get(path)
    assert shown.status_code == 200
    assert shown.get_json()["actions"] == result.actions
    assert shown.get_json()["seed"] == puzzle.seed


def test_a_past_daily_and_a_practice_solution_are_public(client: FlaskClient, api_store: Store):
    yesterday = todays_daily(api_store, FINISHING_GAME, daily.today() - timedelta(days=1))
    for puzzle in (yesterday, practice(api_store)):
        result = record_solved(api_store, puzzle)
        response = client.get(f"/api/v1/puzzles/{puzzle.game}/{puzzle.seed}/solution")
        assert response.status_code == 200
        assert response.get_json()["actions"] == result.actions
    dated = client.get(f"/api/v1/daily/{yesterday.daily_date}/{yesterday.game}/solution")
    assert dated.get_json()["seed"] == yesterday.seed


def test_an_unsolved_solution_is_202_pending(client: FlaskClient):
    client.post(f"/api/v1/puzzles/{FINISHING_GAME}/{PRACTICE_SEED}", json={})
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
            "stakes": game.stakes(state, game.legal_actions(state)),
            "over": game.is_over(state),
            "finished": game.is_finished(state),
            "score": game.score(state),
            "tiebreak": game.tiebreak(state),
            "actions": prefix,
        }


def test_play_names_the_first_illegal_action(client: FlaskClient):
    game = get_game(FINISHING_GAME)
    actions = finished_run(game, PRACTICE_SEED)
    broken = [*actions[:5], {"type": "not-an-action"}]
    response = client.post(f"/api/v1/play/{game.name}/{PRACTICE_SEED}", json={"actions": broken})
    assert response.status_code == 422
    assert response.get_json()["index"] == 5


# Rate limits


def a_practice_run(app: Flask) -> tuple[FlaskClient, Store, PuzzleRecord, list[Any]]:
    """A new client of app, its store, a practice puzzle and a finished run of it."""
    store = app.extensions["rally"].store
    puzzle = practice(store)
    return client_of(app), store, puzzle, finished_run(get_game(puzzle.game), puzzle.seed)


def test_writes_over_the_limit_get_429_with_retry_after(make_app):
    app = make_app(RALLY_WRITES_PER_MINUTE="2")
    client, store, puzzle, actions = a_practice_run(app)
    statuses = [submit(client, puzzle, actions).status_code for _ in range(3)]
    assert statuses == [201, 201, 429]
    refused = submit(client, puzzle, actions)
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.get_json()["retry_after"] == int(refused.headers["Retry-After"])
    assert store.runs.player_count(puzzle.id) == 1
    assert submit(client_of(app), puzzle, actions).status_code == 201  # another address


def test_new_seeds_over_the_limit_get_429_but_known_ones_are_served(make_app):
    app = make_app(RALLY_NEW_SEEDS_PER_HOUR="1")
    client = client_of(app)
    game_name = FINISHING_GAME
    ask = functools.partial(client.post, json={})
    assert ask(f"/api/v1/puzzles/{game_name}/first-seed").status_code == 202
    assert ask(f"/api/v1/puzzles/{game_name}/second-seed").status_code == 429
    assert ask(f"/api/v1/puzzles/{game_name}/first-seed").status_code == 200
    assert client.get(f"/api/v1/puzzles/{game_name}/first-seed").status_code == 200
    store = app.extensions["rally"].store
    assert store.puzzles.get(game_name, "second-seed", GAMES[game_name].rules_version) is None


def test_runs_and_attempts_are_accepted_while_redis_is_down(make_app):
    app = make_app(redis="redis://127.0.0.1:1/0")
    client, store, puzzle, actions = a_practice_run(app)
    assert submit(client, puzzle, actions).status_code == 201
    assert client.get(f"/api/v1/puzzles/{FINISHING_GAME}/{PRACTICE_SEED}").status_code == 200
    assert client.get("/api/v1/daily").status_code == 200
    today = todays_daily(store, FINISHING_GAME)
    play_attempt(client, today, finished_run(get_game(today.game), today.seed))
    assert len(store.runs.leaderboard(today.id)) == 1
