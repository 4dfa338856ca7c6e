"""HTTP load bench on loopback: the API under gunicorn against a bare Flask ceiling.

In a fresh instance folder it starts the embedded Redis, gunicorn serving the
service (SQLite there by default; DATABASE_URL points it elsewhere) and, as the
ceiling, gunicorn serving a bare Flask JSON endpoint with the same workers. It
then drives, one after the other: the ceiling, GET /api/v1/daily, POST
/api/v1/play/... (half a run) and practice run submissions (a whole finished
run, replayed, scored and committed), each as fast as it answers; the
submissions come without a player cookie (each one a new player, as a first
visit or a script), then with one (a returning player, as from a browser).
Then cookieless submissions at a fixed rate (open loop, --rate per second, or
half their saturated rate), where latency counts from when each request was due.

Then the attempt path, today's Rallye Raser daily played through attempts:
each player starts an attempt and sends the day's run (a heuristic player's,
about 60 revealing actions) in batches, the actions that reveal nothing going
with the next one that does, each batch once the previous one is answered.
First as many players at once as there are connections, then players arriving
at a fixed rate such that appends come at half the saturated rate. The ceiling
is also measured with the same Python generator, so that the attempt path is
compared like for like. It prints requests/s, p50 and p99 latency of each and
its throughput relative to the ceiling.

The as-fast-as-it-answers load of single endpoints comes from wrk when it is
installed (`apt-get install wrk`), else from a bounded Python generator (threads
with keep-alive connections), itself slower than wrk: compare figures from one
tool only. Fixed rates and the attempt path always come from Python threads.

    python -m bench.load [--seconds 10] [--connections 32] [--threads 2] [--workers 2]
                         [--rate 0] [--worker-class CLASS]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import math
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from flask import Flask, jsonify  # noqa: E402

from bench.databases import database as bench_database  # noqa: E402
from puzzles import GAMES, get_game  # noqa: E402
from puzzles.playout import random_playout, seeded_chooser  # noqa: E402
from service.domain.daily import daily_seed, today  # noqa: E402
from service.operations.children import process_table, start_process  # noqa: E402
from service.operations.processes import WEB_WORKER_CLASS, gunicorn_command  # noqa: E402
from service.operations.redis_server import EmbeddedRedis  # noqa: E402
from solver.registry import kit_of  # noqa: E402

HOST = "127.0.0.1"
# The game of the practice runs: its random playouts reach the finish often.
GAME = "crazy-rally"
PRACTICE_SEED = "bench-practice"
# The daily played through attempts, a batch of actions per request, each ending at an
# action that reveals something new (a roll, a reroll, a drive that draws a road card).
ATTEMPT_GAME = "rallye-raser"
# The bench's own key, so that it knows today's seed and can prepare a run of it.
# Random: no key printed in the repository is accepted.
BENCH_DAILY_KEY = secrets.token_urlsafe(32)
# Run submissions without a player cookie: each one a new player.
SUBMISSION = "POST runs (submission)"
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
    cookie: str | None = None  # a Cookie header to send

    def headers(self) -> dict[str, str]:
        """The request's headers beyond the ones every client sends."""
        return {
            **({"Content-Type": "application/json"} if self.body is not None else {}),
            **({"Cookie": self.cookie} if self.cookie is not None else {}),
        }


@dataclass(frozen=True)
class Result:
    target: Target
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    failures: int  # non-2xx answers and socket errors
    requests: int
    # CPU time the server's processes spent per request: unlike req/s, it holds on a machine
    # whose cores are shared with other work.
    cpu_ms: float = math.nan


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
    headers = target.headers().items()
    request = "".join(f'wrk.headers["{name}"] = [==[{value}]==]\n' for name, value in headers)
    if target.body is not None:
        request += f'wrk.method = "POST"\nwrk.body = [==[{target.body}]==]\n'
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
        summary["requests"],
    )


