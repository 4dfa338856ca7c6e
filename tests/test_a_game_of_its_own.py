"""A game is served from its kit alone: the tests' own small game (tests/hill_climb.py),
registered by one call, is played in the terminal, solved, and served by the API and its
OpenAPI document, and (tests/test_browser.py) played on the play page's generic board.
Nothing outside the tests names it; once it is removed again, nothing serves it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Locator, Page, expect

from puzzles import GAMES
from service.jobs.jobs import store_solution
from service.operations.cli import main
from service.storage.store import Store
from solver import solve
from solver.expert import par
from solver.registry import registered
from tests import hill_climb
from tests.api_support import AppFactory, client_of, play_attempt, todays_daily
from tests.browser_support import (
    STEP_TIMEOUT_MS,
    PageWatch,
    expect_accessible,
    expect_moves,
    live_server,
    screenshot,
    wait_until_idle,
)

NAME = hill_climb.GAME.name
SEED = "climb-1"


@pytest.fixture
def hill_climb_registered() -> Iterator[None]:
    with registered(hill_climb.KIT):
        yield
    assert NAME not in GAMES


def test_rally_play_plays_it_in_the_terminal(hill_climb_registered: None):
    game = hill_climb.GAME
    state, answers = game.new_game(SEED), []
    while not game.is_over(state):
        answers.append("0")
        state = game.apply(state, game.legal_actions(state)[0])
    result = CliRunner().invoke(main, ["play", NAME, SEED], input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    assert "energy: 4" in result.output and '[0] {"type": "push", "effort": 1}' in result.output
    assert f"score: {game.score(state)} (tie-break {game.tiebreak(state)})" in result.output


def test_rally_solve_proves_its_optimum_with_a_witness(hill_climb_registered: None):
    result = CliRunner().invoke(main, ["solve", NAME, SEED, "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    final = hill_climb.GAME.replay(SEED, answer["actions"])
    reached = (hill_climb.GAME.score(final), hill_climb.GAME.tiebreak(final))
    assert reached == (answer["optimum"], answer["tiebreak"]) and answer["proved"]
    assert answer["rules_version"] == "hc-1"


def test_the_expert_plays_it_without_foresight(hill_climb_registered: None):
    expert = par(NAME, SEED)
    optimum = solve(NAME, SEED)
    assert expert["par"] is None or expert["par"] <= (optimum.optimum or 0)


def body_of(document: dict[str, Any], path: str) -> Any:
    return document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


def test_the_openapi_document_follows_the_registry(make_app: AppFactory):
    """The app is made before the game is registered: what it serves is read from the
    registry as it is asked for, so the game comes, and goes, with its registration."""
    client = client_of(make_app())
    with registered(hill_climb.KIT):
        document = client.get("/api/v1/openapi.json").get_json()
        assert NAME in document["components"]["schemas"]["Puzzle"]["properties"]["game"]["enum"]
        actions = body_of(document, f"/play/{NAME}/{{seed}}")["properties"]["actions"]
        assert actions["maxItems"] == hill_climb.MAX_TURNS
        marks = document["components"]["schemas"]["Share"]["properties"]["marks"]
        assert {"calm", "breeze", "gust"} <= set(marks["items"]["enum"])
        too_long = {"actions": [{"type": "rest"}] * (hill_climb.MAX_TURNS + 1)}
        assert client.post(f"/api/v1/play/{NAME}/{SEED}", json=too_long).status_code == 400
    document = client.get("/api/v1/openapi.json").get_json()
    assert f"/play/{NAME}/{{seed}}" not in document["paths"]
    assert client.post(f"/api/v1/play/{NAME}/{SEED}", json={"actions": []}).status_code == 404


def test_the_api_lists_it_and_shows_its_legal_actions_and_stakes(
    hill_climb_registered: None, client: FlaskClient
):
    games = client.get("/api/v1/games").get_json()["games"]
    assert {
        "name": NAME,
        "title": "Hill Climb",
        "rules_version": "hc-1",
        "max_actions": 6,
        "tiebreak": {
            "counts": "turns",
            "better": "fewer",
            "sign": -1,
            "description": "turns, fewer is better, given as minus the turns",
        },
    } in games
    answer = client.post(f"/api/v1/play/{NAME}/{SEED}", json={"actions": []}).get_json()
    assert answer["legal_actions"] == [
        {"type": "push", "effort": 1},
        {"type": "push", "effort": 2},
        {"type": "rest"},
    ]
    assert answer["stakes"]["score_now"] == 4 + 2 * hill_climb.MAX_TURNS
    assert answer["stakes"]["notes"][2] == [{"kind": "energy", "text": "energy 4 → 5"}]
    refused = client.post(
        f"/api/v1/play/{NAME}/{SEED}", json={"actions": [{"type": "push", "effort": 3}]}
    )
    assert refused.status_code == 422 and "HC-3" in refused.get_json()["reason"]


def test_a_practice_puzzle_of_it_is_asked_for_and_a_run_submitted(
    hill_climb_registered: None, client: FlaskClient
):
    asked = client.post(f"/api/v1/puzzles/{NAME}/{SEED}", json={})
    assert asked.status_code == 202 and asked.get_json()["status"] == "pending"
    line = hill_climb.greedy_actions(SEED)
    submitted = client.post(f"/api/v1/puzzles/{NAME}/{SEED}/runs", json={"actions": line})
    assert submitted.status_code == 201, submitted.get_json()
    run = submitted.get_json()
    final = hill_climb.GAME.replay(SEED, line)
    assert (run["score"], run["tiebreak"]) == (hill_climb.GAME.score(final), -len(line))
    share = client.get(f"/api/v1/runs/{run['id']}/share").get_json()
    assert len(share["marks"]) == len(line) and "Hill Climb" in share["text"]


def test_todays_daily_of_it_is_played_through_an_attempt(
    hill_climb_registered: None, client: FlaskClient, api_store: Store
):
    today = client.get("/api/v1/daily").get_json()
    assert NAME in [puzzle["game"] for puzzle in today["puzzles"]]
    puzzle = todays_daily(api_store, NAME)
    optimum = solve(NAME, puzzle.seed)
    store_solution(api_store, puzzle.id, optimum)
    over = play_attempt(client, puzzle, optimum.actions)
    assert over["over"] and over["score"] == optimum.optimum, (over, optimum)
    run = client.get(f"/api/v1/runs/{over['run']}").get_json()
    assert (run["official"], run["optimum"]) == (True, optimum.optimum)


# ----- the play page ------------------------------------------------------------------------
def action_button(page: Page, action: dict[str, Any]) -> Locator:
    """The generic board's button of an action (its focus key: the action's fields, by
    name, as JSON)."""
    shown = json.dumps(sorted(action.items()), separators=(",", ":"))
    return page.locator(f"#board [data-focus-key='action:{shown}']")


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_the_play_page_serves_it_on_the_generic_board(
    width: int, make_app: AppFactory, browser: Browser, watch: PageWatch
):
    """Played by clicks to the top along its optimal line, submitted, and replayed on the
    result page: every page accessible (axe) and fitting the screen."""
    app = make_app(RALLY_NEW_SEEDS_PER_HOUR="1000", RALLY_NEW_PLAYERS_PER_HOUR="1000")
    line = hill_climb.find_optimum(SEED).actions
    with registered(hill_climb.KIT), live_server(app) as url:
        context = browser.new_context(viewport={"width": width, "height": 900}, base_url=url)
        context.set_default_timeout(STEP_TIMEOUT_MS)
        page = context.new_page()
        watch.attach(page)
        page.goto(f"/play/{NAME}/{SEED}")
        wait_until_idle(page)
        expect(page.locator("#board h2").first).to_have_text("What you see")
        expect(page.locator("#tiebreak-rule")).to_have_text("Tie-break: turns, fewer is better.")
        expect_accessible(page, "the start")
        screenshot(page, f"hill-climb-start-{width}")
        for number, action in enumerate(line, start=1):
            button = action_button(page, action)
            expect(button).to_contain_text("energy")  # what it costs, said beforehand
            button.click()
            expect_moves(page, number)
            wait_until_idle(page)
        final = hill_climb.GAME.replay(SEED, line)
        expect(page.locator("#board")).to_contain_text(f"Score {hill_climb.GAME.score(final)}")
        expect_accessible(page, "the top")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        screenshot(page, f"hill-climb-over-{width}")
        page.locator("#submit-run").click()
        page.wait_for_url("**/runs/*")
        expect(page.locator("#replay-run .step-label")).to_contain_text("Start")
        page.get_by_role("button", name="Next move").first.click()
        expect(page.locator("#replay-run .step-label")).to_contain_text("played push")
        expect_accessible(page, "the result page")
        page.goto(f"/how-to-play/{NAME}")
        expect(page.locator(".htp-figure .generic-board")).to_have_count(2)
        expect_accessible(page, "how to play")
        context.close()
