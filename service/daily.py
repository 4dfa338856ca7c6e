"""The daily puzzles: one seed per game and UTC date, derived with the server's secret.

The seed is an HMAC of the game and date under RALLY_DAILY_KEY, so nobody can
compute tomorrow's puzzle today, yet every process of the service agrees on it.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, date, datetime, timedelta

from puzzles import GAMES
from service.store import PuzzleRecord, Store

# Puzzle number 1 is the daily of this date.
FIRST_DAY = date(2026, 11, 1)
# Days ahead of today that the scheduled job generates, so a day never starts unsolved.
DAYS_AHEAD = 7


def today() -> date:
    """The current daily's date: days roll over at 00:00 UTC."""
    return datetime.now(UTC).date()


def daily_seed(daily_key: str, game: str, day: date) -> str:
    digest = hmac.new(
        daily_key.encode(), f"{game}/{day.isoformat()}".encode(), hashlib.sha256
    ).hexdigest()
    return f"d{day:%Y%m%d}-{digest[:16]}"


def puzzle_number(day: date) -> int:
    return (day - FIRST_DAY).days + 1


def upcoming_days(first: date, days_ahead: int = DAYS_AHEAD) -> list[date]:
    """first and the days_ahead days after it."""
    return [first + timedelta(days=offset) for offset in range(days_ahead + 1)]


def ensure_dailies(store: Store, daily_key: str, day: date) -> list[PuzzleRecord]:
    """The daily puzzle of every game for day (by game name), recorded as pending if new."""
    return [
        store.ensure_puzzle(
            name,
            daily_seed(daily_key, name, day),
            game.rules_version,
            daily_date=day,
            number=puzzle_number(day),
        )
        for name, game in sorted(GAMES.items())
    ]