class Client:
    """One keep-alive connection sending the target's request (reconnecting after errors)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.body = None if target.body is None else target.body.encode()
        self.headers = target.headers()
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
                  percentiles[98] * 1000, failures, len(latencies))  # fmt: skip


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


def server_cpu_seconds(leader: int) -> float:
    """CPU time (user and system) used so far by a server and its direct children (gunicorn's
    master and workers), from /proc."""
    ticks = sum(info.cpu_ticks for info in process_table() if leader in (info.pid, info.parent))
    return ticks / os.sysconf("SC_CLK_TCK")


def with_cpu(server: subprocess.Popen[bytes], run: Callable[[], Any]) -> Any:
    """run()'s result with the server's CPU milliseconds per request filled in."""
    before = server_cpu_seconds(server.pid)
    result = run()
    spent = server_cpu_seconds(server.pid) - before
    return replace(result, cpu_ms=spent * 1000 / max(1, result.requests))


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


def post_json(url: str, body: Any) -> tuple[Any, str | None]:
    """The answer to a JSON POST, and the player cookie it set (name=value), if any."""
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        cookie = response.headers.get("Set-Cookie")
        return json.load(response), None if cookie is None else cookie.split(";", 1)[0]


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
    """What to drive, prepared through the running service (a finished practice run)."""
    actions = finished_actions(PRACTICE_SEED)
    runs = f"/api/v1/puzzles/{GAME}/{PRACTICE_SEED}/runs"
    # One run first, so that the timed submissions all store runs of a known puzzle; its
    # player returns in the submissions with a cookie.
    _run, cookie = post_json(f"http://{HOST}:{service_port}{runs}", {"actions": actions})
    submission = json.dumps({"actions": actions})
    return [
        Target("bare Flask (ceiling)", ceiling_port, "/bare"),
        Target("GET /daily", service_port, "/api/v1/daily"),
        Target(
            "POST /play (half a run)",
            service_port,
            f"/api/v1/play/{GAME}/{PRACTICE_SEED}",
            json.dumps({"actions": actions[: len(actions) // 2]}),
        ),
        Target(SUBMISSION, service_port, runs, submission),
        Target("POST runs, returning player", service_port, runs, submission, cookie),
    ]


# The attempt path


def daily_batches() -> list[list[Any]]:
    """Today's Rallye Raser daily as a client sends it: a heuristic player's run, cut after
    each action that reveals something new."""
    seed = daily_seed(BENCH_DAILY_KEY, ATTEMPT_GAME, today())
    game = GAMES[ATTEMPT_GAME]
    return game.batches(game.new_game(seed), kit_of(ATTEMPT_GAME).heuristic_actions(seed))


class Player:
    """Plays today's daily through one attempt, over one keep-alive connection."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection(HOST, port, timeout=30)

    def post(self, path: str, body: Any, cookie: str | None) -> tuple[int, Any, str | None]:
        headers = {"Content-Type": "application/json"}
        if cookie:
            headers["Cookie"] = cookie
        try:
            self.connection.request("POST", path, json.dumps(body), headers)
            response = self.connection.getresponse()
            answer = json.loads(response.read())
        except (OSError, http.client.HTTPException, ValueError):
            self.connection.close()
            return 0, None, None
        return response.status, answer, response.getheader("Set-Cookie")

    def play(
        self, batches: list[list[Any]], started_at: float, latencies: list[float]
    ) -> int | None:
        """Start an attempt (a new player) and append every batch; the status of the request
        that failed (0: no answer), None when none did. The first request's latency counts
        from started_at (when the player was due)."""
        status, attempt, cookie = self.post(
            f"/api/v1/daily/{today()}/{ATTEMPT_GAME}/attempt", {}, None
        )
        latencies.append(time.perf_counter() - started_at)
        if status != 201 or cookie is None:
            return status
        cookie = cookie.split(";", 1)[0]
        played = 0
        for batch in batches:
            sent = time.perf_counter()
            status, _answer, _ = self.post(
                f"/api/v1/attempts/{attempt['attempt']}/actions",
                {"played": played, "actions": batch},
                cookie,
            )
            latencies.append(time.perf_counter() - sent)
            if status != 200:
                return status
            played += len(batch)
        return None


