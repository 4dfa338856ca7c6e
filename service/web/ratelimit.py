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
is new), so they are counted here: in memory by the
library's moving-window limiter, and in Redis by one script that counts every
limit a request passes (a submission without a player cookie passes two) in one
round trip, each round trip costing both processes CPU (docs/performance.md).
The script keeps the library's lists and keys (a list of request times per client
and limit, newest first), so both count alike.

The attempts a client starts on a daily are not counted here but in the database,
in the transaction that starts each one (service.storage.attempts): that limit must
hold while Redis is down, when each process here counts only what it saw itself.
The database keeps a keyed hash of the client's bucket (`keyed_client_key`), never
the address.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import math
import time
from dataclasses import dataclass

import redis
from flask import request
from limits import RateLimitItem, RateLimitItemPerSecond
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from service.clock import CLOCK
from service.web.errors import ApiError

log = logging.getLogger(__name__)

# After a Redis failure, limits are counted in memory for this long before Redis is tried again.
RETRY_REDIS_AFTER_SECONDS = 5.0
KEY_PREFIX = "rally:ratelimit"
# An IPv6 client is counted by its network of this many bits (a subscriber's usual share).
IPV6_CLIENT_PREFIX = 64
REDIS_ERRORS = (redis.RedisError, OSError)
# Counts one request against several moving windows, in order, as the library's
# acquire_moving_window.lua does for one: KEYS are the windows' lists, ARGV the request's
# time, then each window's size in requests and length in seconds. A window already full
# within its length refuses: the script stops there (the windows before it stay counted,
# as separate checks would have left them) and answers {its position, its oldest request's
# time}, which says when it frees a place; {0} when every window counted the request.
COUNT_IN_WINDOWS = """
local now = tonumber(ARGV[1])
for position, key in ipairs(KEYS) do
    local size = tonumber(ARGV[2 * position])
    local length = tonumber(ARGV[2 * position + 1])
    local oldest = redis.call('lindex', key, size - 1)
    if oldest and tonumber(oldest) >= now - length then
        return {position, oldest}
    end
    redis.call('lpush', key, ARGV[1])
    redis.call('ltrim', key, 0, size - 1)
    redis.call('expire', key, length)
end
return {0}
"""


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

    def identifiers(self, client: str) -> tuple[str, str]:
        """What the limits library keys client's count of this limit by."""
        return (self.name, client)

    def redis_key(self, client: str) -> str:
        """The list of client's requests under this limit, named as the library names it."""
        return f"{KEY_PREFIX}:{self.item().key_for(*self.identifiers(client))}"


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


def keyed_client_key(secret_key: str) -> str:
    """The current request's client_key as the database may keep it: an HMAC under the
    secret key, in hex. The same client always gives the same value, and nothing in the
    database gives the address back."""
    digest = hmac.new(secret_key.encode(), b"client:" + client_key().encode(), hashlib.sha256)
    return digest.hexdigest()[:32]


class RateLimiter:
    """Counts requests in Redis (in memory while Redis is down); over a limit is a 429."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        writes_per_minute: int,
        new_seeds_per_hour: int,
        new_players_per_hour: int,
    ):
        self.writes = Limit("writes", writes_per_minute, 60, "run submissions")
        self.new_seeds = Limit("new-seeds", new_seeds_per_hour, 3600, "new practice seeds")
        self.new_players = Limit("new-players", new_players_per_hour, 3600, "new player ids")
        self._count_in_windows = client.register_script(COUNT_IN_WINDOWS)
        self._local = MovingWindowRateLimiter(MemoryStorage())
        self._redis_down = False
        self._retry_redis_at = 0.0

    def check(self, *limits: Limit) -> None:
        """Count one request of the current client against each limit, in order and in one
        Redis round trip; ApiError 429 with Retry-After at the first one it is over (the
        limits before it stay counted, the ones after it are not)."""
        if not limits:
            return
        refused = self._count(limits, client_key())
        if refused is not None:
            limit, retry_after = refused
            raise ApiError.retry_later(429, limit.describe(), retry_after)

    def _count(self, limits: tuple[Limit, ...], client: str) -> tuple[Limit, int] | None:
        """The limit the request is over and the seconds until it would pass, or None."""
        if not self._redis_down or time.time() >= self._retry_redis_at:
            try:
                refused = self._count_in_redis(limits, client)
            except REDIS_ERRORS as error:
                self._redis_failed(error)
            else:
                if self._redis_down:
                    log.warning("Redis is back: rate limits shared again")
                    self._redis_down = False
                return refused
        return self._count_in_memory(limits, client)

    def _count_in_redis(self, limits: tuple[Limit, ...], client: str) -> tuple[Limit, int] | None:
        now = CLOCK.now().timestamp()
        keys = [limit.redis_key(client) for limit in limits]
        sizes = [value for limit in limits for value in (limit.requests, limit.window_seconds)]
        answer = self._count_in_windows(keys=keys, args=[now, *sizes])
        if answer[0] == 0:
            return None
        limit = limits[answer[0] - 1]
        return limit, _seconds_until(float(answer[1]) + limit.window_seconds, now)

    def _count_in_memory(self, limits: tuple[Limit, ...], client: str) -> tuple[Limit, int] | None:
        for limit in limits:
            identifiers = limit.identifiers(client)
            if not self._local.hit(limit.item(), *identifiers):
                reset_at, _remaining = self._local.get_window_stats(limit.item(), *identifiers)
                return limit, _seconds_until(reset_at, time.time())
        return None

    def _redis_failed(self, error: Exception) -> None:
        """Count in this process's memory for a while: a dead Redis must not cost every
        request a connection attempt."""
        if not self._redis_down:
            log.warning("rate limits kept in memory while Redis is unavailable: %s", error)
            self._redis_down = True
        self._retry_redis_at = time.time() + RETRY_REDIS_AFTER_SECONDS


def _seconds_until(moment: float, now: float) -> int:
    """Whole seconds from now until moment, at least 1 (a Retry-After)."""
    return max(1, math.ceil(moment - now))
