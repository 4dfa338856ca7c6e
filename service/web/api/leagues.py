"""Leagues of friends (service.domain.leagues): made with a name, joined by an invite link,
left at will; the maker renews the invite and removes members. A league shows its members,
and no one else, where each of them stands: today's and yesterday's dailies and the week.

The invite link carries its token in the URL's fragment (`/leagues/join#<token>`), which
browsers never send to a server: it stays out of access logs, proxies and Referer
headers, and the page there joins with a same-origin POST when the player confirms, so a
link preview that merely opens it joins no one.

Anyone who is not a member (with or without a link) is told nothing of a league: every
route answers them the 404 of a league that does not exist. A member the maker removed is
kept out: their join of the league, by whichever of its links, answers exactly as a link
that opens nothing does, until the maker lets them back in (`readmit`).
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

from flask import Response, current_app

from puzzles import GAMES
from service.domain import daily
from service.domain.leagues import (
    MAX_LEAGUES_PER_PLAYER,
    MAX_MEMBERS,
    STATUSES,
    DayResult,
    WeekRow,
    day_status,
    invite_hash,
    invite_token,
    new_invite_salt,
    new_league_id,
    new_member_handle,
    ranked_day,
    ranked_week,
    week_of,
    week_row,
)
from service.storage.league_reads import MemberRecord
from service.storage.leagues import (
    LeagueFacts,
    LeagueFull,
    LeagueRecord,
    MakerStays,
    NoSuchInvite,
    NoSuchLeague,
    NoSuchMember,
    NoSuchRemoval,
    NotTheMaker,
    TooManyLeagues,
)
from service.storage.puzzles import PuzzleRecord
from service.storage.streaks import current_length
from service.web import players
from service.web.api.common import (
    DATE,
    DISPLAY_NAME,
    NULLABLE_INT,
    TOKEN_ID,
    api,
    puzzle_json,
    services,
    tiebreak_field,
)
from service.web.api.dailies import current_dailies
from service.web.errors import ApiError
from service.web.openapi import Answer, Link, PathParam, QueryParam

LEAGUE_ID = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,32}$"}
INVITE_TOKEN = {"type": "string", "pattern": "^[A-Za-z0-9_-]{20,64}$"}
MEMBER = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,32}$"}
JOIN_PAGE = "/leagues/join"
NO_LEAGUE = "no league"

api.path_param(
    PathParam(
        "league_id", LEAGUE_ID, "A league's id", invalid_status=404, invalid_message=NO_LEAGUE
    )
)


def league_param(description: str) -> QueryParam:
    """The query parameter `league`: a league's id, of which the caller must be a member."""
    return QueryParam(
        "league", LEAGUE_ID, description, invalid_status=404, invalid_message=NO_LEAGUE
    )


def league_of_member(league_id: str) -> LeagueRecord:
    """The league if the caller is one of its members; the 404 of no league otherwise."""
    membership = services().store.leagues.membership(league_id, players.current_player_id())
    if membership is None:
        raise _not_found()
    return membership.league