@dataclass(frozen=True)
class AttemptResult:
    name: str
    players: int
    requests_per_second: float
    actions_per_second: float
    p50_ms: float
    p99_ms: float
    failures: int
    requests: int
    cpu_ms: float = math.nan
    failed_statuses: tuple[tuple[int, int], ...] = ()  # (status, times); 0: no answer


def _attempt_summary(
    name: str,
    players: int,
    latencies: list[float],
    failures: list[int | None],
    actions: int,
    elapsed: float,
) -> AttemptResult:
    failed = Counter(status for status in failures if status is not None)
    percentiles = statistics.quantiles(latencies, n=100)
    return AttemptResult(
        name,
        players,
        len(latencies) / elapsed,
        players * actions / elapsed,
        percentiles[49] * 1000,
        percentiles[98] * 1000,
        failed.total(),
        len(latencies),
        failed_statuses=tuple(sorted(failed.items())),
    )


def attempts_saturated(
    port: int, batches: list[list[Any]], seconds: int, connections: int
) -> AttemptResult:
    """Closed loop: each connection plays one player after another until the time is up."""
    latencies: list[float] = []
    failures: list[int | None] = []
    deadline = time.perf_counter() + seconds

    def drive() -> None:
        player = Player(port)
        while time.perf_counter() < deadline:
            failures.append(player.play(batches, time.perf_counter(), latencies))

    elapsed = _run_threads(connections, drive)
    actions = sum(len(batch) for batch in batches)
    return _attempt_summary(
        f"attempts, {connections} at once",
        len(failures),
        latencies,
        failures,
        actions,
        elapsed,
    )


def attempts_paced(
    port: int,
    batches: list[list[Any]],
    players_per_second: float,
    seconds: int,
    connections: int = 64,
) -> AttemptResult:
    """Open loop: player i arrives at i / players_per_second s and plays the daily at once."""
    total = max(1, int(players_per_second * seconds))
    indexes = itertools.count()
    latencies: list[float] = []
    failures: list[int | None] = []
    start = time.perf_counter() + 0.1

    def drive() -> None:
        player = Player(port)
        while (index := next(indexes)) < total:
            due = start + index / players_per_second
            time.sleep(max(0.0, due - time.perf_counter()))
            failures.append(player.play(batches, due, latencies))

    elapsed = _run_threads(connections, drive) - 0.1
    actions = sum(len(batch) for batch in batches)
    rate = players_per_second * (len(batches) + 1)
    return _attempt_summary(
        f"attempts, {rate:.0f} req/s paced", total, latencies, failures, actions, elapsed
    )


def start_service(
    instance: Path,
    workers: int,
    port: int,
    worker_class: str = WEB_WORKER_CLASS,
    gunicorn_options: tuple[str, ...] = (),
    database_url: str | None = None,
) -> subprocess.Popen[bytes]:
    """The service under gunicorn on a migrated database (database_url's, else SQLite in
    instance unless DATABASE_URL says otherwise) and the embedded Redis in instance,
    already running."""
    env = migrated_service_env(instance, database_url)
    command = gunicorn_command(HOST, port, workers, worker_class)
    return start_process([*command[:-1], *gunicorn_options, command[-1]], env)


def migrated_service_env(instance: Path, database_url: str | None = None) -> dict[str, str]:
    """The service's environment for a bench in instance (its database migrated: the one
    database_url names, else the environment's): the embedded Redis's socket there, the
    bench's daily key, no rate limit in the way."""
    env = {
        **os.environ,
        **({"DATABASE_URL": database_url} if database_url else {}),
        "PYTHONPATH": str(BENCH_DIR.parent),
        "RALLY_INSTANCE_PATH": str(instance),
        "REDIS_URL": f"unix://{instance / 'redis.sock'}",
        # The bench measures throughput, not the rate limits (every request has one address).
        "RALLY_WRITES_PER_MINUTE": str(10**9),
        "RALLY_NEW_SEEDS_PER_HOUR": str(10**9),
        "RALLY_ATTEMPTS_PER_ADDRESS": str(10**9),
        "RALLY_NEW_PLAYERS_PER_HOUR": str(10**9),
        "RALLY_DAILY_KEY": BENCH_DAILY_KEY,
    }
    migrate = [sys.executable, "-m", "service.operations.cli", "migrate"]
    subprocess.run(migrate, env=env, check=True, cwd=BENCH_DIR.parent, capture_output=True)
    return env


