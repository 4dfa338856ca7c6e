"""The weekend rally of Crazy Rally (service.domain.rally, rule CR-22): its three stages,
the sums of their optima and pars, and its standings, of everyone or of one league's
members (to them only). Scores and tie-breaks only: no line of play, as everywhere.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from flask import Response, jsonify

from service.domain import daily
from service.domain.rally import (
    COMPLETE,
    OUT,
    RALLY_GAME,
    RUNNING,
    STAGES,
    Standing,
    is_start,
    ranked,
    stage_days,
    standing,
)
from service.storage.puzzles import PuzzleRecord
from service.storage.rally import PlayerStages
from service.web import players
from service.web.api.common import (
    DATE,
    NULLABLE_INT,
    PUZZLE,
    TOKEN_ID,
    api,
    parse_day,
    puzzle_json,
    services,
    tiebreak_field,
)
from service.web.api.dailies import daily_of
from service.web.api.leagues import LEAGUE_ID, MEMBER, league_of_member, league_param
from service.web.errors import ApiError
from service.web.openapi import Answer

# The public standings list this many players.
LEADERS = 100
LEAGUE_PARAM = league_param("A league's id: its members' standings, to its members only")
STAGE_RESULT = {
    "anyOf": [
        {
            "type": "object",
            "required": ["score", "tiebreak", "run"],
            "properties": {
                "score": {"type": "integer"},
                "tiebreak": tiebreak_field({"type": "integer"}, "The stage's run's tie-break"),
                "run": TOKEN_ID,
            },
        },
        {"type": "null"},
    ],
    "description": "A stage finished; null for the others",
}
RALLY = api.schema(
    "Rally",
    {
        "type": "object",
        "required": [
            "game",
            "today",
            "start",
            "end",
            "status",
            "stages",
            "optimum",
            "optimum_tiebreak",
            "par",
            "par_tiebreak",
            "league",
            "entrants",
            "standings",
        ],
        "properties": {
            "game": {"const": RALLY_GAME},
            "today": {**DATE, "description": "Today (UTC)"},
            "start": {**DATE, "description": "Its Friday"},
            "end": {**DATE, "description": "Its Sunday"},
            "status": {
                "enum": ["running", "over"],
                "description": "over from 00:00 UTC on Monday",
            },
            "stages": {
                "type": "array",
                "minItems": STAGES,
                "maxItems": STAGES,
                "items": {
                    "type": "object",
                    "required": ["stage", "date", "status", "puzzle"],
                    "properties": {
                        "stage": {"type": "integer", "minimum": 1, "maximum": STAGES},
                        "date": DATE,
                        "status": {"enum": ["over", "today", "upcoming"]},
                        "puzzle": {
                            "anyOf": [PUZZLE, {"type": "null"}],
                            "description": "Null while its day is to come",
                        },
                    },
                },
            },
            "optimum": {
                **NULLABLE_INT,
                "description": "The sum of the stages' optima; null until all are known",
            },
            "optimum_tiebreak": tiebreak_field(
                NULLABLE_INT, "The tie-break of the last stage's optimum"
            ),
            "par": {
                **NULLABLE_INT,
                "description": "The sum of the stages' pars; null until all are known",
            },
            "par_tiebreak": tiebreak_field(NULLABLE_INT, "The tie-break of the last stage's par"),
            "league": {
                "anyOf": [
                    {
                        "type": "object",
                        "required": ["id", "name"],
                        "properties": {"id": LEAGUE_ID, "name": {"type": "string"}},
                    },
                    {"type": "null"},
                ],
                "description": "Null for everyone's standings",
            },
            "entrants": {
                "type": "integer",
                "minimum": 0,
                "description": "Everyone: who finished stage 1; a league: who started it",
            },
            "standings": {
                "type": "array",
                "description": f"The players still in (complete, or running), best first: "
                f"stages finished, then score, then the last stage's tie-break, equal ones "
                f"sharing a rank; in a league, then those out, unranked. Everyone's lists "
                f"the best {LEADERS}",
                "items": {
                    "type": "object",
                    "required": [
                        "rank",
                        "name",
                        "you",
                        "status",
                        "stages_finished",
                        "score",
                        "tiebreak",
                        "stages",
                    ],
                    "properties": {
                        "rank": {**NULLABLE_INT, "description": "Null when out"},
                        "member": {**MEMBER, "description": "In a league"},
                        "name": {"type": ["string", "null"]},
                        "you": {"type": "boolean"},
                        "status": {
                            "enum": [COMPLETE, RUNNING, OUT],
                        },
                        "stages_finished": {"type": "integer", "minimum": 0, "maximum": STAGES},
                        "score": {
                            "type": "integer",
                            "description": "The sum of the stages finished",
                        },
                        "tiebreak": tiebreak_field(
                            NULLABLE_INT, "The tie-break of the last stage finished"
                        ),
                        "stages": {
                            "type": "array",
                            "minItems": STAGES,
                            "maxItems": STAGES,
                            "items": STAGE_RESULT,
                        },
                    },
                },
            },
        },
    },
)


def _stage_json(number: int, day: date, puzzle: PuzzleRecord | None) -> dict[str, Any]:
    today = daily.today()
    status = "over" if day < today else "today" if day == today else "upcoming"
    return {
        "stage": number,
        "date": day.isoformat(),
        "status": status,
        "puzzle": None if puzzle is None else puzzle_json(puzzle),
    }


def _sum_of(values: list[int | None]) -> int | None:
    return None if any(value is None for value in values) else sum(v for v in values if v)


def _targets(stages: list[PuzzleRecord | None]) -> dict[str, int | None]:
    """The rally's optimum and par: the sums of its stages' (null while any is unknown), with
    the last stage's tie-breaks."""
    if any(stage is None for stage in stages):
        return dict.fromkeys(("optimum", "optimum_tiebreak", "par", "par_tiebreak"))
    known = [stage for stage in stages if stage is not None]
    solved = all(stage.status == "solved" for stage in known)
    return {
        "optimum": _sum_of([stage.optimum for stage in known]) if solved else None,
        "optimum_tiebreak": known[-1].tiebreak if solved else None,
        "par": _sum_of([stage.par for stage in known]),
        "par_tiebreak": known[-1].par_tiebreak,
    }