LEAGUE_NAME = {
    **DISPLAY_NAME,
    "description": "The league's name, shown to its members and in the share text of a "
    "member who chooses it (the rules of display names apply)",
}
PLAYER_NAME = {
    **DISPLAY_NAME,
    "description": "The caller's display name from now on: members see each other by it "
    "(the league shows null for a member without one)",
}
NULLABLE_NAME = {"type": ["string", "null"], "description": "The member's display name"}
DAY_STANDING = api.schema(
    "LeagueDayStanding",
    {
        "type": "object",
        "required": ["rank", "member", "name", "status", "score", "tiebreak", "run"],
        "properties": {
            "rank": {
                **NULLABLE_INT,
                "description": "Among the members who finished (equal results share a rank); "
                "null for the others",
            },
            "member": MEMBER,
            "name": NULLABLE_NAME,
            "status": {
                "enum": list(STATUSES),
                "description": "finished: an official run; playing: an attempt under way; "
                "did_not_finish: the attempt ended unfinished, or the day ended before it did; "
                "not_played: no attempt",
            },
            "score": {**NULLABLE_INT, "description": "The official score; null unless finished"},
            "tiebreak": tiebreak_field(NULLABLE_INT, "The official run's tie-break"),
            "run": {
                "anyOf": [TOKEN_ID, {"type": "null"}],
                "description": "The official run (its moves show once the day is over)",
            },
        },
    },
)
DAY_STANDINGS = api.schema(
    "LeagueDay",
    {
        "type": "object",
        "description": "Each game's standings of the day's daily, every member listed",
        "required": sorted(GAMES),
        "properties": {game: {"type": "array", "items": DAY_STANDING} for game in sorted(GAMES)},
        "additionalProperties": False,
    },
)
DAILY_OF_A_DAY = {
    "anyOf": [{"$ref": "#/components/schemas/Daily"}, {"type": "null"}],
    "description": "The day's dailies, each with its optimum and par (null before the first daily)",
}
WEEK_STANDING = api.schema(
    "LeagueWeekStanding",
    {
        "type": "object",
        "required": ["rank", "member", "name", "days", "points", "days_played", "current_streak"],
        "properties": {
            "rank": {"type": "integer", "minimum": 1},
            "member": MEMBER,
            "name": NULLABLE_NAME,
            "days": {
                "type": "array",
                "minItems": 7,
                "maxItems": 7,
                "items": NULLABLE_INT,
                "description": "The points (official score) of each day, Monday first; null for "
                "a day without an official run, or still to come",
            },
            "points": {"type": "integer", "description": "The week's points: their sum"},
            "days_played": {"type": "integer", "minimum": 0, "maximum": 7},
            "current_streak": {
                "type": "integer",
                "minimum": 0,
                "description": "Consecutive days up to today (or yesterday, while today's daily "
                "is not played) each with an official run of the game, as GET /me counts them",
            },
        },
    },
)
LEAGUE = api.schema(
    "League",
    {
        "type": "object",
        "required": [
            "id",
            "name",
            "you",
            "maker",
            "invite",
            "invite_url",
            "members",
            "dailies",
            "today",
            "yesterday",
            "week",
            "removed",
        ],
        "properties": {
            "id": LEAGUE_ID,
            "name": {"type": "string"},
            "you": {**MEMBER, "description": "The caller's member handle"},
            "maker": {**MEMBER, "description": "The maker's member handle"},
            "invite": {
                **INVITE_TOKEN,
                "description": "The token of the current invite link: whoever holds it may join",
            },
            "invite_url": {
                "type": "string",
                "format": "uri",
                "description": "The invite link: the join page, the token in its fragment",
            },
            "members": {
                "type": "array",
                "description": f"The members (at most {MAX_MEMBERS}), in the order they joined",
                "items": {
                    "type": "object",
                    "required": ["member", "name", "joined_at"],
                    "properties": {
                        "member": MEMBER,
                        "name": NULLABLE_NAME,
                        "joined_at": {"type": "string", "format": "date-time"},
                    },
                },
            },
            "removed": {
                "type": "array",
                "description": "The players the maker removed, kept out of the league until "
                "the maker lets them back in (POST /leagues/{league_id}/readmit), first "
                "removed first: listed to the maker only, empty for every other member",
                "items": {
                    "type": "object",
                    "required": ["member", "name", "removed_at"],
                    "properties": {
                        "member": {**MEMBER, "description": "The handle they had"},
                        "name": NULLABLE_NAME,
                        "removed_at": {"type": "string", "format": "date-time"},
                    },
                },
            },
            "dailies": {
                "type": "object",
                "required": ["today", "yesterday"],
                "properties": {"today": DAILY_OF_A_DAY, "yesterday": DAILY_OF_A_DAY},
            },
            "today": DAY_STANDINGS,
            "yesterday": DAY_STANDINGS,
            "week": {
                "type": "object",
                "required": ["start", "end", "days", "games"],
                "properties": {
                    "start": {**DATE, "description": "The week's Monday (UTC)"},
                    "end": {**DATE, "description": "Its Sunday"},
                    "days": {"type": "array", "items": DATE},
                    "games": {
                        "type": "object",
                        "required": sorted(GAMES),
                        "properties": {
                            game: {"type": "array", "items": WEEK_STANDING}
                            for game in sorted(GAMES)
                        },
                        "additionalProperties": False,
                    },
                },
            },
        },
    },
)
LEFT = api.schema(
    "LeftLeague",
    {
        "type": "object",
        "required": ["left"],
        "properties": {"left": {**LEAGUE_ID, "description": "The league the caller left"}},
    },
)
SAME_LEAGUE = {"league_id": "$response.body#/id"}
LEAGUE_LINKS = {"GetLeague": Link("get_league", SAME_LEAGUE)}
EMPTY_BODY = {"type": "object", "additionalProperties": False}


