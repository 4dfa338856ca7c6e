"""A run's share (service.domain.share): its text with the spoiler-free strip, the strip's
legend and its preview image, for any run, to anyone (the strip names no card, die or value)."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from service.domain import daily
from service.domain.share import ShareFacts, marks, strip
from service.storage.leagues import LeagueRecord
from service.storage.runs import RunRecord
from service.web.api.common import api, puzzle_by_id, services
from service.web.api.leagues import invite_url, league_of_member, league_param
from service.web.errors import ApiError
from service.web.openapi import Answer, Lazy

SHARE = api.schema(
    "Share",
    {
        "type": "object",
        "required": ["text", "title", "result", "strip", "marks", "legend", "url", "image_url"],
        "properties": {
            "text": {
                "type": "string",
                "description": "What to share: title, result, strip and link, one a line (and "
                "an invitation to a league, when asked for)",
            },
            "title": {"type": "string", "description": "The game, the daily's number, practice"},
            "result": {
                "type": "string",
                "description": "The score against the optimum (and par), with the rounds for "
                "Rallye Raser",
            },
            "strip": {"type": "string", "description": "One symbol per track card or round"},
            "marks": {
                "type": "array",
                "items": {"enum": Lazy(lambda: sorted(marks()))},
                "description": "The strip's marks, in order",
            },
            "legend": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["mark", "symbol", "words"],
                    "properties": {
                        "mark": {"enum": Lazy(lambda: sorted(marks()))},
                        "symbol": {"type": "string"},
                        "words": {"type": "string"},
                    },
                },
            },
            "url": {"type": "string", "format": "uri", "description": "The run's page"},
            "image_url": {
                "type": "string",
                "format": "uri",
                "description": "The preview image of the strip (PNG)",
            },
        },
    },
)


def share_facts(run: RunRecord, puzzle_id: int) -> ShareFacts:
    """What the run's share says (replaying the run for its strip)."""
    puzzle = puzzle_by_id(puzzle_id)
    return ShareFacts(
        game=puzzle.game,
        number=puzzle.number,
        practice=not daily.is_days_attempt(run, puzzle),
        score=run.score,
        tiebreak=run.tiebreak,
        optimum=puzzle.optimum,
        optimum_tiebreak=puzzle.tiebreak,
        par=puzzle.par,
        par_tiebreak=puzzle.par_tiebreak,
        marks=strip(puzzle.game, puzzle.seed, run.actions),
        url=run_url(run.id),
    )


def run_url(run_id: str) -> str:
    return f"{services().config.public_url}/runs/{run_id}"


def share_json(
    run_id: str, facts: ShareFacts, league: LeagueRecord | None = None
) -> dict[str, Any]:
    """The run's share; with a league, its text invites to the league."""
    text = (
        facts.text() if league is None else facts.text_inviting(league.name, invite_url(league)[1])
    )
    return {
        "text": text,
        "title": facts.title,
        "result": facts.result(),
        "strip": facts.symbols,
        "marks": facts.marks,
        "legend": [
            {"mark": mark, "symbol": symbol, "words": words}
            for mark, symbol, words in facts.legend()
        ],
        "url": facts.url,
        "image_url": f"{run_url(run_id)}/preview.png",
    }


@api.route(
    "/runs/<run_id>/share",
    "GET",
    summary="What to share of a run",
    responses={200: Answer("The share text with its strip, and the preview image's URL", SHARE)},
    errors=[404],
    query=[league_param("A league of the caller's: the text ends with an invitation to it")],
)
def get_share(run_id: str, league: str | None) -> Response:
    """The run's share text: game, number, score against the optimum (and par), the rounds
    for Rallye Raser, "practice" for a run that is not official, a strip of one symbol per
    track card or round, and the run's link. The strip reveals no card, die or value, so
    it is the same for anyone who asks, during the daily's day too. With `?league=`, a
    league the caller is a member of, a last line invites to it: its name and invite link
    (the 404 of no league to anyone else)."""
    run = services().store.runs.get(run_id)
    if run is None:
        raise ApiError(404, f"no run {run_id!r}")
    invited = None if league is None else league_of_member(league)
    response = jsonify(share_json(run_id, share_facts(run, run.puzzle_id), invited))
    if invited is not None:
        # It carries a league's invite: the caller's alone.
        response.cache_control.private = True
        response.cache_control.no_store = True
    return response
