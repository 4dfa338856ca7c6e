"""Moving-window rate limits kept in Redis and shared by every web process.

A limit allows at most `requests` in any span of `window_seconds` (the `limits`
library's moving window: no double burst where two fixed windows meet). A
request counts against its client's address, an IPv6 address by its /64
network, since one subscriber usually holds a whole /64.

When Redis cannot be reached the limits are kept in this process's memory
instead, so they still hold while runs go on being accepted; the outage is
logged once and Redis is not asked again for a few seconds (a dead Redis must
not add a connection timeout to every request). Each web process then counts
on its own, so a client's budget is at most one per process until Redis is back.

flask-limiter, built on the same library, attaches limits to routes before the
view runs; these are counted in the middle of a view (a seed counts only when it
is new, an attempt per daily), so the library's limiter is used directly.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import time
from dataclasses import dataclass

import redis
from flask import request
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.storage import MemoryStorage, RedisStorage
from limits.strategies import MovingWindowRateLimiter

from service.openapi import ApiError

log = logging.getLogger(__name__)

# After a Redis failure, limits are counted in memory for this long before Redis is tried again.
RETRY_REDIS_AFTER_SECONDS = 5.0
KEY_PREFIX = "rally:ratelimit"
# An IPv6 client is counted by its network of this many bits (a subscriber's usual share).
IPV6_CLIENT_PREFIX = 64
REDIS_ERRORS = (redis.RedisError, OSError)


@dataclass(frozen=True)
class Limit:
    name: str
    requests: int
    window_seconds: int
    what: str  # in words, for the 429 message: "run submissions"

    def describe(self) -> str:
        return f"too many {self.what}: at most {self.requests} per {self.window_seconds} s"

    def item(self) -> RateLimitItem:
        return RateLimitItemPerSecond(self.requests, self.window_seconds)


def client_address(remote_addr: str | None) -> str:
    """The address a client is counted by: an IPv4 address as it is, IPv6 by its /64."""
    try:
        address = ipaddress.ip_address(remote_addr or "")
    except ValueError:
        return remote_addr or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


def client_key() -> str:
    """Who the current request counts against: its client's address.

    Not the player cookie: anyone can shed a cookie and get a fresh one, while
    an address is what the server sees. Behind reverse proxies the address is
    the one they pass on (RALLY_TRUSTED_PROXIES, applied by the app factory).
    """
    return f"addr:{client_address(request.remote_addr)}"


class RateLimiter:
    """Counts requests in Redis (in memory while Redis is down); over a limit is a 429."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        writes_per_minute: int,
        new_seeds_per_hour: int,
        attempts_per_address: int,
        new_players_per_hour: int,
    ):
        self.writes = Limit("writes", writes_per_minute, 60, "run submissions")
        self.new_seeds = Limit("new-seeds", new_seeds_per_hour, 3600, "new practice seeds")
        # Counted per daily (the scope names it): attempts start only on the daily's own
        # day, so a day-long moving window holds every start of that daily.
        self.attempt_starts = Limit(
            "attempt-starts", attempts_per_address, 24 * 3600, "attempts started on this daily"
        )
        self.new_players = Limit("new-players", new_players_per_hour, 3600, "new player ids")
        storage = RedisStorage(
            "redis://", connection_pool=client.connection_pool, key_prefix=KEY_PREFIX
        )
        self._shared = MovingWindowRateLimiter(storage)
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._redis_down = False
        self._retry_redis_at = 0.0

    def check(self, limit: Limit, scope: str = "") -> None:
        """Count one request of the current client (within scope, say one daily, when given);
        ApiError 429 with Retry-After when over."""
        identifiers = (limit.name, client_key(), scope)
        counter = self._counter()
        try:
            allowed = counter.hit(limit.item(), *identifiers)
        except REDIS_ERRORS as error:
            counter = self._redis_failed(error)
            allowed = counter.hit(limit.item(), *identifiers)
        else:
            if counter is self._shared and self._redis_down:
                log.warning("Redis is back: rate limits shared again")
                self._redis_down = False
        if not allowed:
            retry_after = self._seconds_until_allowed(counter, limit, identifiers)
            raise ApiError(
                429,
                limit.describe(),
                headers={"Retry-After": str(retry_after)},
                retry_after=retry_after,
            )

    def _counter(self) -> MovingWindowRateLimiter:
        """Redis's counts, or this process's own while Redis is down and not due a new try."""
        if self._redis_down and time.time() < self._retry_redis_at:
            return self._local
        return self._shared

    def _redis_failed(self, error: Exception) -> MovingWindowRateLimiter:
        if not self._redis_down:
            log.warning("rate limits kept in memory while Redis is unavailable: %s", error)
            self._redis_down = True
        self._retry_redis_at = time.time() + RETRY_REDIS_AFTER_SECONDS
        return self._local

    def _seconds_until_allowed(
        self, counter: MovingWindowRateLimiter, limit: Limit, identifiers: tuple[str, ...]
    ) -> int:
        """When the oldest request in the window leaves it (whole seconds, at least 1)."""
        try:
            reset_at, _remaining = counter.get_window_stats(limit.item(), *identifiers)
        except REDIS_ERRORS:
            return limit.window_seconds
        return max(1, math.ceil(reset_at - time.time()))
