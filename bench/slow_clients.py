"""Slow clients against each gunicorn worker class: do other requests still get answers?

For each worker class it starts gunicorn serving the service (--workers, and
--threads each for gthread; SQLite
and an embedded Redis in a fresh instance folder), then, for each count of slow
sockets, holds that many connections that send one header line every
--interval seconds and never finish their request, and meanwhile times
--requests plain GETs one after the other (each on a new connection, each
given --timeout seconds). It prints, per class and count, the median and worst
latency and how many requests got no answer in time.

    python -m bench.slow_clients [--classes sync gthread gevent] [--slow 0 4 16 64]
                                 [--requests 20] [--interval 2] [--timeout 10]
                                 [--workers 2] [--threads 4]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from bench.load import free_ports, wait_until_up  # noqa: E402
from service.operations.children import start_process  # noqa: E402
from service.operations.processes import gunicorn_command  # noqa: E402
from service.operations.redis_server import EmbeddedRedis  # noqa: E402

HOST = "127.0.0.1"
PATH = "/api/v1/games"
# One slow socket's headers: a request line, then endless header lines, one per interval.
REQUEST_LINE = b"GET /api/v1/games HTTP/1.1\r\nHost: localhost\r\n"


@dataclass(frozen=True)
class Result:
    worker_class: str
    slow_sockets: int
    latencies: list[float]
    unanswered: int


@contextmanager
def slow_sockets(port: int, count: int, interval: float) -> Iterator[None]:
    """count connections that trickle header lines until the block ends."""
    stop = threading.Event()

    def trickle() -> None:
        with socket.create_connection((HOST, port)) as connection:
            connection.sendall(REQUEST_LINE)
            line = 0
            while not stop.wait(interval):
                line += 1
                try:
                    connection.sendall(f"X-Slow-{line}: {'x' * 20}\r\n".encode())
                except OSError:  # the server gave up on this client: open another
                    return

    threads = [threading.Thread(target=trickle, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    time.sleep(interval + 0.5)  # every slow socket has been accepted and sent a line
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(interval + 1)


def timed_gets(port: int, requests: int, timeout: float) -> tuple[list[float], int]:
    latencies, unanswered = [], 0
    for _ in range(requests):
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}{PATH}", timeout=timeout) as answer:
                answer.read()
            latencies.append(time.perf_counter() - started)
        except OSError:
            unanswered += 1
    return latencies, unanswered


def measure_class(worker_class: str, instance: Path, options: argparse.Namespace) -> list[Result]:
    env = {
        **os.environ,
        "RALLY_INSTANCE_PATH": str(instance),
        "REDIS_URL": f"unix://{instance / 'redis.sock'}",
    }
    (port,) = free_ports(1)
    command = gunicorn_command(HOST, port, options.workers, worker_class)
    if worker_class == "gthread":
        command[-1:-1] = ["--threads", str(options.threads)]
    server = start_process(command, env)
    try:
        wait_until_up(f"http://{HOST}:{port}{PATH}")
        results = []
        for count in options.slow:
            with slow_sockets(port, count, options.interval):
                latencies, unanswered = timed_gets(port, options.requests, options.timeout)
            results.append(Result(worker_class, count, latencies, unanswered))
        return results
    finally:
        server.terminate()
        server.wait(30)


def report(results: list[Result], options: argparse.Namespace) -> None:
    print(
        f"{options.requests} GETs of {PATH} one after the other, each given "
        f"{options.timeout} s; slow sockets send a header line every {options.interval} s; "
        f"{options.workers} workers, {options.threads} threads each for gthread"
    )
    print("| worker class | slow sockets | answered | median ms | max ms |")
    print("| --- | --- | --- | --- | --- |")
    for result in results:
        answered = len(result.latencies)
        median = f"{statistics.median(result.latencies) * 1000:.1f}" if answered else "-"
        worst = f"{max(result.latencies) * 1000:.0f}" if answered else "-"
        print(
            f"| {result.worker_class} | {result.slow_sockets} | "
            f"{answered}/{options.requests} | {median} | {worst} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", nargs="+", default=["sync", "gthread", "gevent"])
    parser.add_argument("--slow", nargs="+", type=int, default=[0, 4, 16, 64])
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=4, help="threads of a gthread worker")
    options = parser.parse_args()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder, ExitStack() as stack:
        instance = Path(folder)
        stack.enter_context(EmbeddedRedis(instance / "redis.sock", instance))
        migrate = [sys.executable, "-m", "service.operations.cli", "migrate"]
        subprocess.run(
            migrate,
            env={**os.environ, "RALLY_INSTANCE_PATH": str(instance)},
            check=True,
            cwd=BENCH_DIR.parent,
            capture_output=True,
        )
        for worker_class in options.classes:
            results += measure_class(worker_class, instance, options)
    report(results, options)


if __name__ == "__main__":
    main()
