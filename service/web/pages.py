"""The browser front end: HTML pages over the JSON API.

The pages hold no rules: each one renders a shell from web/templates, and its ES
module (web/static/js) talks to /api/v1. Rendered here are only the rules pages,
from the project's own docs/rules at run time; the API documentation, from the
OpenAPI document; the "How to play" pages' example positions and the guided first
game's line, from the engines (service.web.how_to_play); and a stored run's
link-preview tags and image (service.web.previews), read from the store, since a
link preview's crawler runs no script.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any

import markdown
from flask import Blueprint, Response, abort, current_app, render_template
from markupsafe import Markup, escape

from puzzles import GAMES, validate_seed
from service.domain import daily, guided
from service.storage.runs import RunRecord
from service.storage.store import Store
from service.web import api_docs, how_to_play, previews
from service.web.api.common import api
from service.web.api.share import share_facts, share_json
from solver.registry import kit_of

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WEB = PROJECT_ROOT / "web"
RULES_DIR = PROJECT_ROOT / "docs" / "rules"
BOARDS = WEB / "static" / "js" / "boards"
DATE_FORMAT = re.compile(r"\d{4}-\d{2}-\d{2}")
MARKDOWN_EXTENSIONS = ["tables", "fenced_code", "toc", "sane_lists"]

blueprint = Blueprint(
    "pages",
    __name__,
    template_folder=str(WEB / "templates"),
    static_folder=str(WEB / "static"),
    static_url_path="/static",
)


def board_of(name: str) -> str:
    """The game's board module under web/static/js/boards: its own, named after it, or the
    generic board, which draws any game's view as data and its legal actions as buttons."""
    return name if (BOARDS / f"{name}.js").is_file() else "generic"


def game_info(name: str) -> dict[str, Any]:
    """What the pages' modules need of a game: its title, its board module, what a turn is,
    how its tie-break reads and its line on the home page (from its kit and engine)."""
    kit = kit_of(name)
    reading = kit.engine.tiebreak_rule
    return {
        "title": kit.engine.title,
        "board": board_of(name),
        "turn": {"name": kit.engine.turn.name, "ends_with": list(kit.engine.turn.ends_with)},
        "tiebreak": {
            "one": reading.one,
            "many": reading.many,
            "sign": reading.sign,
            "rule": reading.rule,
            "heading": reading.heading,
            "unit": reading.unit,
        },
        "blurb": kit.presentation.blurb,
        "rules": (RULES_DIR / f"{name}.md").is_file(),
    }


@blueprint.app_context_processor
def games() -> dict[str, Any]:
    """The games, for the site navigation and the pages' modules, on every page rendered."""
    found = {name: game_info(name) for name in sorted(GAMES)}
    return {"games": found, "game_titles": {name: info["title"] for name, info in found.items()}}


def known_game(name: str) -> str:
    if name not in GAMES:
        abort(404)
    return name


@blueprint.get("/")
def home() -> str:
    return render_template("home.html")


@blueprint.get("/play/<game>/<seed>")
def play(game: str, seed: str) -> str:
    known_game(game)
    try:
        validate_seed(seed)
    except ValueError:
        abort(404)
    # Today's and coming dailies are played by date, never by seed.
    day = daily.daily_date_of(current_app.extensions["rally"].config.daily_key, game, seed)
    if day is not None and not daily.is_revealed(day):
        abort(404)
    return render_template(
        "play.html", game=game, seed=seed, mode="practice", title=GAMES[game].title
    )


def known_date(text: str) -> str:
    """A YYYY-MM-DD date; anything else is a page that does not exist."""
    if not DATE_FORMAT.fullmatch(text):
        abort(404)
    try:
        date.fromisoformat(text)
    except ValueError:
        abort(404)
    return text


def published_day(text: str) -> str:
    """A day that has a daily, from the first to today (the days GET /api/v1/daily/<day>
    answers); any other is a page that does not exist."""
    if not daily.FIRST_DAY <= date.fromisoformat(known_date(text)) <= daily.today():
        abort(404)
    return text


@blueprint.get("/daily/<day>/<game>")
def play_daily(day: str, game: str) -> str:
    """Today's daily is the player's one attempt, played on the server; a past one, practice."""
    known_game(game)
    return render_template(
        "play.html", game=game, date=published_day(day), mode="daily", title=GAMES[game].title
    )


@blueprint.get("/daily/<day>/<game>/practice")
def practice_daily(day: str, game: str) -> str:
    """Practice of a daily ("Play again"): once its day is over the page moves to its seed's
    practice; before, it says when that opens (no one may replay today's daily)."""
    known_game(game)
    return render_template(
        "play.html",
        game=game,
        date=published_day(day),
        mode="daily-practice",
        title=GAMES[game].title,
    )


RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


def stored_run(run_id: str) -> RunRecord:
    """A stored run; any other id is a page that does not exist."""
    store: Store = current_app.extensions["rally"].store
    found = store.runs.get(run_id) if RUN_ID.fullmatch(run_id) else None
    if found is None:
        abort(404)
    return found


@blueprint.get("/runs/<run_id>")
def run(run_id: str) -> str:
    """A stored run's result page, with its share's link-preview tags (share_meta.html)."""
    found = stored_run(run_id)
    share = share_json(run_id, share_facts(found, found.puzzle_id))
    return render_template("run.html", run_id=run_id, share=share)


# A run's preview can change once (its daily solved): shared caches keep it a while only.
PREVIEW_MAX_AGE = 600


@blueprint.get("/runs/<run_id>/preview.png")
def run_preview(run_id: str) -> Response:
    """The preview image of the run's share (service.web.previews), cached in the instance
    folder."""
    found = stored_run(run_id)
    folder = current_app.extensions["rally"].config.instance_path / "previews"
    image = previews.preview(folder, run_id, share_facts(found, found.puzzle_id))
    response = Response(image, mimetype="image/png")
    response.cache_control.public = True
    response.cache_control.max_age = PREVIEW_MAX_AGE
    return response


@blueprint.get("/archive")
def archive() -> str:
    return render_template("archive.html")


@blueprint.get("/archive/<day>/<game>")
def archive_day(day: str, game: str) -> str:
    """A daily's own page in the archive: its optimum, par and leaderboard, and once its day
    is over the replays of its optimal and par lines, before any practice of it (today's
    shows no line: web/static/js/lines.js). A day with no daily, one not published yet or
    one before the first daily (the days GET /api/v1/daily/<day> answers a 404), is a page
    that does not exist."""
    known_game(game)
    return render_template(
        "archive_day.html", game=game, date=published_day(day), title=GAMES[game].title
    )


@blueprint.get("/me")
def me() -> str:
    """The player's stats and history, and the link that carries them to another browser."""
    return render_template("me.html")


@blueprint.get("/transfer")
def transfer() -> str:
    """Where a transfer link leads: its token is in the fragment, which the page's module
    redeems once the player confirms (a link preview opening it spends nothing)."""
    return render_template("transfer.html")


@blueprint.get("/practice")
def practice() -> str:
    return render_template("practice.html")


@blueprint.get("/how-to-play/<game>")
def how_to_play_page(game: str) -> str:
    """A minute's read per game, drawn with the play page's boards on example positions."""
    return render_template(
        "how_to_play.html",
        game=known_game(game),
        title=GAMES[game].title,
        examples=how_to_play.examples(game),
        today=daily.today().isoformat(),
    )


@blueprint.get("/learn/<game>")
def guided_game(game: str) -> str:
    """A first game on a fixed practice seed that the page guides (how_to_play.guide)."""
    return render_template(
        "play.html",
        game=known_game(game),
        seed=guided.GUIDED_SEED,
        mode="practice",
        title=GAMES[game].title,
        guide=how_to_play.guide(game),
    )


@blueprint.get("/rules/<game>")
def rules(game: str) -> str:
    source = RULES_DIR / f"{known_game(game)}.md"
    if not source.is_file():
        abort(404)
    html = markdown.markdown(source.read_text(encoding="utf-8"), extensions=MARKDOWN_EXTENSIONS)
    # The document is the project's own file, so its HTML is trusted.
    return render_template("rules.html", game=game, title=GAMES[game].title, body=Markup(html))


@blueprint.app_template_filter("inline_markdown")
def inline_markdown(text: str) -> Markup:
    """The API's descriptions mark code with backticks; everything else is plain text."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


@blueprint.get("/docs/api")
def api_reference() -> str:
    """The OpenAPI document rendered for people, by the app itself (nothing from elsewhere)."""
    document = api.document(current_app.config["MAX_CONTENT_LENGTH"])
    return render_template(
        "api_docs.html",
        info=document["info"],
        base=document["servers"][0]["url"],
        operations=api_docs.operations(document),
        schemas=api_docs.schemas(document),
        errors=api_docs.errors(document),
        describe=api_docs.describe,
    )


@blueprint.errorhandler(404)
def not_found(_error: Exception) -> tuple[str, int]:
    """A page for an unknown game, seed or rules document (the API answers JSON itself)."""
    return render_template("not_found.html"), 404