def start_servers(
    instance: Path,
    workers: int,
    service_port: int,
    ceiling_port: int,
    worker_class: str = WEB_WORKER_CLASS,
    database_url: str | None = None,
) -> list[subprocess.Popen[bytes]]:
    service = start_service(
        instance, workers, service_port, worker_class, database_url=database_url
    )
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


def report(
    results: list[Result], attempts: list[AttemptResult], ceilings: list[Result], tool: str
) -> None:
    ceiling = results[0]
    print(f"load from {tool}; paced lines and the attempt path from Python threads")
    print(
        "CPU ms: the server's CPU time per request; CPU vs ceiling: the ceiling's CPU per "
        "request over this one's (the throughput ratio on cores not shared)"
    )
    print(
        f"{'endpoint':<34}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'vs ceiling':>11}"
        f"{'CPU ms':>8}{'CPU vs ceiling':>15}{'failed':>7}"
    )
    for result in results:
        ratio = result.requests_per_second / ceiling.requests_per_second
        print(
            f"{result.target.name:<34}{result.requests_per_second:>8.0f}{result.p50_ms:>9.2f}"
            f"{result.p99_ms:>9.2f}{ratio:>11.0%}"
            f"{result.cpu_ms:>8.2f}{ceiling.cpu_ms / result.cpu_ms:>15.0%}{result.failures:>7}"
        )
    python_ceiling = ceilings[0]
    print("\nattempt path (Rallye Raser daily); the ceiling from Python threads:")
    for line in ceilings:
        print(
            f"  {line.target.name:<32}{line.requests_per_second:>8.0f} req/s, "
            f"p50 {line.p50_ms:.2f} ms, p99 {line.p99_ms:.2f} ms, CPU {line.cpu_ms:.2f} ms"
        )
    print(
        f"{'load':<34}{'players':>8}{'req/s':>8}{'actions/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'vs ceiling':>11}{'CPU ms':>8}{'CPU vs ceiling':>15}{'failed':>7}"
    )
    for attempt in attempts:
        ratio = attempt.requests_per_second / python_ceiling.requests_per_second
        print(
            f"{attempt.name:<34}{attempt.players:>8}{attempt.requests_per_second:>8.0f}"
            f"{attempt.actions_per_second:>10.0f}{attempt.p50_ms:>9.2f}{attempt.p99_ms:>9.2f}"
            f"{ratio:>11.0%}{attempt.cpu_ms:>8.2f}{ceiling.cpu_ms / attempt.cpu_ms:>15.0%}"
            f"{attempt.failures:>7}"
        )
        if attempt.failed_statuses:
            said = ", ".join(
                f"{status or 'no answer'} x{times}" for status, times in attempt.failed_statuses
            )
            print(f"  failed requests of '{attempt.name}' by status: {said}")


