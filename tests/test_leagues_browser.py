"""Leagues in a real browser (Debian's Chromium driven by Playwright): one friend makes a
league, another joins by its link, both play today's dailies and see each other on the
league's page at 390 and 1280 px, axe clean; a third browser, not a member, gets the page
of a page not found and learns nothing of the league. Screenshots go to
artifacts/screenshots."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from puzzles import GAMES
from service.domain import daily
from service.storage.puzzles import PuzzleRecord
from tests.api_support import attempt_batches, finished_run
from tests.browser_support import (
    OpenPage,
    PageWatch,
    expect_accessible,
    play_through_ui,
    screenshot,
    wait_until_idle,
)
from tests.test_browser import SOLVE_JOB, Site, served_site

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, redis_session_url: str) -> Iterator[Site]:
    with served_site(tmp_path_factory.mktemp("leagues"), redis_session_url) as served:
        yield served


def solved_today(site: Site, game: str) -> PuzzleRecord:
    """Today's daily of game, solved (and its par computed) by the worker's own job."""
    today = daily.today()
    site.get_json(f"/api/v1/daily/{today}")
    job = (
        game,
        daily.daily_seed(site.env["RALLY_DAILY_KEY"], game, today),
        GAMES[game].rules_version,
    )
    subprocess.run(
        [sys.executable, "-c", SOLVE_JOB, *job], env={**os.environ, **site.env}, check=True
    )
    puzzle = site.store.puzzles.get(*job)
    assert puzzle is not None and puzzle.witness is not None
    return puzzle


def play_on_the_board(page: Page, puzzle: PuzzleRecord, actions: list[Any]) -> None:
    """Today's daily played by clicking through its board."""
    page.goto(f"/daily/{puzzle.daily_date}/{puzzle.game}")
    wait_until_idle(page)
    play_through_ui(page, puzzle.game, actions)


