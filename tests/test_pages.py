"""The pages blueprint: every page's shell, the rules pages and the static files."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from puzzles import GAMES, get_game
from service.clock import Clock
from service.domain import daily, guided
from service.web import how_to_play
from service.web.pages import RULES_DIR, WEB
from solver.registry import kit_of
from tests.api_support import (
    FINISHING_GAME,
    AppFactory,
    client_of,
    finished_run,
    over_run,
    play_attempt,
    todays_daily,
)

PAGES = [
    ("/", "js/home.js"),
    ("/archive", "js/archive.js"),
    ("/archive/2026-11-30/crazy-rally", "js/archive-day.js"),
    ("/practice", "js/practice.js"),
    ("/play/crazy-rally/any-seed_1", "js/play.js"),
    ("/play/rallye-raser/any-seed_1", "js/play.js"),
    ("/daily/2026-11-30/rallye-raser", "js/play.js"),
    ("/daily/2026-11-30/crazy-rally/practice", "js/play.js"),
    ("/how-to-play/crazy-rally", "js/how-to-play.js"),
    ("/how-to-play/rallye-raser", "js/how-to-play.js"),
    ("/learn/crazy-rally", "js/play.js"),
    ("/learn/rallye-raser", "js/play.js"),
]
# The only absolute URL the front end may contain: the SVG namespace, which is never fetched.
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


@pytest.mark.parametrize(("path", "script"), PAGES)
def test_each_page_is_html_with_its_module(client: FlaskClient, path: str, script: str):
    answer = client.get(path)
    assert answer.status_code == 200
    assert answer.mimetype == "text/html"
    page = answer.get_data(as_text=True)
    assert f'<script type="module" src="/static/{script}">' in page
    for name in GAMES:
        assert f'href="/how-to-play/{name}"' in page
        assert f'href="/rules/{name}"' in page


def test_a_stored_runs_page_is_its_result(client: FlaskClient):
    game, seed = "crazy-rally", "pages-run"
    run = client.post(
        f"/api/v1/puzzles/{game}/{seed}/runs", json={"actions": over_run(GAMES[game], seed)}
    ).get_json()
    answer = client.get(f"/runs/{run['id']}")
    assert answer.status_code == 200
    assert '<script type="module" src="/static/js/result.js">' in answer.get_data(as_text=True)


def test_the_api_documentation_is_the_apps_own_openapi_document_rendered(client: FlaskClient):
    document = client.get("/api/v1/openapi.json").get_json()
    page = client.get("/docs/api").get_data(as_text=True)
    for path, methods in document["paths"].items():
        for entry in methods.values():
            assert f'id="{entry["operationId"]}"' in page, path
            assert f"<code>{path}</code>" in page
    for name in document["components"]["schemas"]:
        assert f'id="schema-{name}"' in page
    assert '<a href="/docs/api">API documentation</a>' in client.get("/").get_data(as_text=True)


def test_the_api_documentation_describes_the_actions_once_and_links_to_them(
    client: FlaskClient,
):
    page = client.get("/docs/api").get_data(as_text=True)
    forms = [game.action_forms.items() for game in GAMES.values()]
    for kind in {kind for items in forms for kind, fields in items if fields}:
        assert page.count(f"when type is &#34;{kind}&#34;") == 1, kind
    document = client.get("/api/v1/openapi.json").get_json()
    carrying = [
        entry
        for methods in document["paths"].values()
        for entry in methods.values()
        if "actions" in json.dumps(entry.get("requestBody", {}))
    ]
    assert carrying
    assert page.count('href="#schema-Action"') >= len(carrying)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_how_to_play_draws_example_positions_of_the_engine(client: FlaskClient, game: str):
    page = client.get(f"/how-to-play/{game}").get_data(as_text=True)
    states = [
        json.loads(html.unescape(state)) for state in re.findall(r'data-state="([^"]*)"', page)
    ]
    assert len(states) == len(kit_of(game).presentation.examples)
    for state in states:
        assert set(state) >= {"view", "legal_actions"} and state["legal_actions"]
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert f"How to play {GAMES[game].title}" in text
    assert 'href="/daily/' in page and f'href="/rules/{game}">Rules reference' in page


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_guided_first_game_leads_through_a_whole_race_or_the_first_turns_of_one(
    client: FlaskClient, game: str
):
    """A game with a lesson is led to the finish, in the lesson's words; any other through
    the first turns of a line that goes on, in its board's words."""
    page = client.get(f"/learn/{game}").get_data(as_text=True)
    guide = json.loads(html.unescape(re.search(r'data-guide="([^"]*)"', page).group(1)))
    assert f'data-seed="{guided.GUIDED_SEED}"' in page
    line = [step["action"] for step in guide["steps"]]
    engine = GAMES[game]
    state = engine.replay(guided.GUIDED_SEED, line)
    lesson = kit_of(game).presentation.lesson
    if lesson is None:
        assert sum(engine.turn.ends(action) for action in line) == how_to_play.GUIDED_TURNS
        assert engine.turn.ends(line[-1]) and not engine.is_over(state)
        assert all(step["text"] is None for step in guide["steps"]) and guide["done"] is None
    else:
        taught = lesson(guided.GUIDED_SEED)
        assert [step["text"] for step in guide["steps"]] == [step.text for step in taught.steps]
        assert guide["done"] == taught.done
        assert engine.is_over(state) and engine.score(state) is not None


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_rules_page_renders_the_projects_own_document(client: FlaskClient, game: str):
    source = (RULES_DIR / f"{game}.md").read_text(encoding="utf-8")
    heading = source.splitlines()[0].removeprefix("# ")
    page = client.get(f"/rules/{game}").get_data(as_text=True)
    rendered_heading = re.search(r"<h1[^>]*>(.*?)</h1>", page).group(1)
    assert re.sub(r"<[^>]+>", "", rendered_heading).replace("&amp;", "&") == heading.replace(
        "`", ""
    )
    assert "<table>" in page