def _entry_json(
    rank: int | None, entry: Standing, members: dict[str, str] | None
) -> dict[str, Any]:
    shown = {
        "rank": rank,
        "name": entry.name,
        "you": entry.player_id == players.current_player_id(),
        "status": entry.status,
        "stages_finished": len(entry.finished),
        "score": entry.total,
        "tiebreak": entry.tiebreak,
        "stages": [
            *({"score": r.score, "tiebreak": r.tiebreak, "run": r.run_id} for r in entry.finished),
            *([None] * (STAGES - len(entry.finished))),
        ],
    }
    if members is not None:
        shown["member"] = members[entry.player_id]
    return shown


def _standings(
    rows: list[PlayerStages], days_over: list[bool]
) -> list[tuple[int | None, Standing]]:
    found = [standing(row.player_id, row.name, row.plays, days_over) for row in rows]
    return ranked([entry for entry in found if entry is not None])


def _rally_start(day: str) -> date:
    """The Friday of a rally that has started; 404 for any other date."""
    start = parse_day(day)
    if not is_start(start):
        raise ApiError(404, f"a rally starts on a Friday: {start} is a {start:%A}")
    if start > daily.today():
        raise ApiError(404, f"the rally of {start} has not started")
    if start < daily.FIRST_DAY:
        raise ApiError(404, f"the first daily is of {daily.FIRST_DAY}: no rally starts before it")
    return start


@api.route(
    "/rallies/<day>",
    "GET",
    summary="The weekend rally of Crazy Rally",
    responses={200: Answer("The rally's stages, optimum, par and standings", RALLY)},
    errors=[404],
    query=[LEAGUE_PARAM],
)
def get_rally(day: str, league: str | None) -> Response:
    """The rally whose first stage is played on `day`, a Friday: its three stages (the
    Crazy Rally dailies of Friday, Saturday and Sunday, UTC), the sum of their optima and of
    their pars, and its standings. A rally's score is the sum of its stages' scores, its
    tie-break the last stage's; a stage not finished ends the rally for that player.
    Everyone's standings list the best 100 players still in; with `?league=`, the league's
    members (to its members only: the 404 of no league to anyone else), those out too."""
    start = _rally_start(day)
    today = daily.today()
    days = stage_days(start)
    stages = [daily_of(d, RALLY_GAME) if d <= today else None for d in days]
    days_over = [d < today for d in days]
    stage_ids = [None if stage is None else stage.id for stage in stages]
    shown_league = None
    members = None
    if league is None:
        leaders, entrants = services().cache.get(
            ("rally-leaders", start, today),
            lambda: services().store.rally.leaders(stage_ids, days_over, LEADERS),
        )
        entries = _standings(leaders, days_over)
    else:
        shown_league = {"id": league, "name": league_of_member(league).name}
        rows = services().store.rally.league(league, stage_ids)
        entries = _standings(rows, days_over)
        entrants = len(entries)
        members = {row.player_id: row.member or "" for row in rows}
    answer = {
        "game": RALLY_GAME,
        "today": today.isoformat(),
        "start": days[0].isoformat(),
        "end": days[-1].isoformat(),
        "status": "over" if days_over[-1] else "running",
        "stages": [
            _stage_json(n, d, p) for n, (d, p) in enumerate(zip(days, stages, strict=True), start=1)
        ],
        **_targets(stages),
        "league": shown_league,
        "entrants": entrants,
        "standings": [_entry_json(rank, entry, members) for rank, entry in entries],
    }
    response = jsonify(answer)
    if league is not None:
        response.cache_control.private = True
        response.cache_control.no_store = True
    return response