def _not_found() -> ApiError:
    """What anyone who is not a member hears of a league: that there is none (the answer
    repeats nothing, not even the id asked for)."""
    return ApiError(404, NO_LEAGUE)


def _answer(body: dict[str, Any]) -> Response:
    """A league's answer: its members' alone, so no shared cache may keep it. Its keys are
    written in the order built (a league of 500 members answers about 450 KB, and sorting
    every object's keys cost a third of the encoding)."""
    response = current_app.response_class(
        json.dumps(body, separators=(",", ":")), mimetype="application/json"
    )
    response.cache_control.private = True
    response.cache_control.no_store = True
    return response


def invite_url(league: LeagueRecord) -> tuple[str, str]:
    """The league's current invite token and link."""
    token = invite_token(services().config.secret_key, league.id, league.invite_salt)
    return token, f"{services().config.public_url}{JOIN_PAGE}#{token}"


def _new_invite(league_id: str) -> tuple[str, str]:
    """A new salt for the league's invite, and the hash of the token it makes."""
    salt = new_invite_salt()
    return salt, invite_hash(invite_token(services().config.secret_key, league_id, salt))


def _named_player(display_name: str | None) -> str:
    """The caller, recorded (with their new name, if given) so a league can refer to them."""
    player = players.player_id_for_write()
    services().store.players.upsert(player, display_name)
    return player


# The league's page


def _dailies_of(day: date) -> dict[str, PuzzleRecord]:
    """The day's daily of each game (none before the first daily), kept a moment."""
    if day < daily.FIRST_DAY:
        return {}
    puzzles = services().cache.get(
        ("league-dailies", day, daily.today()), lambda: current_dailies(day)
    )
    return {puzzle.game: puzzle for puzzle in puzzles}


def _day_standings(
    facts: LeagueFacts, puzzles: dict[str, PuzzleRecord], day_over: bool
) -> dict[str, Any]:
    """Each game's standings of the day whose dailies are puzzles, every member listed."""
    standings = {}
    for game in sorted(GAMES):
        results = [_day_result(facts, m, puzzles.get(game), day_over) for m in facts.members]
        standings[game] = [_ranked_json(rank, result) for rank, result in ranked_day(results)]
    return standings


def _day_result(
    facts: LeagueFacts, member: MemberRecord, puzzle: PuzzleRecord | None, day_over: bool
) -> DayResult:
    """Where the member stands on the daily (None: a day before the first daily)."""
    key = (member.player_id, -1 if puzzle is None else puzzle.id)
    official = facts.official.get(key)
    status = day_status(
        official=official is not None,
        attempted=key in facts.attempted,
        ran=key in facts.ran,
        day_over=day_over,
    )
    if official is None:
        return DayResult(member.member, member.name, status)
    return DayResult(
        member.member, member.name, status, official.score, official.tiebreak, official.run_id
    )


