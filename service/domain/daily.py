"""The daily puzzles: one seed per game and UTC date, derived with the server's secret.

The seed is an HMAC of the game and date under RALLY_DAILY_KEY, so nobody can
compute tomorrow's puzzle today, yet every process of the service agrees on it.
It carries 128 secret bits; a daily recorded when seeds carried 64 keeps its
seed, since its commitment may be out already.
It stays secret until its day is over; meanwhile the service publishes its
commitment, a SHA-256 of the game, rules version and seed, so that anyone can
check afterwards that the revealed seed is the one that was played.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
from datetime import UTC, date, datetime, time, timedelta

from puzzles import GAMES
from service.clock import CLOCK
from service.storage.database import aware
from service.storage.puzzles import PuzzleRecord
from service.storage.runs import RunRecord

# Puzzle number 1 is the daily of this date.
from service.storage.store import Store

# Puzzle number 1 is the daily of this date.
FIRST_DAY = date(2026, 11, 1)
# The shape of a daily's seed: its date, then 32 hex digits (128 secret bits, daily_seed),
# or 16 (64 bits) for a daily recorded before seeds had 128 (legacy_daily_seed).
DAILY_SEED = re.compile(r"d(\d{8})-([0-9a-f]{32}|[0-9a-f]{16})")
SECRET_HEX_DIGITS = 32
LEGACY_HEX_DIGITS = 16


def today() -> date:
    """The current daily's date: days roll over at 00:00 UTC."""
    return CLOCK.today()


def is_revealed(day: date) -> bool:
    """True once the daily of day is over (00:00 UTC of the next day): its seed is public."""
    return day < today()


def revealed_at(day: date) -> datetime:
    """When the daily of day is over (00:00 UTC of the next day): its seed and every line
    of play on it (the optimal one, other players' runs) become public."""
    return datetime.combine(day + timedelta(days=1), time.min, UTC)


def time_until_revealed(day: date) -> timedelta:
    """How long until the daily of day is over (negative once it is)."""
    return revealed_at(day) - CLOCK.now()


def seconds_until_revealed(day: date) -> int:
    """Whole seconds until the daily of day is over, at least 1: a Retry-After."""
    return max(1, math.ceil(time_until_revealed(day).total_seconds()))


def starts_within(day: date, span: timedelta) -> bool:
    """True once the daily of day starts (00:00 UTC) within span from now, or has started."""
    return datetime.combine(day, time.min, UTC) - CLOCK.now() <= span


def is_days_attempt(run: RunRecord, puzzle: PuzzleRecord) -> bool:
    """Whether run is its player's attempt at a daily, stored on the daily's own day:
    official when it finished first, else an attempt that did not finish. Practice of a
    daily opens only once its day is over, so no other run of it is stored that day."""
    stored_on = aware(run.created_at).astimezone(UTC).date()
    return puzzle.daily_date is not None and stored_on == puzzle.daily_date


def commitment(game: str, rules_version: str, seed: str) -> str:
    """The published hash of a daily: sha256("<game>:<rules_version>:<seed>") in hex."""
    return hashlib.sha256(f"{game}:{rules_version}:{seed}".encode()).hexdigest()


def _keyed_hex(daily_key: str, message: str) -> str:
    return hmac.new(daily_key.encode(), message.encode(), hashlib.sha256).hexdigest()


def daily_seed(daily_key: str, game: str, day: date) -> str:
    """The seed a daily recorded now gets: its date and 128 secret bits (32 hex digits of
    an HMAC under the daily key), so that its public commitment cannot be inverted by
    trying seeds (2^64 hashes are within reach of rented hardware; 2^128 are not)."""
    digest = _keyed_hex(daily_key, f"{game}/{day.isoformat()}/seed-128")
    return f"d{day:%Y%m%d}-{digest[:SECRET_HEX_DIGITS]}"


def legacy_daily_seed(daily_key: str, game: str, day: date) -> str:
    """The seed of 64 secret bits that dailies recorded before seeds had 128 were given:
    such a daily keeps it (ensure_daily), as its commitment was published."""
    digest = _keyed_hex(daily_key, f"{game}/{day.isoformat()}")
    return f"d{day:%Y%m%d}-{digest[:LEGACY_HEX_DIGITS]}"


def daily_date_of(daily_key: str, game: str, seed: str) -> date | None:
    """The date whose daily of game this seed is or may be, in either form (checked against
    its HMAC), else None."""
    match = DAILY_SEED.fullmatch(seed)
    if match is None:
        return None
    try:
        day = datetime.strptime(match[1], "%Y%m%d").date()
    except ValueError:
        return None
    form = daily_seed if len(match[2]) == SECRET_HEX_DIGITS else legacy_daily_seed
    return day if hmac.compare_digest(form(daily_key, game, day), seed) else None


def puzzle_number(day: date) -> int:
    return (day - FIRST_DAY).days + 1


def upcoming_days(first: date, days_ahead: int) -> list[date]:
    """first and the days_ahead days after it."""
    return [first + timedelta(days=offset) for offset in range(days_ahead + 1)]


def days_between(first: date, end: date) -> list[date]:
    """The days from first up to end, end excluded."""
    return [first + timedelta(days=offset) for offset in range((end - first).days)]


def seed_of_day(store: Store, daily_key: str, game: str, day: date) -> str:
    """The seed of the daily of game for day: the one it was first recorded with (under any
    rules version), which never changes once its commitment is out; else daily_seed."""
    recorded = [puzzle for puzzle in store.puzzles.dailies(day) if puzzle.game == game]
    if recorded:
        return min(recorded, key=lambda puzzle: puzzle.id).seed
    return daily_seed(daily_key, game, day)


def ensure_daily(store: Store, daily_key: str, game: str, day: date) -> PuzzleRecord:
    """The daily puzzle of game for day under the game's current rules, recorded if new
    (with the seed the day's daily has had, if any: seed_of_day)."""
    return store.puzzles.ensure(
        game,
        seed_of_day(store, daily_key, game, day),
        GAMES[game].rules_version,
        daily_date=day,
        number=puzzle_number(day),
    )


def ensure_dailies(store: Store, daily_key: str, day: date) -> list[PuzzleRecord]:
    """The daily puzzle of every game for day (by game name), recorded as pending if new."""
    return [ensure_daily(store, daily_key, name, day) for name in sorted(GAMES)]