# What each rules page tells a player, in plain words, about where the game here
# departs from its rulebook: the product's decisions, not readings of the text.
DEPARTURES = {
    "crazy-rally": ("worth 1 point, not 2", "gives 2 points", "our decision"),
    "rallye-raser": ("The box holds nine road cards", "eighteen", "our decision"),
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_rules_page_says_where_the_game_departs_from_the_rulebook(
    client: FlaskClient, game: str
):
    page = client.get(f"/rules/{game}").get_data(as_text=True)
    section = re.search(
        r"<h2[^>]*>Where this game departs from the rulebook</h2>(.*?)<h2", page, re.S
    )
    assert section, "the rules page has no section on where the game departs from the rulebook"
    text = " ".join(re.sub(r"<[^>]+>", "", section.group(1)).split())
    for words in DEPARTURES[game]:
        assert words in text


@pytest.mark.parametrize(
    "path",
    [
        "/play/chess/seed",
        "/play/crazy-rally/no%20spaces",
        "/play/crazy-rally/" + "x" * 65,
        "/rules/chess",
        "/how-to-play/chess",
        "/learn/chess",
        "/no-such-page",
        "/runs/a/b",
        "/runs/no-such-run",
        "/runs/not%20an%20id",
        "/daily/2026-13-01/crazy-rally",
        "/daily/20261130/crazy-rally",
        "/daily/2026-11-30/chess",
        "/daily/2999-01-01/crazy-rally",  # not published yet
        "/daily/2026-10-31/rallye-raser",  # the day before the first daily
        "/daily/2999-01-01/crazy-rally/practice",
        "/daily/2026-10-31/rallye-raser/practice",
        "/archive/2026-11-30/chess",
        "/archive/2026-13-01/crazy-rally",
        "/archive/2999-01-01/crazy-rally",  # not published yet
        "/archive/2026-10-31/crazy-rally",  # the day before the first daily
        "/archive/0001-01-01/rallye-raser",
    ],
)
def test_an_unknown_game_or_invalid_seed_is_an_html_404(client: FlaskClient, path: str):
    answer = client.get(path)
    assert answer.status_code == 404
    assert answer.mimetype == "text/html"
    assert "Off the track" in answer.get_data(as_text=True)


def test_an_unknown_api_path_stays_a_json_404(client: FlaskClient):
    answer = client.get("/api/v1/no-such-endpoint")
    assert answer.status_code == 404
    assert answer.get_json()["status"] == 404


@pytest.mark.parametrize(
    ("path", "mimetype"),
    [
        ("/static/css/site.css", "text/css"),
        ("/static/js/play.js", "text/javascript"),
        ("/static/favicon.svg", "image/svg+xml"),
    ],
)
def test_static_files_are_served_with_their_types(client: FlaskClient, path: str, mimetype: str):
    answer = client.get(path)
    assert (answer.status_code, answer.mimetype) == (200, mimetype)


def front_end_files() -> list[Path]:
    """Every file of the front end; the page every other extends and the scripts of play
    among them, so that a folder moved cannot leave the checks over them with nothing."""
    files = sorted(path for path in WEB.rglob("*") if path.is_file())
    assert {"base.html", "play.js", "site.css"} <= {path.name for path in files}, WEB
    return files


INLINE_IN_MARKUP = re.compile(r"<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=", re.IGNORECASE)
INLINE_FROM_SCRIPT = re.compile(
    r"\bstyle:|innerHTML|insertAdjacentHTML|setAttribute\(\s*[\"']style"
)


def test_the_pages_have_no_inline_script_or_style():
    """The content security policy allows only the site's own files (see service.web.security)."""
    for path in front_end_files():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".html":
            assert not INLINE_IN_MARKUP.search(text), path
        if path.suffix == ".js":
            assert not INLINE_FROM_SCRIPT.search(text), path


def test_the_front_end_refers_to_no_other_host():
    for path in front_end_files():
        text = path.read_text(encoding="utf-8").replace(SVG_NAMESPACE, "")
        assert not re.search(r"https?://|(src|href|url)\s*[=(]\s*[\"']?//", text), path


def test_how_to_play_says_a_held_reserve_leaves_two_dice_to_roll(client: FlaskClient):
    page = client.get("/how-to-play/rallye-raser").get_data(as_text=True)
    assert "while you hold it, only the two other dice are rolled" in page


@pytest.mark.parametrize("game", sorted(GAMES))
def test_an_archive_day_without_a_daily_is_a_404_page_and_a_404_of_the_api(
    client: FlaskClient, clock: Clock, game: str
):
    clock.set(datetime(2026, 12, 9, 12, tzinfo=UTC))
    unknown_run = client.get("/api/v1/runs/no-such-run")
    for day in (daily.FIRST_DAY - timedelta(days=1), daily.FIRST_DAY - timedelta(days=400)):
        page = client.get(f"/archive/{day}/{game}")
        assert page.status_code == 404 and page.mimetype == "text/html"
        assert "Off the track" in page.get_data(as_text=True)
        reads = ("", f"/{game}/leaderboard", f"/{game}/solution", f"/{game}/par")
        for path in (f"/api/v1/daily/{day}{read}" for read in reads):
            answer = client.get(path)
            assert answer.status_code == 404 and answer.mimetype == "application/json"
            assert answer.get_json().keys() == unknown_run.get_json().keys()
            assert answer.get_json()["status"] == 404
    # The first day, and every one since, has its page.
    for day in (daily.FIRST_DAY, daily.today() - timedelta(days=1), daily.today()):
        assert client.get(f"/archive/{day}/{game}").status_code == 200
        assert client.get(f"/api/v1/daily/{day}/{game}/leaderboard").status_code == 200


def test_an_archive_days_leaderboard_shows_a_run_stored_through_another_process_at_once(
    make_app: AppFactory, database_url: str, clock: Clock
):
    """Two web processes on one database: the one that showed the day's leaderboard shows
    the run the other stored on its next answer, not the standings it kept."""
    clock.set(datetime(2026, 12, 9, 12, tzinfo=UTC))
    showing, storing = make_app(database=database_url), make_app(database=database_url)
    viewer, player = client_of(showing), client_of(storing)
    puzzle = todays_daily(storing.extensions["rally"].store, FINISHING_GAME)
    board = f"/api/v1/daily/{puzzle.daily_date}/{FINISHING_GAME}/leaderboard"
    assert viewer.get(f"/archive/{puzzle.daily_date}/{FINISHING_GAME}").status_code == 200
    before = viewer.get(board).get_json()
    assert (before["entries"], before["players"]) == ([], 0)
    played = play_attempt(player, puzzle, finished_run(get_game(FINISHING_GAME), puzzle.seed))
    assert played["finished"]
    after = viewer.get(board).get_json()
    assert [entry["run_id"] for entry in after["entries"]] == [played["run"]]
    assert after["players"] == 1
    assert sum(bar["count"] for bar in after["histogram"]) == 1
