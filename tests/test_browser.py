"""The front end in a real browser (Debian's Chromium driven by Playwright).

Whole dailies are played by clicking through the boards along the solver's
witness and must reach exactly the optimum; runs survive a reload; a few turns
are played with the keyboard alone; no page logs a console error or requests
anything from elsewhere. Screenshots at 360 and 1280 px go to artifacts/screenshots.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from puzzles import GAMES
from puzzles.playout import random_playout, seeded_chooser
from service.app import create_app
from service.config import Config
from service.migrations import upgrade
from service.store import PuzzleRecord, Store
from tests.browser_support import (
    CHROMIUM_ARGS,
    CLICKS,
    STEP_TIMEOUT_MS,
    PageWatch,
    chromium_path,
    expect_moves,
    live_server,
    page_weight,
    play_through_ui,
    screenshot,
    wait_until_idle,
)

PAGE_BUDGET_BYTES = 150 * 1024
WIDTHS = (360, 1280)
GAME_NAMES = sorted(GAMES)
OpenPage = Callable[..., Page]


@dataclass(frozen=True)
class Site:
    url: str
    store: Store
    env: dict[str, str]

    def get_json(self, path: str) -> Any:
        with urlopen(self.url + path) as answer:
            return json.load(answer)


@contextmanager
def served_site(folder: Path, redis_url: str, **settings: str) -> Iterator[Site]:
    """The real app on SQLite in folder, served on a free loopback port."""
    env = {
        "RALLY_INSTANCE_PATH": str(folder / "i"),
        "DATABASE_URL": f"sqlite:///{folder / 'rally.sqlite3'}",
        "REDIS_URL": redis_url,
        "RALLY_SECRET_KEY": "browser-test-secret-key-of-at-least-32-bytes",
        "RALLY_DAILY_KEY": "browser-test-daily-key-of-at-least-32-bytes",
        **settings,
    }
    config = Config.from_env(env)
    upgrade(config.database_url)
    app = create_app(config)
    with live_server(app) as url:
        yield Site(url, app.extensions["rally"].store, env)
    app.extensions["rally"].store.close()


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory, redis_session_url: str) -> Iterator[Site]:
    with served_site(tmp_path_factory.mktemp("browser"), redis_session_url) as served:
        yield served


SOLVE_JOB = "import sys; from service.jobs import solve_puzzle; solve_puzzle(*sys.argv[1:])"


@pytest.fixture(scope="session")
def solved_daily(site: Site) -> Callable[[str], PuzzleRecord]:
    """Today's puzzle of a game, solved by the worker's own job in a process of its own."""
    today = {entry["game"]: entry for entry in site.get_json("/api/v1/daily")["puzzles"]}

    def solved(game: str) -> PuzzleRecord:
        job = (game, today[game]["seed"], today[game]["rules_version"])
        subprocess.run(
            [sys.executable, "-c", SOLVE_JOB, *job], env={**os.environ, **site.env}, check=True
        )
        puzzle = site.store.get_puzzle(*job)
        assert puzzle is not None and puzzle.status == "solved"
        return puzzle

    return solved


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def watch() -> Iterator[PageWatch]:
    """Collects what the pages of one test did wrong; the test fails on any of it."""
    seen = PageWatch()
    yield seen
    assert seen.problems == []


@pytest.fixture
def open_page(browser: Browser, site: Site, watch: PageWatch) -> Iterator[OpenPage]:
    """Opens a path in a fresh browser profile (a new player) at a given width."""
    contexts = []

    def open_(path: str, width: int = 1280, base_url: str = site.url) -> Page:
        context = browser.new_context(viewport={"width": width, "height": 900}, base_url=base_url)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
        context.set_default_timeout(STEP_TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        watch.attach(page)
        page.goto(path)
        return page

    yield open_
    for context in contexts:
        context.close()


def practice_run(game: str, seed: str) -> list[Any]:
    """A legal run of a practice seed, played by the engine with seeded random choices."""
    return random_playout(GAMES[game], seed, seeded_chooser(seed, "browser"))[1]


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_daily_played_along_the_witness_reaches_the_optimum(
    game: str, open_page: OpenPage, solved_daily: Callable[[str], PuzzleRecord]
):
    puzzle = solved_daily(game)
    page = open_page("/")
    page.locator(f'.puzzle-card[data-game="{game}"] a.primary').click()
    expect(page).to_have_url(re.compile(f"/play/{game}/{puzzle.seed}$"))
    wait_until_idle(page)
    tiebreak = (
        f"in {-puzzle.tiebreak} rounds" if game == "rallye-raser"
        else f"final speed {puzzle.tiebreak}"
    )
    expect(page.locator("#optimum")).to_have_text(f"{puzzle.optimum} ({tiebreak})")

    play_through_ui(page, game, puzzle.witness)
    expect(page.locator("#finish-summary")).to_contain_text(f"score of {puzzle.optimum}.")
    page.locator("#submit-run").click()
    page.wait_for_url("**/runs/*")

    expect(page.locator("#your-score")).to_have_text(str(puzzle.optimum))
    expect(page.locator("#optimum-score")).to_have_text(str(puzzle.optimum))
    expect(page.locator("#verdict")).to_contain_text("Optimal")
    expect(page.locator("#place")).to_have_text("Your place: 1 of 1 official run.")
    expect(page.locator("#histogram .bar.mine")).to_have_count(1)
    run = page.request.get(f"/api/v1/runs/{page.url.rsplit('/', 1)[1]}").json()
    assert (run["score"], run["tiebreak"]) == (puzzle.optimum, puzzle.tiebreak)
    assert run["official"]

    best = page.locator("#replay-best")
    best.get_by_role("button", name="Last step").click()
    expect(best.locator(".step-label")).to_contain_text(
        f"Move {len(puzzle.witness)} of {len(puzzle.witness)}"
    )
    page.locator("#share").click()
    expect(page.locator("#share-status")).to_contain_text("Copied")
    shared = page.evaluate("navigator.clipboard.readText()")
    title = GAMES[game].title
    assert f"{title} #{puzzle.number}" in shared
    assert f"{puzzle.optimum} points, optimum {puzzle.optimum}" in shared
    assert shared.endswith(f"/runs/{run['id']}")
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(page, f"result-{game}-{width}")

    friend = open_page(f"/runs/{run['id']}")
    expect(friend.locator("#your-score")).to_have_text(str(puzzle.optimum))
    expect(friend.locator("#replay-best")).to_contain_text("once the day is over")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_run_in_progress_survives_a_reload(game: str, open_page: OpenPage):
    seed = "browser-reload"
    actions = practice_run(game, seed)
    page = open_page(f"/play/{game}/{seed}")
    wait_until_idle(page)
    play_through_ui(page, game, actions[:5])
    page.reload()
    expect_moves(page, 5)
    wait_until_idle(page)
    play_through_ui(page, game, actions[5:8], already=5)
    stored = page.evaluate(f"localStorage.getItem('rally-daily:actions:{game}:{seed}')")
    assert json.loads(stored) == actions[:8]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(page, f"play-{game}-mid-run-{width}")


def test_a_lost_connection_is_explained_and_loses_nothing(open_page: OpenPage, watch: PageWatch):
    game, seed = "crazy-rally", "browser-offline"
    actions = practice_run(game, seed)
    page = open_page(f"/play/{game}/{seed}")
    wait_until_idle(page)
    play_through_ui(page, game, actions[:2])
    page.route("**/api/v1/play/**", lambda route: route.abort("connectionrefused"))
    page.locator(f'#board [data-focus-key="apply:{actions[2]["card"]}"]').click()
    expect(page.locator("#messages")).to_contain_text("The server cannot be reached")
    expect_moves(page, 2)
    page.unroute("**/api/v1/play/**")
    play_through_ui(page, game, actions[2:3], already=2)
    expect(page.locator("#messages")).to_be_empty()
    watch.expected("ERR_CONNECTION_REFUSED")


def test_a_rate_limited_submission_is_explained_and_keeps_the_run(
    open_page: OpenPage, watch: PageWatch, tmp_path: Path, redis_url: str
):
    game, seed = "crazy-rally", "browser-limit"
    actions = practice_run(game, seed)
    with served_site(tmp_path, redis_url, RALLY_WRITES_PER_MINUTE="1") as strict:
        page = open_page(f"/play/{game}/{seed}", base_url=strict.url)
        for attempt in ("accepted", "refused"):
            wait_until_idle(page)
            play_through_ui(page, game, actions)
            page.locator("#submit-run").click()
            if attempt == "accepted":
                page.wait_for_url("**/runs/*")
                page.goto(f"/play/{game}/{seed}")
        expect(page.locator("#messages")).to_contain_text("Too many requests")
        expect(page.locator("#messages")).to_contain_text("your run is kept on this device")
        page.reload()
        expect_moves(page, len(actions))
        expect(page.locator("#finish")).to_be_visible()
    watch.expected("status of 429")


def tab_to(page: Page, selector: str, limit: int = 80) -> None:
    """Press Tab until the element matching selector has the focus, which must be visible."""
    for _ in range(limit):
        if page.evaluate("(s) => document.activeElement?.matches(s) ?? false", selector):
            outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
            assert outline != "none", f"focus on {selector} is not visible"
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{selector} is not reachable with Tab")


def press(page: Page, selector: str) -> None:
    tab_to(page, selector)
    page.keyboard.press("Enter")


@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_few_turns_with_the_keyboard_alone(game: str, open_page: OpenPage):
    seed = "browser-keys"
    actions = practice_run(game, seed)[:7]
    page = open_page(f"/play/{game}/{seed}")
    wait_until_idle(page)
    for number, action in enumerate(actions, start=1):
        for selector in CLICKS[game](action):
            press(page, selector)
        expect_moves(page, number)
        wait_until_idle(page)


UNLABELLED_CONTROLS = """() => [
  ...document.querySelectorAll("button, a[href], input, select, textarea")]
  .filter((el) => !(el.getAttribute("aria-label") || el.textContent.trim() || el.labels?.length))
  .map((el) => el.outerHTML.slice(0, 120))"""


def static_pages(seed: str) -> list[str]:
    return [
        "/",
        "/archive",
        "/practice",
        *(f"/rules/{game}" for game in GAME_NAMES),
        *(f"/play/{game}/{seed}" for game in GAME_NAMES),
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_its_budget_and_the_screen(width: int, open_page: OpenPage):
    for path in static_pages("browser-look"):
        page = open_page(path, width)
        page.wait_for_load_state("networkidle")
        assert page_weight(page) < PAGE_BUDGET_BYTES, path
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path
        assert page.evaluate(UNLABELLED_CONTROLS) == [], path
        name = path.strip("/").replace("/", "-") or "home"
        screenshot(page, f"{name}-{width}")
        page.context.close()


def seconds_to_midnight_utc() -> float:
    now = datetime.now(UTC)
    return (datetime.combine(now.date() + timedelta(days=1), time(), UTC) - now).total_seconds()


def test_home_shows_todays_puzzles_and_counts_down_to_midnight(site: Site, open_page: OpenPage):
    today = site.get_json("/api/v1/daily")
    page = open_page("/")
    for puzzle in today["puzzles"]:
        card = page.locator(f'.puzzle-card[data-game="{puzzle["game"]}"]')
        expect(card).to_contain_text(f"#{puzzle['number']}")
        expect(card).to_contain_text(puzzle["date"])
        expect(card.locator("[data-players]")).to_have_text(re.compile(r"^\d+ players?$"))
    hours, minutes, seconds = map(int, page.locator("#countdown").inner_text().split(":"))
    assert abs(hours * 3600 + minutes * 60 + seconds - seconds_to_midnight_utc()) < 5


def test_the_archive_lists_past_dailies_a_week_at_a_time(site: Site, open_page: OpenPage):
    number = site.get_json("/api/v1/daily")["puzzles"][0]["number"]
    page = open_page("/archive")
    rows = page.locator("#archive-rows tr")
    if number == 1:
        expect(rows).to_contain_text("No past dailies yet")
        return
    expect(rows).to_have_count(min(7, number - 1))
    expect(rows.first.get_by_role("link").first).to_have_text(f"#{number - 1}")
    if number > 8:
        page.get_by_role("button", name="Show older days").click()
        expect(rows).to_have_count(min(14, number - 1))


def test_practice_opens_any_valid_seed_and_explains_an_invalid_one(open_page: OpenPage):
    page = open_page("/practice")
    page.get_by_label("Game").select_option("rallye-raser")
    page.get_by_label("Seed").fill("no spaces!")
    page.get_by_role("button", name="Play this seed").click()
    expect(page.locator("#messages")).to_contain_text("1 to 64 letters")
    page.get_by_role("button", name="Random seed").click()
    seed = page.get_by_label("Seed").input_value()
    page.get_by_role("button", name="Play this seed").click()
    expect(page).to_have_url(re.compile(f"/play/rallye-raser/{seed}$"))
    wait_until_idle(page)
    expect(page.locator("#puzzle-label")).to_have_text(f"Practice · seed {seed}")
