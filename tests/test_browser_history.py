"""The player's history in Chromium: the stats page, transfer links between two browsers.

The site, the browser and the page fixtures are test_browser's.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser as shared
from tests.browser_support import PageWatch, page_weight, screenshot
from tests.test_browser import PAGE_BUDGET_BYTES, WIDTHS, OpenPage, player_cookie, practice_run

# test_browser's fixtures: one site and one Chromium for the session.
site = shared.site
browser = shared.browser
watch = shared.watch
open_page = shared.open_page

pytestmark = pytest.mark.browser  # these tests drive Chromium

GAME = "crazy-rally"
SEED = "history-browser"


def practise(page: Page, name: str) -> None:
    """A practice run sent from the page's browser, which gives it a player named name."""
    answer = page.request.post(
        f"/api/v1/puzzles/{GAME}/{SEED}/runs",
        data={"actions": practice_run(GAME, SEED), "name": name},
    )
    assert answer.status == 201, answer.text()


def transfer_url(page: Page) -> str:
    page.get_by_role("button", name="Make a transfer link").click()
    field = page.get_by_label("Open this link in the other browser")
    expect(field).to_have_value(re.compile(r"/transfer#[A-Za-z0-9_-]{40,}$"))
    # The link names the site's public address; the test's site listens elsewhere.
    link = urlsplit(field.input_value())
    return f"{link.path}#{link.fragment}"


def test_a_transfer_link_carries_the_player_to_another_browser_once(
    open_page: OpenPage, watch: PageWatch
):
    first = open_page("/me")
    practise(first, "Ada")
    url = transfer_url(first)
    second = open_page(url, 390)
    practise(second, "Someone else")
    second.get_by_role("button", name="Play as this player here").click()
    expect(second.locator("#redeemed")).to_contain_text("this browser now plays as Ada")
    assert player_cookie(second) == player_cookie(first)
    assert "#" not in second.url
    screenshot(second, "transfer-redeemed-390")
    third = open_page(url)
    third.get_by_role("button", name="Play as this player here").click()
    expect(third.locator("#messages")).to_contain_text("used already or has expired")
    assert player_cookie(third) is None
    watch.expected("404")  # the spent link's answer


@pytest.mark.parametrize("width", WIDTHS)
def test_the_stats_page_fits_the_screen(width: int, open_page: OpenPage):
    page = open_page("/me", width)
    practise(page, "Ada")
    page.reload()
    expect(page.locator(".game-stats")).to_have_count(2)
    transfer_url(page)
    page.wait_for_load_state("networkidle")
    assert page_weight(page) < PAGE_BUDGET_BYTES
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"me-{width}")


def meta(page: Page, key: str) -> str | None:
    return page.locator(f'meta[property="{key}"], meta[name="{key}"]').get_attribute("content")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_shared_run_previews_with_its_strip_and_its_share_box_fits(
    width: int, open_page: OpenPage
):
    page = open_page("/me", width)
    answer = page.request.post(
        f"/api/v1/puzzles/{GAME}/{SEED}/runs", data={"actions": practice_run(GAME, SEED)}
    )
    run = answer.json()
    page.goto(f"/runs/{run['id']}")
    share = page.request.get(f"/api/v1/runs/{run['id']}/share").json()
    assert meta(page, "og:title") == meta(page, "twitter:title") == share["title"]
    assert "practice" in share["title"]
    assert meta(page, "og:description") == f"{share['result']} {share['strip']}"
    assert meta(page, "twitter:card") == "summary_large_image"
    image_url = meta(page, "og:image")
    assert image_url == share["image_url"]
    image = page.request.get(urlsplit(image_url).path)
    assert image.headers["content-type"] == "image/png"
    assert len(image.body()) < 100 * 1024
    box = page.locator("#share-text")
    expect(box).to_have_value(share["text"])
    # Every line of the text in sight, the link whole: nothing scrolled out of the box.
    assert box.evaluate(
        "el => el.scrollHeight <= el.clientHeight + 1 && el.scrollWidth <= el.clientWidth"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.locator("#share").click()
    expect(page.locator("#share-status")).to_contain_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == share["text"]
    screenshot(page, f"share-practice-{width}")