def _ranked_json(rank: int | None, result: DayResult) -> dict[str, Any]:
    return {
        "rank": rank,
        "member": result.member,
        "name": result.name,
        "status": result.status,
        "score": result.score,
        "tiebreak": result.tiebreak,
        "run": result.run,
    }


def _week_json(
    facts: LeagueFacts, week: list[dict[str, PuzzleRecord]], today: date
) -> dict[str, Any]:
    """Each game's week table: every member's points per day, days played and streak."""
    today_number = daily.puzzle_number(today)
    games = {}
    for game in sorted(GAMES):
        puzzle_ids = [puzzles[game].id if game in puzzles else -1 for puzzles in week]
        rows = []
        official = facts.official.get
        for member in facts.members:
            player = member.player_id
            points = [
                None if (result := official((player, puzzle))) is None else result.score
                for puzzle in puzzle_ids
            ]
            kept = facts.streaks.get((player, game))
            streak = 0 if kept is None else current_length(*kept, today_number)
            rows.append(week_row(member.member, member.name, points, streak))
        games[game] = [_week_row_json(rank, row) for rank, row in ranked_week(rows)]
    days = week_of(today)
    return {
        "start": days[0].isoformat(),
        "end": days[-1].isoformat(),
        "days": [day.isoformat() for day in days],
        "games": games,
    }


def _week_row_json(rank: int, row: WeekRow) -> dict[str, Any]:
    return {
        "rank": rank,
        "member": row.member,
        "name": row.name,
        "days": row.days,
        "points": row.points,
        "days_played": row.days_played,
        "current_streak": row.current_streak,
    }


def _daily_json(day: date, puzzles: dict[str, PuzzleRecord]) -> dict[str, Any] | None:
    if not puzzles:
        return None
    return {
        "date": day.isoformat(),
        "puzzles": [puzzle_json(puzzles[game]) for game in sorted(puzzles)],
    }


def league_answer(league_id: str) -> dict[str, Any]:
    """The league as its member, the caller (whose id this request may be handing out),
    sees it; the 404 of no league to anyone else."""
    today = daily.today()
    yesterday = today - timedelta(days=1)
    week = [_dailies_of(day) if day <= today else {} for day in week_of(today)]
    today_puzzles, yesterday_puzzles = _dailies_of(today), _dailies_of(yesterday)
    days = [*today_puzzles.values(), *yesterday_puzzles.values()]
    facts = services().store.leagues.facts(
        league_id,
        players.request_player_id(),
        {puzzle.id for puzzles in week for puzzle in puzzles.values()} | {p.id for p in days},
        [puzzle.id for puzzle in days],
    )
    if facts is None:
        raise _not_found()
    league = facts.membership.league
    token, url = invite_url(league)
    return {
        "id": league.id,
        "name": league.name,
        "you": facts.membership.member,
        "maker": next(m.member for m in facts.members if m.player_id == league.maker_id),
        "invite": token,
        "invite_url": url,
        "members": [
            {"member": m.member, "name": m.name, "joined_at": m.joined_at.isoformat()}
            for m in facts.members
        ],
        "removed": [
            {"member": r.member, "name": r.name, "removed_at": r.removed_at.isoformat()}
            for r in facts.removed
        ],
        "dailies": {
            "today": _daily_json(today, today_puzzles),
            "yesterday": _daily_json(yesterday, yesterday_puzzles),
        },
        "today": _day_standings(facts, today_puzzles, day_over=False),
        "yesterday": _day_standings(facts, yesterday_puzzles, day_over=True),
        "week": _week_json(facts, week, today),
    }


# Routes


