"""Rate limits: a moving window in Redis, IPv6 clients per /64, an in-memory fallback while
Redis is down, and the client's address taken from trusted proxies only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import redis
from flask import Flask
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter

from service.clock import Clock
from service.config import Config
from service.jobs.queue import web_connection
from service.operations.redis_server import EmbeddedRedis
from service.web import ratelimit
from service.web.errors import ApiError
from service.web.ratelimit import Limit, RateLimiter, client_address
from tests.api_support import DAILY_KEY, FINISHING_GAME, SECRET_KEY, client_of

# Three requests in any minute.
BURST = Limit("burst-test", 3, 60, "test requests")


def limiter_on(redis_url: str) -> RateLimiter:
    return RateLimiter(
        web_connection(redis_url),
        writes_per_minute=1,
        new_seeds_per_hour=1,
        new_players_per_hour=1,
    )


def allowed(limiter: RateLimiter, limit: Limit, address: str) -> bool:
    """Whether one more request from address passes the limit."""
    with Flask(__name__).test_request_context(environ_base={"REMOTE_ADDR": address}):
        try:
            limiter.check(limit)
        except ApiError as error:
            assert error.code == 429
            assert int(error.extra_headers["Retry-After"]) == error.fields["retry_after"] >= 1
            return False
    return True


def test_no_double_burst_where_fixed_windows_would_meet(redis_url: str, clock: Clock):
    limiter = limiter_on(redis_url)
    edge = datetime(2026, 12, 10, 12, 0, tzinfo=UTC)  # where a fixed minute would start afresh
    clock.set(edge - timedelta(seconds=0.3))
    before = [allowed(limiter, BURST, "10.1.0.1") for _ in range(3)]
    clock.set(edge + timedelta(seconds=0.2))
    after = [allowed(limiter, BURST, "10.1.0.1") for _ in range(3)]
    assert (before, after) == ([True] * 3, [False] * 3)
    clock.set(edge + timedelta(seconds=BURST.window_seconds - 0.31))
    assert not allowed(limiter, BURST, "10.1.0.1")  # the first three are still in the window
    clock.set(edge + timedelta(seconds=BURST.window_seconds - 0.29))
    assert allowed(limiter, BURST, "10.1.0.1")  # the window moved past the first three


def test_retry_after_says_when_the_oldest_request_leaves_the_window(redis_url: str):
    limiter = limiter_on(redis_url)
    hour = Limit("hour-test", 1, 3600, "test requests")
    assert allowed(limiter, hour, "10.1.0.2")
    context = Flask(__name__).test_request_context(environ_base={"REMOTE_ADDR": "10.1.0.2"})
    with context, pytest.raises(ApiError) as refused:
        limiter.check(hour)
    assert 3590 <= refused.value.fields["retry_after"] <= 3600


def refusal(limiter: RateLimiter, address: str, *limits: Limit) -> tuple[str, int] | None:
    """What one request from address over limits is refused for (message and Retry-After),
    or None when every limit counts it."""
    with Flask(__name__).test_request_context(environ_base={"REMOTE_ADDR": address}):
        try:
            limiter.check(*limits)
        except ApiError as error:
            return error.description, error.fields["retry_after"]
    return None


def several_limits_are_counted_in_order_up_to_the_first_one_over(limiter: RateLimiter) -> None:
    first = Limit("first-test", 3, 60, "first things")
    full = Limit("full-test", 1, 3600, "full things")
    last = Limit("last-test", 1, 60, "last things")
    assert refusal(limiter, "10.4.0.1", full) is None
    for _ in range(2):
        refused = refusal(limiter, "10.4.0.1", first, full, last)
        assert refused is not None and refused[0] == full.describe()
        assert 3590 <= refused[1] <= 3600  # when full's one request leaves its hour
    # Each refused request was counted by the limit before the full one, and by none after.
    assert refusal(limiter, "10.4.0.1", first) is None
    over_first = refusal(limiter, "10.4.0.1", first)
    assert over_first is not None and over_first[0] == first.describe()
    assert 59 <= over_first[1] <= 60
    assert refusal(limiter, "10.4.0.1", last) is None


def test_several_limits_in_order_in_redis(redis_url: str):
    several_limits_are_counted_in_order_up_to_the_first_one_over(limiter_on(redis_url))


def scripts_run(server: redis.Redis) -> int:
    """Lua scripts clients have asked the Redis server to run (each a round trip)."""
    stats = server.info("commandstats")
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("eval", "evalsha"))


def test_several_limits_take_one_redis_round_trip_allowed_or_refused(tmp_path):
    one = Limit("one-test", 1, 60, "ones")
    many = Limit("many-test", 5, 60, "manies")
    with EmbeddedRedis(tmp_path / "r.sock", tmp_path) as server:
        limiter = limiter_on(server.url)
        assert refusal(limiter, "10.4.0.2", many) is None  # loads the script
        stats = redis.Redis.from_url(server.url)
        runs = []
        for _ in range(2):  # allowed, then refused with its Retry-After
            before = scripts_run(stats)
            refusal(limiter, "10.4.0.2", many, one)
            runs.append(scripts_run(stats) - before)
    assert runs == [1, 1]


def test_counts_the_limits_library_left_in_redis_still_hold(redis_url: str):
    """The script reads and writes the library's own lists: an upgrade keeps the counts."""
    once = Limit("library-test", 1, 60, "test requests")
    storage = RedisStorage(redis_url, key_prefix=ratelimit.KEY_PREFIX)
    assert MovingWindowRateLimiter(storage).hit(once.item(), *once.identifiers("addr:10.4.0.3"))
    assert refusal(limiter_on(redis_url), "10.4.0.3", once) is not None


