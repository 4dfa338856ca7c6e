"""How long the first practice puzzle asked of a freshly started `rally serve` waits.

Each round starts `rally serve` (one worker) in a fresh instance folder, under
the bench's own daily key so that every round plans the same dailies. As soon
as /healthz answers it asks for a seed never seen before (POST
/api/v1/puzzles/{game}/{seed} with {}), then reads it (GET) every POLL_SECONDS
until the puzzle is solved. It
prints, per round and as the median, the seconds from the first request to the
solved answer, and the jobs still waiting in each queue at that moment (what
the worker had not taken before the practice solve), with the load average.

    python -m bench.first_practice [--rounds 3] [--game crazy-rally] [--seed SEED]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from bench.load import BENCH_DAILY_KEY, HOST, free_ports  # noqa: E402

POLL_SECONDS = 0.2
WAIT_SECONDS = 600.0


@dataclass(frozen=True)
class Round:
    solved_after: float  # seconds from the first request to the solved answer
    waiting: dict[str, int]  # jobs in each queue when the solved answer came


def get_json(url: str, body: Any = None) -> tuple[int, Any]:
    """The status and JSON body of GET url, or of a POST of body as JSON (an error status
    too)."""
    data = None if body is None else json.dumps(body).encode()
    asked = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(asked, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def wait_until_healthy(base: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            if get_json(f"{base}/healthz")[0] == 200:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, "rally serve did not start"
        time.sleep(POLL_SECONDS)


def time_first_practice(base: str, game: str, seed: str) -> Round:
    started = time.monotonic()
    puzzle = f"{base}/api/v1/puzzles/{game}/{seed}"
    status, body = get_json(puzzle, {})
    assert status == 202, body
    while True:
        status, body = get_json(puzzle)
        assert status == 200, body
        if body["status"] == "solved":
            solved_after = time.monotonic() - started
            break
        assert body["status"] == "pending", body
        assert time.monotonic() - started < WAIT_SECONDS, "not solved in time"
        time.sleep(POLL_SECONDS)
    health = get_json(f"{base}/healthz")[1]
    return Round(solved_after, health["checks"]["queue"]["queues"])


@contextmanager
def fresh_service() -> Iterator[str]:
    """`rally serve` on its embedded defaults in a fresh instance folder, under the bench's
    daily key; its address, once /healthz answers."""
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder:
        (port,) = free_ports(1)
        env = {
            **os.environ,
            "RALLY_INSTANCE_PATH": str(Path(folder) / "i"),
            "RALLY_DAILY_KEY": BENCH_DAILY_KEY,
        }
        env.pop("REDIS_URL", None)
        env.pop("DATABASE_URL", None)
        command = [sys.executable, "-m", "service.operations.cli", "serve", "--port", str(port)]
        serve = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            base = f"http://{HOST}:{port}"
            wait_until_healthy(base)
            yield base
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(60)


def one_round(game: str, seed: str) -> Round:
    with fresh_service() as base:
        return time_first_practice(base, game, seed)


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--game", default="crazy-rally")
    parser.add_argument("--seed", default="bench-first-practice")
    options = parser.parse_args()
    print(f"load average before: {load_average()}")
    rounds = []
    for number in range(1, options.rounds + 1):
        result = one_round(options.game, options.seed)
        rounds.append(result)
        waiting = ", ".join(f"{name} {count}" for name, count in result.waiting.items())
        print(
            f"round {number}: solved after {result.solved_after:.1f} s; "
            f"still waiting then: {waiting}; load average {load_average()}"
        )
    times = [result.solved_after for result in rounds]
    print(
        f"median {statistics.median(times):.1f} s, min {min(times):.1f} s, "
        f"max {max(times):.1f} s over {len(times)} rounds"
    )


if __name__ == "__main__":
    main()
