"""Fixed-window rate limits kept in Redis, shared by every web process.

A counter per (limit, client, window) is incremented on each request and
expires with its window. When Redis cannot be reached the limits fail open:
runs must still be accepted while Redis is down, so the request goes through,
the outage is logged once, and Redis is not asked again for a few seconds
(a dead Redis must not add a connection timeout to every request).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import redis
from flask import request

from service.openapi import ApiError

log = logging.getLogger(__name__)

# After a Redis failure, limits are skipped for this long before Redis is tried again.
RETRY_REDIS_AFTER_SECONDS = 5.0


@dataclass(frozen=True)
class Limit:
    name: str
    requests: int
    window_seconds: int
    what: str  # in words, for the 429 message: "run submissions"

    def describe(self) -> str:
        return f"too many {self.what}: at most {self.requests} per {self.window_seconds} s"


def client_key() -> str:
    """Who a request counts against: its remote address.

    Not the player cookie: anyone can shed a cookie and get a fresh one, while
    an address is what the server sees. (Behind a reverse proxy, the proxy must
    pass the client's address on, e.g. with werkzeug's ProxyFix.)
    """
    return f"addr:{request.remote_addr}"


class RateLimiter:
    """Counts requests in Redis and refuses those over a limit with a 429."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        writes_per_minute: int,
        new_seeds_per_hour: int,
        attempts_per_address: int,
        new_players_per_hour: int,
    ):
        self.redis = client
        self.writes = Limit("writes", writes_per_minute, 60, "run submissions")
        self.new_seeds = Limit("new-seeds", new_seeds_per_hour, 3600, "new practice seeds")
        # Counted per daily (the scope names it): a UTC day's window is the daily's day.
        self.attempt_starts = Limit(
            "attempt-starts", attempts_per_address, 24 * 3600, "attempts started on this daily"
        )
        self.new_players = Limit("new-players", new_players_per_hour, 3600, "new player ids")
        self._skip_until = 0.0

    def check(self, limit: Limit, scope: str = "") -> None:
        """Count one request of the current client (within scope, say one daily, when given);
        ApiError 429 with Retry-After when over."""
        now = time.time()
        window = int(now // limit.window_seconds)
        key = f"rally:ratelimit:{limit.name}:{window}:{client_key()}:{scope}"
        count = self._increment(key, limit, now)
        if count is not None and count > limit.requests:
            retry_after = math.ceil((window + 1) * limit.window_seconds - now)
            raise ApiError(
                429,
                limit.describe(),
                headers={"Retry-After": str(retry_after)},
                retry_after=retry_after,
            )

    def _increment(self, key: str, limit: Limit, now: float) -> int | None:
        """The key's new count, or None (allow) when Redis is unavailable."""
        if now < self._skip_until:
            return None
        try:
            pipeline = self.redis.pipeline(transaction=False)
            pipeline.incr(key)
            pipeline.expire(key, limit.window_seconds + 1)
            count, _ = pipeline.execute()
        except (redis.RedisError, OSError) as error:
            if self._skip_until == 0.0:
                log.warning("rate limits off while Redis is unavailable: %s", error)
            self._skip_until = now + RETRY_REDIS_AFTER_SECONDS
            return None
        if self._skip_until:
            log.warning("Redis is back: rate limits on again")
            self._skip_until = 0.0
        return int(count)
