"""Leagues of friends: their invites, their caps, and what a league shows its members.

A league's invite link carries a token that lets whoever holds it join. The token is an
HMAC, under the service's secret key, of the league's id and a random salt kept with the
league: the server can show the current link to every member again, and the database
holds only the salt and the token's SHA-256 (which finds the league a token opens), so a
read of it hands out no usable link. Renewing the invite draws a new salt: the old link
stops working.

A league shows, for each game, each member's official result of a day's daily (or
where they stand without one), ranked; and the week, Monday to Sunday UTC: each member's
points (their official score) per day, their total, the days played and their current
streak. Equal results share a rank. No line of play is part of any of it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from datetime import date, timedelta
from typing import NamedTuple

MAX_MEMBERS = 500
MAX_LEAGUES_PER_PLAYER = 50
DAYS_IN_A_WEEK = 7
_INVITE_CONTEXT = b"rally-daily/league-invite:"

# Where a member stands on a daily, best first after the ranked results.
FINISHED = "finished"
PLAYING = "playing"
DID_NOT_FINISH = "did_not_finish"
NOT_PLAYED = "not_played"
STATUSES = (FINISHED, PLAYING, DID_NOT_FINISH, NOT_PLAYED)


def new_league_id() -> str:
    return secrets.token_urlsafe(9)


def new_member_handle() -> str:
    """What other members know a member by: random, never the player's id."""
    return secrets.token_urlsafe(6)


def new_invite_salt() -> str:
    return secrets.token_hex(16)


def invite_token(secret_key: str, league_id: str, salt: str) -> str:
    """The token of the league's invite link while the league keeps salt (43 characters)."""
    message = _INVITE_CONTEXT + f"{league_id}:{salt}".encode()
    digest = hmac.new(secret_key.encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def invite_hash(token: str) -> str:
    """What the database keeps of a token, and finds its league by: its SHA-256 in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def week_of(day: date) -> list[date]:
    """The days of day's week, Monday to Sunday (UTC dates)."""
    monday = day - timedelta(days=day.weekday())
    return [monday + timedelta(days=offset) for offset in range(DAYS_IN_A_WEEK)]


def day_status(*, official: bool, attempted: bool, ran: bool, day_over: bool) -> str:
    """Where a member stands on a daily: finished (an official run); not played (no
    attempt); did not finish (the attempt ended without finishing, or the day ended before
    it did); else still playing."""
    if official:
        return FINISHED
    if not attempted:
        return NOT_PLAYED
    return DID_NOT_FINISH if ran or day_over else PLAYING


class DayResult(NamedTuple):
    """A member's result of one daily: their official score and tie-break when finished.
    (Tuples, not dataclasses: a league of 500 members makes thousands of them a view.)"""

    member: str
    name: str | None
    status: str
    score: int | None = None
    tiebreak: int | None = None
    run: str | None = None


def _name_key(name: str | None) -> tuple[bool, str]:
    return name is None, (name or "").casefold()


def _best_first(result: DayResult) -> tuple[int, int, tuple[bool, str]]:
    return -(result.score or 0), -(result.tiebreak or 0), _name_key(result.name)


def _by_status(result: DayResult) -> tuple[int, tuple[bool, str]]:
    return STATUSES.index(result.status), _name_key(result.name)


def ranked_day(results: Sequence[DayResult]) -> list[tuple[int | None, DayResult]]:
    """The finished results best first (score, then tie-break, both higher first; equal
    ones share a rank and are listed by name), then the others by status and name."""
    finished = sorted((r for r in results if r.status == FINISHED), key=_best_first)
    others = sorted((r for r in results if r.status != FINISHED), key=_by_status)
    ranked: list[tuple[int | None, DayResult]] = []
    previous: tuple[int | None, int | None] | None = None
    for position, result in enumerate(finished, start=1):
        outcome = (result.score, result.tiebreak)
        ranked.append((ranked[-1][0] if outcome == previous else position, result))
        previous = outcome
    return ranked + [(None, result) for result in others]


class WeekRow(NamedTuple):
    """A member's week at one game: the points (official score) of each day, Monday first
    (None: no official run that day, or the day is still to come), their sum and count."""

    member: str
    name: str | None
    days: list[int | None]
    points: int
    days_played: int
    current_streak: int


def week_row(member: str, name: str | None, days: list[int | None], current_streak: int) -> WeekRow:
    played = [points for points in days if points is not None]
    return WeekRow(member, name, days, sum(played), len(played), current_streak)


def ranked_week(rows: Sequence[WeekRow]) -> list[tuple[int, WeekRow]]:
    """The week's table, most points first, then most days played; equal rows share a rank."""
    ordered = sorted(rows, key=lambda r: (-r.points, -r.days_played, _name_key(r.name)))
    ranked: list[tuple[int, WeekRow]] = []
    previous: tuple[int, int] | None = None
    for position, row in enumerate(ordered, start=1):
        outcome = (row.points, row.days_played)
        ranked.append((ranked[-1][0] if outcome == previous else position, row))
        previous = outcome
    return ranked
