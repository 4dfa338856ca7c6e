"""Support for the browser tests: a live server, Chromium, and clicking actions through the UI.

The live server is the real application (the app factory) on a free loopback
port, with SQLite in a temporary instance folder and the session's own database
on the local Redis. Chromium is Debian's (Playwright's own download cannot work
offline), launched headless without background networking.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from axe_playwright_python.sync_playwright import Axe
from flask import Flask
from playwright.sync_api import ConsoleMessage, Page, expect
from werkzeug.serving import make_server

# Opens a path in a fresh browser profile at a width (the open_page fixture).
OpenPage = Callable[..., Page]

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication

LOOPBACK = "127.0.0.1"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
# How long one UI step (a click and the server's answer) may take.
STEP_TIMEOUT_MS = 10_000
# A whole long page (the API documentation) drawn into a picture on a busy machine.
SCREENSHOT_TIMEOUT_MS = 60_000


def chromium_path() -> str:
    """Debian's chromium binary; `make test` installs it when missing."""
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if found is None:
        raise RuntimeError("no chromium: `make test` installs it (apt-get install -y chromium)")
    return found


@contextmanager
def live_server(app: Flask | WSGIApplication, host: str = LOOPBACK) -> Iterator[str]:
    """Serve app on a free port of host in a thread; yields its base URL."""
    server = make_server(host, 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


def one_page_site(html: str) -> WSGIApplication:
    """A site of one HTML page at every path (another origin's page in the CSRF tests)."""

    def app(_environ: dict[str, Any], start_response: StartResponse) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/html; charset=utf-8")])
        return [html.encode()]

    return app


# Every content security policy violation becomes a console error that PageWatch sees.
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  const blocked = event.blockedURI || "inline";
  console.error(`CSP violation: ${event.effectiveDirective} blocked ${blocked}`);
});
"""


@dataclass
class PageWatch:
    """Console errors, uncaught exceptions and requests leaving this machine, seen by pages."""

    problems: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        page.add_init_script(REPORT_CSP_VIOLATIONS)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"uncaught: {error}"))
        page.on("request", self._request)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def _request(self, request: Any) -> None:
        url = urlparse(request.url)
        if url.scheme in ("http", "https") and url.hostname != LOOPBACK:
            self.problems.append(f"external request: {request.url}")

    def expected(self, *marks: str) -> None:
        """Forget the problems a test provoked on purpose (those naming one of marks)."""
        unexpected = [p for p in self.problems if not any(mark in p for mark in marks)]
        assert unexpected == []
        self.problems.clear()


def page_weight(page: Page) -> int:
    """Bytes of the page's HTML, scripts, styles and images (API answers not counted)."""
    return page.evaluate(
        """() => {
          const nav = performance.getEntriesByType("navigation")[0];
          const assets = performance.getEntriesByType("resource")
            .filter((entry) => !["fetch", "xmlhttprequest"].includes(entry.initiatorType));
          const sizes = assets.map((entry) => entry.decodedBodySize);
          return sizes.reduce((sum, size) => sum + size, nav.decodedBodySize);
        }"""
    )


def opened_at_once(open_page: OpenPage, paths: Iterable[str], width: int = 1280) -> Iterator[Page]:
    """Each path opened as open_page opens it, yielded once its network has been idle for
    half a second. Every page is opened before the first is yielded, so their half seconds
    of quiet pass together rather than one after another (14 pages: 7 s less a run)."""
    pages = [open_page(path, width) for path in paths]
    for page in pages:
        page.wait_for_load_state("networkidle")
        yield page


def wait_until_idle(page: Page) -> None:
    expect(page.locator("#board")).to_have_attribute("aria-busy", "false", timeout=STEP_TIMEOUT_MS)


def expect_moves(page: Page, count: int) -> None:
    """The play page has counted count moves (so the server answered the last one)."""
    text = "1 move played" if count == 1 else f"{count} moves played"
    expect(page.locator("#progress")).to_have_text(text, timeout=STEP_TIMEOUT_MS)


def key(name: str) -> str:
    return f'#board [data-focus-key="{name}"]'


def crazy_rally_clicks(action: dict[str, Any]) -> list[str]:
    """The controls to click, in order, to play one Crazy Rally action."""
    if action["type"] == "apply":
        return [key(f"apply:{action['card']}")]
    if action["type"] == "start":
        return [key("start")]
    # No event is the default choice of every turn.
    event = [key(f"event:{action['event']}")] if action["event"] is not None else []
    return [key(f"card:{action['card']}"), key(f"mode:{action['mode']}"), *event, key("drive")]


