"""Cost of one rate-limit check on the write path: RateLimiter.check against Redis.

Every run submission makes one check, allowed (the common case) or refused. The
checks go to a private redis-server on a unix socket, as under `rally serve`
(and, with --redis-url, to that Redis too, say a shared one on TCP; the bench
writes rate-limit keys into it); each client makes `--per-client` checks under a
limit it never reaches, then one client goes on over its limit.
Usage: python -m bench.ratelimit [--clients N] [--per-client N] [--redis-url URL]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from contextlib import suppress
from pathlib import Path

from flask import Flask

from service.jobs.queue import web_connection
from service.operations.redis_server import EmbeddedRedis
from service.web.errors import ApiError
from service.web.ratelimit import RateLimiter


def check_times(limiter: RateLimiter, clients: int, per_client: int) -> list[float]:
    """Seconds of each check: per_client checks by each of `clients` addresses, allowed."""
    app = Flask(__name__)
    times = []
    for client in range(clients):
        address = f"10.{client // 65536 % 256}.{client // 256 % 256}.{client % 256}"
        with app.test_request_context(environ_base={"REMOTE_ADDR": address}):
            for _ in range(per_client):
                started = time.perf_counter()
                limiter.check(limiter.writes)
                times.append(time.perf_counter() - started)
    return times


def refused_times(limiter: RateLimiter, checks: int) -> list[float]:
    """Seconds of each check by one address already over its limit."""
    times = []
    with Flask(__name__).test_request_context(environ_base={"REMOTE_ADDR": "10.255.255.1"}):
        for _ in range(limiter.writes.requests):
            limiter.check(limiter.writes)
        for _ in range(checks):
            started = time.perf_counter()
            with suppress(ApiError):
                limiter.check(limiter.writes)
            times.append(time.perf_counter() - started)
    return times


def summary(name: str, times: list[float]) -> str:
    micro = sorted(t * 1e6 for t in times)
    p99 = micro[int(len(micro) * 0.99) - 1]
    return f"| {name} | {len(micro)} | {statistics.median(micro):.0f} | {p99:.0f} |"


def measure(redis_url: str, label: str, options: argparse.Namespace) -> list[str]:
    writes = options.per_client + 10  # never reached by the allowed checks
    limiter = RateLimiter(
        web_connection(redis_url),
        writes_per_minute=writes,
        new_seeds_per_hour=1,
        new_players_per_hour=1,
    )
    check_times(limiter, 10, 10)  # warm up: connection, scripts loaded
    return [
        summary(f"{label}, allowed", check_times(limiter, options.clients, options.per_client)),
        summary(f"{label}, refused", refused_times(limiter, options.clients)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--per-client", type=int, default=10)
    parser.add_argument("--redis-url", help="another Redis to measure (a db it may write to)")
    options = parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}")
    print("| Redis, checks | count | median us | p99 us |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="rl-", dir="/tmp") as folder:
        server = EmbeddedRedis(Path(folder) / "r.sock", Path(folder))
        with server:
            for line in measure(server.url, "unix socket", options):
                print(line)
    if options.redis_url:
        for line in measure(options.redis_url, options.redis_url, options):
            print(line)


if __name__ == "__main__":
    main()
