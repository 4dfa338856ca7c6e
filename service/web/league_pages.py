"""The pages of leagues and of the weekend rally: shells over the JSON API, as every page.

A league's page is a 404 page to anyone who is not one of its members, the same as for a
league that does not exist: the page itself tells nothing of a league to an outsider.
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, redirect, render_template, url_for
from werkzeug.wrappers import Response

from service.domain import daily, rally
from service.web import players
from service.web.pages import WEB, known_date

blueprint = Blueprint("leagues", __name__, template_folder=str(WEB / "templates"))


@blueprint.get("/leagues")
def leagues() -> str:
    """The player's leagues, and the form that makes one."""
    return render_template("leagues.html")


@blueprint.get("/leagues/join")
def join() -> str:
    """Where an invite link leads: its token is in the fragment, which the page's module
    sends once the player confirms (a link preview opening it joins no one)."""
    return render_template("league_join.html")


@blueprint.get("/leagues/<league_id>")
def league(league_id: str) -> str:
    """A league's page, to its members; anyone else gets the page of a page not found."""
    leagues = current_app.extensions["rally"].store.leagues
    if leagues.membership(league_id, players.current_player_id()) is None:
        abort(404)
    return render_template("league.html", league_id=league_id)


@blueprint.get("/rally")
def current_rally() -> Response:
    """The latest rally to have started (this weekend's, or last one's during the week)."""
    start = max(rally.start_of(daily.today()), rally.first_start_on_or_after(daily.FIRST_DAY))
    return redirect(url_for("leagues.rally_page", day=start.isoformat()))


@blueprint.get("/rallies/<day>")
def rally_page(day: str) -> str:
    """A rally's stages and standings (of everyone, or of one of the player's leagues)."""
    return render_template("rally.html", day=known_date(day))