def rallye_raser_clicks(action: dict[str, Any]) -> list[str]:
    """The controls to click, in order, to play one Rallye Raser action: a place die first
    (a field tapped first places a die only when it is the one value that fits)."""
    kind = action["type"]
    if kind == "gear":
        # "Roll in gear N": the gear and the roll after it, on one tap.
        return [key(f"gear:{action['gear']}")]
    if kind in ("roll", "reroll", "move"):
        return [key(kind)]
    if kind == "place":
        return [key(f"die:{action['die']}"), key(f"field:{action['row']}:{action['lane']}")]
    if kind == "reserve":
        return [key(f"die:{action['die']}"), key("reserve-die")]
    if kind == "place_reserve":
        return [key("reserve"), key(f"field:{action['row']}:{action['lane']}")]
    return [key(f"{kind}:{action['step']}:{action['delta']}")]


CLICKS = {"crazy-rally": crazy_rally_clicks, "rallye-raser": rallye_raser_clicks}


def rallye_raser_shortcut(action: dict[str, Any]) -> str | None:
    """The one control that plays the action on a single tap when the board offers it: a
    field showing the one die (or the reserve) it places, a reserve button of the die."""
    field = f"field:{action.get('row')}:{action.get('lane')}"
    if action["type"] == "reserve":
        return key(f"reserve-die:{action['die']}")
    if action["type"] == "place":
        return f'{key(field)}[data-places="die:{action["die"]}"]'
    if action["type"] == "place_reserve":
        return f'{key(field)}[data-places="reserve"]'
    return None


SHORTCUTS: dict[str, Callable[[dict[str, Any]], str | None]] = {
    "crazy-rally": lambda _action: None,
    "rallye-raser": rallye_raser_shortcut,
}


# Choices whose tap also plays the next action: a gear is rolled in, on one tap.
HELD_BACK = {"rallye-raser": {"gear"}, "crazy-rally": set()}


def held_back(game: str, action: dict[str, Any]) -> bool:
    return action["type"] in HELD_BACK[game]


def played_with_previous(game: str, actions: list[Any], index: int) -> bool:
    """Whether actions[index] was played by the tap of the action before it."""
    return index > 0 and held_back(game, actions[index - 1])


def settled_prefix(game: str, actions: list[Any], at_least: int) -> int:
    """The shortest prefix of at least at_least actions that ends on a move sent to the server."""
    length = at_least
    while held_back(game, actions[length - 1]):
        length += 1
    return length


# A drive that damages the engine asks first: "Drive anyway" confirms it.
CONFIRM_DRIVE = key("move-confirm")


def confirms(game: str, action: dict[str, Any]) -> bool:
    """Whether the action may wait for a confirmation after its clicks."""
    return game == "rallye-raser" and action["type"] == "move"


def click_action(page: Page, game: str, action: dict[str, Any]) -> None:
    """Click the controls of one action, on one tap when the board offers it, confirming a
    drive the board asks about."""
    shortcut = SHORTCUTS[game](action)
    if shortcut and page.locator(shortcut).count():
        page.locator(shortcut).click(timeout=STEP_TIMEOUT_MS)
    else:
        for selector in CLICKS[game](action):
            page.locator(selector).click(timeout=STEP_TIMEOUT_MS)
    if confirms(game, action) and page.locator(CONFIRM_DRIVE).count():
        page.locator(CONFIRM_DRIVE).click(timeout=STEP_TIMEOUT_MS)


def play_through_ui(page: Page, game: str, actions: list[Any], already: int = 0) -> None:
    """Click each action through the board, waiting for the server's answer after each
    tap (a gear's tap plays the roll after it too)."""
    for index, action in enumerate(actions):
        if played_with_previous(game, actions, index):
            continue
        click_action(page, game, action)
        expect_moves(page, already + index + 1 + held_back(game, action))
        wait_until_idle(page)


def screenshot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    # From the top: scrolled down, a sticky panel (the dice tray) is drawn out of place.
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(path), full_page=True, timeout=SCREENSHOT_TIMEOUT_MS)
    return path


def in_sight(page: Page, name: str) -> Path:
    """A picture of the screen as the player sees it, scrolled where the page scrolled."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), timeout=SCREENSHOT_TIMEOUT_MS)
    return path


# axe-core (bundled by axe-playwright-python, injected by the test, never by the pages):
# WCAG 2.1 A and AA and axe's best practices.
AXE = Axe()
AXE_RULES = {
    "runOnly": {
        "type": "tag",
        "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
    },
    # Only the violations are read: axe then builds each passing rule's result from its first
    # node alone, which halves a run on the longer pages.
    "resultTypes": ["violations"],
}


def axe_violations(page: Page) -> list[str]:
    """What axe finds wrong with the page as it stands: each rule broken and where."""
    results = AXE.run(page, options=AXE_RULES)
    return [
        f"{violation['id']}: {[node['target'] for node in violation['nodes']]}"
        for violation in results.response["violations"]
    ]


def expect_accessible(page: Page, state: str) -> None:
    found = axe_violations(page)
    assert found == [], f"{state}: {found}"