def test_several_limits_in_memory_while_redis_is_down():
    limiter = limiter_on("redis://127.0.0.1:1/0")
    several_limits_are_counted_in_order_up_to_the_first_one_over(limiter)


@pytest.mark.parametrize(
    ("address", "counted_as"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("not an address", "not an address"),
        (None, "unknown"),
    ],
)
def test_clients_are_counted_by_address_and_ipv6_by_its_64(address, counted_as):
    assert client_address(address) == counted_as


def test_every_address_of_one_ipv6_64_shares_its_budget(make_app):
    app = make_app(RALLY_NEW_SEEDS_PER_HOUR="1")

    def new_seed(address: str, seed: str) -> int:
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = address
        return client.post(f"/api/v1/puzzles/{FINISHING_GAME}/{seed}", json={}).status_code

    assert new_seed("2001:db8:7:1::a", "v6-first") == 202
    assert new_seed("2001:db8:7:1:ffff::b", "v6-second") == 429
    assert new_seed("2001:db8:7:2::a", "v6-third") == 202  # the next /64


def test_limits_hold_in_memory_while_redis_is_down_and_redis_counts_again_after(
    tmp_path, caplog, monkeypatch
):
    monkeypatch.setattr(ratelimit, "RETRY_REDIS_AFTER_SECONDS", 0.0)
    once = Limit("fallback-test", 1, 60, "test requests")
    server = EmbeddedRedis(tmp_path / "r.sock", tmp_path)
    server.start()
    try:
        limiter = limiter_on(server.url)
        assert allowed(limiter, once, "10.2.0.1")
        server.stop()
        assert allowed(limiter, once, "10.2.0.2")
        assert not allowed(limiter, once, "10.2.0.2")  # counted in memory
        assert "rate limits kept in memory while Redis is unavailable" in caplog.text
        server.start()
        assert not allowed(limiter, once, "10.2.0.1")  # Redis kept its count
        assert "Redis is back" in caplog.text
    finally:
        server.stop()


def test_new_seeds_over_the_limit_are_refused_while_redis_is_down(make_app):
    app = make_app(redis="redis://127.0.0.1:1/0", RALLY_NEW_SEEDS_PER_HOUR="2")
    client = client_of(app)
    statuses = [
        client.post(f"/api/v1/puzzles/{FINISHING_GAME}/down-{n}", json={}).status_code
        for n in range(3)
    ]
    assert statuses == [202, 202, 429]


# The client's address behind proxies


def ask_through_proxy(app: Flask, forwarded_for: str, seed: str) -> int:
    """A new seed asked for by a client whose proxy (10.3.0.1) says it is forwarded_for."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = "10.3.0.1"
    answer = client.post(
        f"/api/v1/puzzles/{FINISHING_GAME}/{seed}",
        json={},
        headers={"X-Forwarded-For": forwarded_for},
    )
    return answer.status_code


def test_behind_one_proxy_each_client_has_its_own_budget(make_app):
    app = make_app(RALLY_NEW_SEEDS_PER_HOUR="1", RALLY_TRUSTED_PROXIES="1")
    assert ask_through_proxy(app, "198.51.100.1", "proxied-a") == 202
    assert ask_through_proxy(app, "198.51.100.2", "proxied-b") == 202
    # A client's own X-Forwarded-For is the left part, which one trusted proxy does not vouch for.
    assert ask_through_proxy(app, "192.0.2.99, 198.51.100.1", "proxied-c") == 429


def test_without_proxies_x_forwarded_for_is_ignored(make_app):
    app = make_app(RALLY_NEW_SEEDS_PER_HOUR="1")
    assert ask_through_proxy(app, "198.51.100.1", "direct-a") == 202
    assert ask_through_proxy(app, "198.51.100.2", "direct-b") == 429


def test_the_number_of_proxies_must_be_a_count():
    with pytest.raises(ValueError, match="RALLY_TRUSTED_PROXIES"):
        Config.from_env(
            {
                "RALLY_TRUSTED_PROXIES": "-1",
                "RALLY_SECRET_KEY": SECRET_KEY,
                "RALLY_DAILY_KEY": DAILY_KEY,
                "REDIS_URL": "redis://x",
            }
        )
