"""The one place the service reads the time from.

Everything that depends on the date (which daily is today, whether a daily's
seed may be shown, whether a run is official) asks `CLOCK`. In production it
is the system's UTC time; a test sets it to any moment to walk a daily through
its life (committed, played, revealed) without waiting for midnight.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta


class Clock:
    """The current UTC time: the system's, unless a moment has been set."""

    def __init__(self) -> None:
        self._fixed: datetime | None = None
        self._ahead = 0.0  # seconds added to the monotonic clock by advance()

    def now(self) -> datetime:
        return self._fixed or datetime.now(UTC)

    def today(self) -> date:
        """The current daily's date: days roll over at 00:00 UTC."""
        return self.now().date()

    def set(self, moment: datetime | None) -> None:
        """Stop the clock at moment (aware, any zone); None returns to the system's time."""
        if moment is not None and moment.tzinfo is None:
            raise ValueError("the clock takes aware datetimes only")
        self._fixed = None if moment is None else moment.astimezone(UTC)

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: how long something has been kept."""
        return time.monotonic() + self._ahead

    def advance(self, seconds: float) -> None:
        """Move both clocks ahead by seconds (a set moment too): what is kept ages at once."""
        self._ahead += seconds
        if self._fixed is not None:
            self._fixed += timedelta(seconds=seconds)


CLOCK = Clock()
