"""Values one process keeps for a moment.

The hottest reads (today's dailies, a puzzle's record, a leaderboard) change
rarely and at known moments; keeping each for about a second takes the database
off those paths, at the price of showing a change up to that long late in other
processes. What a process changes itself it drops at once (`drop`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from service.clock import CLOCK

V = TypeVar("V")


class BriefCache(Generic[V]):
    """Up to max_entries values, each kept `seconds` after it was computed (0: none kept).

    Not locked: gunicorn's gevent workers switch greenlets only on I/O, never inside
    these methods. When full it is emptied whole, which costs one recomputation of each
    hot key and never lets it grow.
    """

    def __init__(self, seconds: float, max_entries: int) -> None:
        self.seconds = seconds
        self.max_entries = max_entries
        self._entries: dict[Hashable, tuple[float, V]] = {}

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The kept value of key, else compute()'s, kept unless it is None (about to change)."""
        now = CLOCK.monotonic()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now:
            return entry[1]
        value = compute()
        if value is not None and self.seconds > 0:
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            self._entries[key] = (now + self.seconds, value)
        return value

    def drop(self, key: Hashable) -> None:
        """Forget key's value: this process changed it."""
        self._entries.pop(key, None)
