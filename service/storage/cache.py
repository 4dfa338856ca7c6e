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

    Not locked: gunicorn's gevent workers switch greenlets only on I/O, and the only I/O
    here is compute()'s (a database read). While one greenlet computes, others may compute
    the same key (the last value stored stays) or drop one: a value whose compute() ran
    across a drop() is returned but not kept, since it may have been read before the
    change the drop() stands for. When full it is emptied whole, which costs one
    recomputation of each hot key and never lets it grow.
    """

    def __init__(self, seconds: float, max_entries: int) -> None:
        self.seconds = seconds
        self.max_entries = max_entries
        self._entries: dict[Hashable, tuple[float, V]] = {}
        # drop() calls so far: one made while a value was computed makes it unsafe to keep.
        self._drops = 0

    def get(
        self,
        key: Hashable,
        compute: Callable[[], V],
        still: Callable[[V], bool] | None = None,
    ) -> V:
        """The kept value of key (if still(value) holds, when still is given), else
        compute()'s, kept unless it is None (about to change) or a drop() came while it
        was computed."""
        now = CLOCK.monotonic()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now and (still is None or still(entry[1])):
            return entry[1]
        drops = self._drops
        value = compute()
        if value is not None and self.seconds > 0 and self._drops == drops:
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            self._entries[key] = (now + self.seconds, value)
        return value

    def drop(self, key: Hashable) -> None:
        """Forget key's value, and keep none being computed now: this process changed it."""
        self._entries.pop(key, None)
        self._drops += 1