def attempt_path(
    servers: list[subprocess.Popen[bytes]], port: int, ceiling: Target, options: argparse.Namespace
) -> tuple[list[AttemptResult], list[Result]]:
    """The ceiling from Python threads, attempts saturated and at half that rate, and the
    ceiling at that rate."""
    service, ceiling_server = servers
    batches = daily_batches()
    python_ceiling = with_cpu(
        ceiling_server, lambda: python_load(ceiling, options.seconds, options.connections)
    )
    saturated = with_cpu(
        service,
        lambda: attempts_saturated(port, batches, options.seconds, options.connections),
    )
    players_per_second = saturated.requests_per_second / 2 / (len(batches) + 1)
    paced = with_cpu(
        service, lambda: attempts_paced(port, batches, players_per_second, options.seconds)
    )
    # The machine's own latency at that rate: the bare endpoint paced the same.
    rate = max(1, round(paced.requests_per_second))
    bare = replace(ceiling, name=f"bare Flask, {rate}/s paced")
    paced_ceiling = with_cpu(ceiling_server, lambda: paced_load(bare, rate, options.seconds))
    return [saturated, paced], [python_ceiling, paced_ceiling]


def run_on(database: str | None, options: argparse.Namespace, tool: str) -> Measured:
    """Every load of the bench on one database (see bench.databases; None: SQLite in the
    instance folder, or what DATABASE_URL names), in a fresh instance folder."""
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder, ExitStack() as stack:
        instance = Path(folder)
        url = stack.enter_context(bench_database(database, instance)) if database else None
        stack.enter_context(EmbeddedRedis(instance / "redis.sock", instance))
        ports = free_ports(2)
        servers = start_servers(
            instance, options.workers, ports[0], ports[1], options.worker_class, url
        )
        try:
            prepared = targets(*ports)
            server_on = dict(zip(ports, servers, strict=True))
            results = [
                with_cpu(server_on[target.port], partial(measure, tool, target, options, instance))
                for target in prepared
            ]
            submissions = next(r for r in results if r.target.name == SUBMISSION)
            rate = options.rate or max(1, int(submissions.requests_per_second / 2))
            paced = replace(submissions.target, name=f"POST runs, {rate}/s paced")
            results.append(with_cpu(servers[0], lambda: paced_load(paced, rate, options.seconds)))
            attempts, ceilings = attempt_path(servers, ports[0], prepared[0], options)
        finally:
            for server in servers:
                server.terminate()
                server.wait(15)
    return Measured(
        database or "as DATABASE_URL says (SQLite by default)", results, attempts, ceilings
    )


@dataclass(frozen=True)
class Measured:
    database: str
    results: list[Result]
    attempts: list[AttemptResult]
    ceilings: list[Result]


def compare(measured: list[Measured]) -> None:
    """Each database's loads beside the first's: rate and CPU per request."""
    first = measured[0]
    print(f"\nbeside {first.database} (rate ratio, CPU ratio):")
    for other in measured[1:]:
        pairs: list[tuple[str, Result | AttemptResult, Result | AttemptResult]] = [
            *(
                (mine.target.name, mine, theirs)
                for mine, theirs in zip(first.results, other.results, strict=True)
            ),
            *(
                (mine.name, mine, theirs)
                for mine, theirs in zip(first.attempts, other.attempts, strict=True)
            ),
        ]
        for name, mine, theirs in pairs:
            print(
                f"  {other.database}, {name}: "
                f"{theirs.requests_per_second / mine.requests_per_second:.0%} of the rate, "
                f"{theirs.cpu_ms / mine.cpu_ms:.2f}x the CPU"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10, help="per endpoint")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers of each server")
    parser.add_argument(
        "--rate",
        type=int,
        default=0,
        help="paced submissions per second (0: half the saturated rate)",
    )
    parser.add_argument("--worker-class", default=WEB_WORKER_CLASS, help="gunicorn's, of both")
    parser.add_argument(
        "--database",
        nargs="+",
        choices=["sqlite", "postgresql"],
        help="each in turn, on a fresh database (PostgreSQL's on 127.0.0.1:5432), then the"
        " writes compared; by default the one DATABASE_URL names, else SQLite",
    )
    options = parser.parse_args()
    tool = "wrk" if shutil.which("wrk") else "python"
    measured = [run_on(database, options, tool) for database in options.database or [None]]
    for each in measured:
        print(f"\n## {each.database}")
        report(each.results, each.attempts, each.ceilings, tool)
    if len(measured) > 1:
        compare(measured)


if __name__ == "__main__":
    main()