@api.route(
    "/leagues",
    "POST",
    summary="Make a league",
    body={
        "type": "object",
        "required": ["name"],
        "properties": {"name": LEAGUE_NAME, "display_name": PLAYER_NAME},
        "additionalProperties": False,
    },
    responses={
        201: Answer(
            "The new league, the caller its maker and one member", LEAGUE, links=LEAGUE_LINKS
        )
    },
    errors=[409, 429],
)
def make_league(body: dict[str, Any]) -> tuple[Response, int]:
    """A new league named `name`, with the caller as its maker and first member (under
    `display_name`, which becomes theirs, when given). Its invite link is in the answer,
    and in the league's answer to every member. A player is in at most 50 leagues: a 409
    past that."""
    players.admit_write(services().limiter.writes)
    name = players.clean_display_name(body["name"])
    assert name is not None, "the body's schema requires a name"
    maker = _named_player(players.clean_display_name(body.get("display_name"), "display_name"))
    league_id = new_league_id()
    salt, hashed = _new_invite(league_id)
    try:
        services().store.leagues.make(
            league_id=league_id,
            name=name,
            maker_id=maker,
            member=new_member_handle(),
            invite_salt=salt,
            invite_hash=hashed,
            league_cap=MAX_LEAGUES_PER_PLAYER,
        )
    except TooManyLeagues as refused:
        raise _too_many_leagues(refused) from None
    return _answer(league_answer(league_id)), 201


def _too_many_leagues(refused: TooManyLeagues) -> ApiError:
    return ApiError(
        409, f"you are in {refused.cap} leagues, the most a player may be in: leave one first"
    )


@api.route(
    "/leagues/join",
    "POST",
    summary="Join a league by its invite",
    body={
        "type": "object",
        "required": ["token"],
        "properties": {"token": INVITE_TOKEN, "display_name": PLAYER_NAME},
        "additionalProperties": False,
    },
    responses={
        200: Answer(
            "The league joined (or the caller was in it already)", LEAGUE, links=LEAGUE_LINKS
        )
    },
    errors=[404, 409, 429],
)
def join_league(body: dict[str, Any]) -> Response:
    """Join the league whose current invite link carries `token`, under the caller's display
    name (`display_name` becomes it, when given). A token made up, or of an invite renewed
    since, is a 404 that names no league, and so, word for word, is any link of a league
    whose maker removed the caller and has not let them back in; a full league (500
    members) or a caller in 50 leagues already is a 409. Joining a league one is in changes
    nothing."""
    players.admit_write(services().limiter.writes)
    player = _named_player(players.clean_display_name(body.get("display_name"), "display_name"))
    try:
        joined, _ = services().store.leagues.join(
            invite_hash=invite_hash(body["token"]),
            player_id=player,
            member=new_member_handle(),
            member_cap=MAX_MEMBERS,
            league_cap=MAX_LEAGUES_PER_PLAYER,
        )
    except NoSuchInvite:
        raise ApiError(
            404, "this invite link does not open any league: it was renewed, or mistyped"
        ) from None
    except LeagueFull as refused:
        raise ApiError(
            409, f"this league is full: it has {refused.cap} members, the most a league may have"
        ) from None
    except TooManyLeagues as refused:
        raise _too_many_leagues(refused) from None
    return _answer(league_answer(joined.league.id))


@api.route(
    "/leagues/<league_id>",
    "GET",
    summary="A league, to its members",
    responses={200: Answer("The league's members and standings", LEAGUE)},
    errors=[404],
)
def get_league(league_id: str) -> Response:
    """The league, to its members only (the 404 of no league to anyone else): its members;
    each game's standings of today's daily (each member's official score and tie-break, or
    where they stand without one) and of yesterday's (final), with each daily's optimum and
    par; and the week, Monday to Sunday UTC: each member's points (official score) per game
    and day, days played and current streak. No line of play is shown: a run's moves open
    at the end of its daily's day, as everywhere."""
    return _answer(league_answer(league_id))