def play_by_api(page: Page, puzzle: PuzzleRecord, actions: list[Any]) -> int:
    """Today's daily played from the page's browser through the API, a request per batch
    (each ends at an action that reveals something): the score."""
    started = page.request.post(f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/attempt", data={})
    attempt, played = started.json()["attempt"], 0
    for batch in attempt_batches(puzzle, actions):
        over = page.request.post(
            f"/api/v1/attempts/{attempt}/actions", data={"played": played, "actions": batch}
        )
        assert over.ok, over.text()
        played += len(batch)
    return over.json()["score"]


def site_path(url: str) -> str:
    return "/" + url.split("/", 3)[3]


def league_row(page: Page, game: str, name: str) -> Any:
    return page.locator(f'#today .league-game[data-game="{game}"] tr', has_text=name)


def test_two_friends_play_in_a_league_and_a_stranger_learns_nothing_of_it(
    site: Site, open_page: OpenPage, watch: PageWatch
):
    puzzles = {game: solved_today(site, game) for game in sorted(GAMES)}
    ada = open_page("/leagues", 1280)
    ada.get_by_label("League name").fill("Friday Club")
    ada.get_by_label("Your name in the league").fill("Ada")
    ada.get_by_role("button", name="Make the league").click()
    expect(ada).to_have_url(re.compile(r"/leagues/[A-Za-z0-9_-]+$"))
    league_path = site_path(ada.url)
    invite = ada.get_by_label("Send this link to whoever you want in the league")
    expect(invite).to_have_value(re.compile(r"/leagues/join#[A-Za-z0-9_-]{43}$"))
    invite_path = site_path(invite.input_value())

    ben = open_page(invite_path, 390)
    ben.get_by_label("Your name in the league").fill("Ben")
    ben.get_by_role("button", name="Join the league").click()
    expect(ben).to_have_url(re.compile(f"{re.escape(league_path)}$"))
    assert "#" not in ben.url

    # Both play today's dailies: Crazy Rally on its board, Rallye Raser along its witness.
    crazy, raser = puzzles["crazy-rally"], puzzles["rallye-raser"]
    assert crazy.witness is not None and raser.witness is not None
    bens_run = finished_run(GAMES["crazy-rally"], crazy.seed)
    play_on_the_board(ada, crazy, crazy.witness)
    play_on_the_board(ben, crazy, bens_run)
    scores = {
        "Ada": play_by_api(ada, raser, raser.witness),
        "Ben": play_by_api(ben, raser, raser.witness),
    }

    for page, name, other in ((ada, "Ada", "Ben"), (ben, "Ben", "Ada")):
        page.goto(league_path)
        expect(page.locator("#league-name")).to_have_text("Friday Club")
        expect(league_row(page, "crazy-rally", f"{name} (you)")).to_have_class("you")
        expect(league_row(page, "crazy-rally", "Ada")).to_contain_text(str(crazy.optimum))
        expect(league_row(page, "rallye-raser", other)).to_contain_text(str(scores[other]))
        targets = page.locator('#today .league-game[data-game="crazy-rally"] p')
        expect(targets).to_contain_text(f"optimum {crazy.optimum}")
        expect(targets).to_contain_text("par ")
        for width in (390, 1280):
            page.set_viewport_size({"width": width, "height": 900})
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            expect_accessible(page, f"{name}'s league page at {width} px")
            screenshot(page, f"league-{name.lower()}-{width}")

    # A third browser, not a member, with the league's address and its invite link: the
    # league's page is the page of a page not found, its API answer the 404 of no league.
    stranger = open_page("/", 1280)
    answer = stranger.goto(league_path)
    assert answer is not None and answer.status == 404
    expect(stranger.get_by_role("heading", level=1)).to_have_text("Off the track")
    assert "Friday Club" not in stranger.content()
    api = stranger.request.get(f"/api/v1{league_path}")
    assert (api.status, api.json()) == (404, {"error": "no league", "status": 404})
    # Opening the invite link joins no one until they confirm.
    stranger.goto(invite_path)
    expect(stranger.get_by_role("button", name="Join the league")).to_be_enabled()
    assert stranger.request.get(f"/api/v1{league_path}").status == 404
    expect_accessible(stranger, "the invite page")
    screenshot(stranger, "league-invite-1280")
    watch.expected("status of 404")


def test_a_renewed_link_is_explained_on_the_invite_page(open_page: OpenPage, watch: PageWatch):
    maker = open_page("/leagues", 390)
    made = maker.request.post(
        "/api/v1/leagues", data={"name": "Renewers", "display_name": "Maker"}
    ).json()
    maker.request.post(f"/api/v1/leagues/{made['id']}/invite", data={})
    late = open_page(site_path(made["invite_url"]), 390)
    late.get_by_label("Your name in the league").fill("Late")
    late.get_by_role("button", name="Join the league").click()
    expect(late.locator("#messages")).to_contain_text("it was renewed")
    watch.expected("status of 404")


def test_a_removed_member_stays_out_until_the_maker_lets_them_back_in(
    open_page: OpenPage, watch: PageWatch
):
    maker = open_page("/leagues", 390)
    made = maker.request.post(
        "/api/v1/leagues", data={"name": "Keepers", "display_name": "Maker"}
    ).json()
    invite_path = site_path(made["invite_url"])
    ben = open_page(invite_path, 390)
    assert ben.request.post(
        "/api/v1/leagues/join", data={"token": made["invite_url"].split("#")[1]}
    ).ok
    maker.goto(f"/leagues/{made['id']}")
    removed = maker.locator("#removed-panel")
    expect(removed).to_be_hidden()
    remove = maker.get_by_role("button", name=re.compile("^Remove "))
    remove.click()
    maker.get_by_role("button", name=re.compile("^Really remove")).click()
    expect(removed).to_be_visible()
    expect(maker.locator("#members")).not_to_contain_text("(no name)")
    expect_accessible(maker, "the league page with a removed member")
    screenshot(maker, "league-removed-390")
    # The link they had lets them in no more, and says why it may not.
    ben.goto(invite_path)
    ben.get_by_label("Your name in the league").fill("Ben")
    ben.get_by_role("button", name="Join the league").click()
    expect(ben.locator("#messages")).to_contain_text("removed you")
    maker.get_by_role("button", name=re.compile("^Let .* back in$")).click()
    maker.get_by_role("button", name=re.compile("^Really let")).click()
    expect(removed).to_be_hidden()
    ben.goto(invite_path)
    ben.get_by_label("Your name in the league").fill("Ben")
    ben.get_by_role("button", name="Join the league").click()
    expect(ben).to_have_url(re.compile(f"/leagues/{made['id']}$"))
    watch.expected("status of 404")


def test_the_rally_page_shows_everyones_standings_or_a_leagues(
    open_page: OpenPage, watch: PageWatch
):
    page = open_page("/leagues", 390)
    made = page.request.post("/api/v1/leagues", data={"name": "Racers", "display_name": "Rae"})
    assert made.ok
    page.goto("/rally")
    expect(page).to_have_url(re.compile(r"/rallies/\d{4}-\d{2}-\d{2}$"))
    expect(page.locator("#rally")).to_have_attribute("aria-busy", "false")
    expect(page.locator("#stages tbody tr")).to_have_count(3)
    page.get_by_label("Standings of").select_option(label="Racers")
    expect(page).to_have_url(re.compile(r"\?league=[A-Za-z0-9_-]+$"))
    expect(page.locator("#standings-note")).to_contain_text("Racers")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    expect_accessible(page, "the rally page")
    screenshot(page, "rally-league-390")
