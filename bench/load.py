"""HTTP load bench on loopback: the API under gunicorn against a bare Flask ceiling.

In a fresh instance folder it starts the embedded Redis, gunicorn serving the
service (SQLite there by default; DATABASE_URL points it elsewhere) and, as the
ceiling, gunicorn serving a bare Flask JSON endpoint with the same workers. It
then drives, one after the other: the ceiling, GET /api/v1/daily, POST
/api/v1/play/... (half a run) and run submissions (a whole finished run,
replayed, scored and committed), each as fast as it answers; then submissions
at a fixed rate (open loop, --rate per second), where latency counts from when
each request was due. It prints requests/s, p50 and p99 latency of each and
its throughput relative to the ceiling.

The as-fast-as-it-answers load comes from wrk when it is installed (`apt-get
install wrk`), else from a bounded Python generator (threads with keep-alive
connections), itself slower than wrk: compare figures from one tool only. The
fixed-rate load always comes from Python threads, as wrk cannot hold a rate.

    python -m bench.load [--seconds 10] [--connections 32] [--threads 2] [--workers 2]
                         [--rate 200] [--worker-class CLASS]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from flask import Flask, jsonify  # noqa: E402

from puzzles import get_game  # noqa: E402
from puzzles.playout import random_playout, seeded_chooser  # noqa: E402
from service.processes import WEB_WORKER_CLASS, gunicorn_command  # noqa: E402
from service.redis_server import EmbeddedRedis, start_process  # noqa: E402

HOST = "127.0.0.1"
# The game whose daily the bench plays: its random playouts reach the finish often.
GAME = "crazy-rally"
STARTUP_SECONDS = 30.0


def bare_app() -> Flask:
    """The ceiling: Flask answering a small JSON object with no work at all."""
    app = Flask("ceiling")

    @app.get("/bare")
    def bare() -> Any:
        return jsonify({"date": "2026-11-30", "puzzles": []})

    return app


@dataclass(frozen=True)
class Target:
    name: str
    port: int
    path: str
    body: str | None = None  # JSON to POST; None for a GET


@dataclass(frozen=True)
class Result:
    target: Target
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    failures: int  # non-2xx answers and socket errors


# Load generators


WRK_SCRIPT = """
{request}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\n{{"requests": %d, "micros": %d, "p50": %d, "p99": %d, "failures": %d}}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def wrk(target: Target, seconds: int, connections: int, threads: int, work_dir: Path) -> Result:
    request = ""
    if target.body is not None:
        request = (
            'wrk.method = "POST"\n'
            f"wrk.body = [==[{target.body}]==]\n"
            'wrk.headers["Content-Type"] = "application/json"'
        )
    script = work_dir / f"{target.name.replace(' ', '_').replace('/', '_')}.lua"
    script.write_text(WRK_SCRIPT.format(request=request))
    url = f"http://{HOST}:{target.port}{target.path}"
    output = subprocess.run(
        ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    summary = json.loads(output.strip().splitlines()[-1])
    return Result(
        target,
        summary["requests"] / (summary["micros"] / 1e6),
        summary["p50"] / 1000,
        summary["p99"] / 1000,
        summary["failures"],
    )


class Client:
    """One keep-alive connection sending the target's request (reconnecting after errors)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.body = None if target.body is None else target.body.encode()
        self.headers = {"Content-Type": "application/json"} if self.body else {}
        self.connection = http.client.HTTPConnection(HOST, target.port, timeout=10)

    def send(self) -> bool:
        """One request; True when answered with a 2xx."""
        try:
            method = "GET" if self.body is None else "POST"
            self.connection.request(method, self.target.path, self.body, self.headers)
            response = self.connection.getresponse()
            response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            return False
        return 200 <= response.status < 300


def _summary(target: Target, latencies: list[float], failures: int, elapsed: float) -> Result:
    percentiles = statistics.quantiles(latencies, n=100)
    return Result(target, len(latencies) / elapsed, percentiles[49] * 1000,
                  percentiles[98] * 1000, failures)  # fmt: skip


def _run_threads(count: int, drive: Any) -> float:
    """Run drive() in count threads; the seconds they took."""
    started = time.perf_counter()
    threads = [threading.Thread(target=drive) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def python_load(target: Target, seconds: int, connections: int) -> Result:
    """Closed loop: each of `connections` threads sends its next request once answered."""
    latencies: list[float] = []
    failures: list[bool] = []
    deadline = time.perf_counter() + seconds

    def drive() -> None:
        client = Client(target)
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            failures.append(not client.send())
            latencies.append(time.perf_counter() - started)

    elapsed = _run_threads(connections, drive)
    return _summary(target, latencies, sum(failures), elapsed)


def paced_load(target: Target, rate: int, seconds: int, connections: int = 32) -> Result:
    """Open loop at a fixed rate: request i is due at i / rate s, and its latency counts
    from then, so a slow answer also charges the requests queued behind it."""
    total = rate * seconds
    indexes = itertools.count()
    latencies: list[float] = []
    failures: list[bool] = []
    start = time.perf_counter() + 0.1

    def drive() -> None:
        client = Client(target)
        while (index := next(indexes)) < total:
            due = start + index / rate
            time.sleep(max(0.0, due - time.perf_counter()))
            failures.append(not client.send())
            latencies.append(time.perf_counter() - due)

    elapsed = _run_threads(connections, drive)
    return _summary(target, latencies, sum(failures), elapsed - 0.1)


# The servers


def wait_until_up(url: str) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not come up in {STARTUP_SECONDS} s") from None
            time.sleep(0.2)


def post_json(url: str, body: Any) -> Any:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def finished_actions(seed: str) -> list[Any]:
    """A finished run of seed, from seeded random playouts."""
    game = get_game(GAME)
    for attempt in range(1000):
        final, actions = random_playout(game, seed, seeded_chooser(seed, f"bench/{attempt}"))
        if game.is_finished(final):
            return actions
    raise RuntimeError(f"no random playout of {GAME}/{seed} finished")


def free_ports(count: int) -> list[int]:
    """count distinct ports free on HOST now (all probed at once, so no two are equal)."""
    with ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind((HOST, 0))
        return [probe.getsockname()[1] for probe in probes]


def targets(service_port: int, ceiling_port: int) -> list[Target]:
    """What to drive, prepared through the running service (today's daily, a finished run)."""
    service = f"http://{HOST}:{service_port}/api/v1"
    with urllib.request.urlopen(f"{service}/daily", timeout=10) as response:
        puzzles = json.load(response)["puzzles"]
    seed = next(puzzle["seed"] for puzzle in puzzles if puzzle["game"] == GAME)
    actions = finished_actions(seed)
    # One run first, so that the timed submissions are the players' later, practice runs.
    post_json(f"{service}/puzzles/{GAME}/{seed}/runs", {"actions": actions})
    return [
        Target("bare Flask (ceiling)", ceiling_port, "/bare"),
        Target("GET /daily", service_port, "/api/v1/daily"),
        Target(
            "POST /play (half a run)",
            service_port,
            f"/api/v1/play/{GAME}/{seed}",
            json.dumps({"actions": actions[: len(actions) // 2]}),
        ),
        Target(
            "POST runs (submission)",
            service_port,
            f"/api/v1/puzzles/{GAME}/{seed}/runs",
            json.dumps({"actions": actions}),
        ),
    ]


def start_servers(
    instance: Path,
    workers: int,
    service_port: int,
    ceiling_port: int,
    worker_class: str = WEB_WORKER_CLASS,
) -> list[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "PYTHONPATH": str(BENCH_DIR.parent),
        "RALLY_INSTANCE_PATH": str(instance),
        "REDIS_URL": f"unix://{instance / 'redis.sock'}",
        # The bench measures throughput, not the rate limits (every request has one address).
        "RALLY_WRITES_PER_MINUTE": str(10**9),
        "RALLY_NEW_SEEDS_PER_HOUR": str(10**9),
    }
    migrate = [sys.executable, "-m", "service.cli", "migrate"]
    subprocess.run(migrate, env=env, check=True, cwd=BENCH_DIR.parent, capture_output=True)
    service = start_process(gunicorn_command(HOST, service_port, workers, worker_class), env)
    ceiling_command = gunicorn_command(HOST, ceiling_port, workers, worker_class)
    ceiling_app = ["--chdir", str(BENCH_DIR.parent), "bench.load:bare_app()"]
    ceiling = start_process([*ceiling_command[:-1], *ceiling_app])
    wait_until_up(f"http://{HOST}:{ceiling_port}/bare")
    wait_until_up(f"http://{HOST}:{service_port}/api/v1/games")
    return [service, ceiling]


def measure(tool: str, target: Target, options: argparse.Namespace, work_dir: Path) -> Result:
    """Target driven as fast as it answers."""
    if tool == "wrk":
        return wrk(target, options.seconds, options.connections, options.threads, work_dir)
    return python_load(target, options.seconds, options.connections)


def report(results: list[Result], tool: str) -> None:
    ceiling = results[0].requests_per_second
    print(f"load from {tool}; the paced line from Python threads")
    print(f"{'endpoint':<26}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'vs ceiling':>12}{'failed':>8}")
    for result in results:
        print(
            f"{result.target.name:<26}{result.requests_per_second:>9.0f}{result.p50_ms:>9.2f}"
            f"{result.p99_ms:>9.2f}{result.requests_per_second / ceiling:>11.0%}"
            f"{result.failures:>8}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10, help="per endpoint")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers of each server")
    parser.add_argument("--rate", type=int, default=200, help="paced submissions per second")
    parser.add_argument("--worker-class", default=WEB_WORKER_CLASS, help="gunicorn's, of both")
    options = parser.parse_args()
    tool = "wrk" if shutil.which("wrk") else "python"
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder:
        instance = Path(folder)
        with EmbeddedRedis(instance / "redis.sock", instance):
            ports = free_ports(2)
            servers = start_servers(
                instance, options.workers, *ports, worker_class=options.worker_class
            )
            try:
                prepared = targets(*ports)
                results = [measure(tool, target, options, instance) for target in prepared]
                paced = replace(prepared[-1], name=f"POST runs, {options.rate}/s paced")
                results.append(paced_load(paced, options.rate, options.seconds))
            finally:
                for server in servers:
                    server.terminate()
                    server.wait(15)
    report(results, tool)


if __name__ == "__main__":
    main()