@api.route(
    "/leagues/<league_id>/leave",
    "POST",
    summary="Leave a league",
    body=EMPTY_BODY,
    responses={200: Answer("The caller is no longer in the league", LEFT)},
    errors=[404, 429],
)
def leave_league(league_id: str, body: dict[str, Any]) -> Response:
    """Take the caller out of the league. When its maker leaves, the member who joined first
    after them becomes its maker; when its last member leaves, it is deleted."""
    del body  # an empty object: nothing to read
    services().limiter.check(services().limiter.writes)
    try:
        services().store.leagues.leave(league_id, _member_id(league_id))
    except NoSuchLeague:
        raise _not_found() from None
    return _answer({"left": league_id})


def _member_id(league_id: str) -> str:
    """The caller's player id; the 404 of no league without one."""
    player = players.current_player_id()
    if player is None:
        raise _not_found()
    return player


@api.route(
    "/leagues/<league_id>/invite",
    "POST",
    summary="Renew a league's invite (its maker)",
    body=EMPTY_BODY,
    responses={200: Answer("The league with its new invite", LEAGUE)},
    errors=[403, 404, 429],
)
def renew_invite(league_id: str, body: dict[str, Any]) -> Response:
    """A new invite link for the league: from now on the old one opens nothing (a 404 to
    whoever tries it). The maker's only: a 403 to other members."""
    del body
    services().limiter.check(services().limiter.writes)
    salt, hashed = _new_invite(league_id)
    try:
        services().store.leagues.renew_invite(league_id, _member_id(league_id), salt, hashed)
    except NoSuchLeague:
        raise _not_found() from None
    except NotTheMaker:
        raise ApiError(403, "only the league's maker may renew its invite") from None
    return _answer(league_answer(league_id))


@api.route(
    "/leagues/<league_id>/remove",
    "POST",
    summary="Remove a member from a league (its maker)",
    body={
        "type": "object",
        "required": ["member"],
        "properties": {"member": {**MEMBER, "description": "The member's handle"}},
        "additionalProperties": False,
    },
    responses={200: Answer("The league without the member", LEAGUE)},
    errors=[400, 403, 404, 429],
)
def remove_member(league_id: str, body: dict[str, Any]) -> Response:
    """Take a member out of the league, and keep them out: the league no longer shows itself
    to them, and their join of it, by whichever of its links, is the 404 of a link that
    opens nothing until the maker lets them back in (`readmit`). The maker's only: a 403 to
    other members; the maker leaves rather than removes themselves (a 400)."""
    services().limiter.check(services().limiter.writes)
    try:
        services().store.leagues.remove(league_id, _member_id(league_id), body["member"])
    except NoSuchLeague:
        raise _not_found() from None
    except NotTheMaker:
        raise ApiError(403, "only the league's maker may remove a member") from None
    except NoSuchMember:
        raise ApiError(404, f"no member {body['member']!r} in this league") from None
    except MakerStays:
        raise ApiError(
            400, "the maker cannot remove themselves: leave the league instead"
        ) from None
    return _answer(league_answer(league_id))


@api.route(
    "/leagues/<league_id>/readmit",
    "POST",
    summary="Let a removed player join a league again (its maker)",
    body={
        "type": "object",
        "required": ["member"],
        "properties": {"member": {**MEMBER, "description": "The handle the removed player had"}},
        "additionalProperties": False,
    },
    responses={200: Answer("The league, the player no longer among its removed", LEAGUE)},
    errors=[403, 404, 429],
)
def readmit_member(league_id: str, body: dict[str, Any]) -> Response:
    """Lift a removal: the player removed under the handle `member` (one of the league's
    `removed`) may join the league again, by its current invite link, which someone must
    pass on to them; they join under a new handle. The maker's only: a 403 to other members;
    a handle no removed player had is a 404."""
    services().limiter.check(services().limiter.writes)
    try:
        services().store.leagues.readmit(league_id, _member_id(league_id), body["member"])
    except NoSuchLeague:
        raise _not_found() from None
    except NotTheMaker:
        raise ApiError(403, "only the league's maker may let a removed player back in") from None
    except NoSuchRemoval:
        raise ApiError(404, f"no removed player {body['member']!r} in this league") from None
    return _answer(league_answer(league_id))
