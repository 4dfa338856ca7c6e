"""How long `rally serve` takes to bring back each child killed with SIGKILL.

It starts `rally serve` (RALLY_RESTART_DELAY=1, the default) in a fresh
instance folder, then --rounds times (STABLE_SECONDS apart, so that every
restart waits the first delay) for each child (redis-server, the
gunicorn master, the worker's main process): kills it, and measures the time
until a new one runs and until /healthz answers 200 again, while a client
keeps asking GET /api/v1/games and records its slowest answer and any
request left unanswered. It prints the median and worst of each.

    python -m bench.restarts [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from bench.load import free_ports  # noqa: E402
from service.operations.children import command_line, process_table  # noqa: E402
from service.operations.supervisor import STABLE_SECONDS  # noqa: E402

HOST = "127.0.0.1"
CHILDREN = {"redis-server": b"redis-server", "web": b"gunicorn", "worker": b"cli\x00worker"}
WAIT_SECONDS = 120.0


@dataclass(frozen=True)
class Round:
    child: str
    back_seconds: float  # until a new process of the child runs
    healthy_seconds: float  # until /healthz answers 200
    slowest_answer: float  # of the requests made meanwhile
    unanswered: int


def child_pid(serve: int, marker: bytes) -> int | None:
    """serve's child with marker in its command line. Each child leads a session of its
    own, unlike the orphans of a dead one that serve adopts (a killed master's workers)."""
    for info in process_table():
        if (info.parent, info.session) == (serve, info.pid) and marker in (
            command_line(info.pid) or b""
        ):
            return info.pid
    return None


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status == 200
    except OSError:
        return False


def kill_and_time(serve: int, port: int, child: str) -> Round:
    deadline = time.monotonic() + WAIT_SECONDS
    # The worker may itself be restarting: it is renewed after Redis is.
    while (killed := child_pid(serve, CHILDREN[child])) is None:
        assert time.monotonic() < deadline, f"no {child} process"
        time.sleep(0.1)
    stop = threading.Event()
    latencies: list[float] = []
    unanswered = [0]

    def ask() -> None:
        while not stop.is_set():
            started = time.monotonic()
            try:
                with urllib.request.urlopen(f"http://{HOST}:{port}/api/v1/games", timeout=60):
                    latencies.append(time.monotonic() - started)
            except OSError:
                unanswered[0] += 1
            time.sleep(0.05)

    asker = threading.Thread(target=ask)
    asker.start()
    started = time.monotonic()
    os.kill(killed, signal.SIGKILL)
    while child_pid(serve, CHILDREN[child]) in (None, killed):
        assert time.monotonic() - started < WAIT_SECONDS
        time.sleep(0.02)
    back = time.monotonic() - started
    while not healthy(f"http://{HOST}:{port}/healthz"):
        assert time.monotonic() - started < WAIT_SECONDS
        time.sleep(0.05)
    healthy_after = time.monotonic() - started
    stop.set()
    asker.join()
    return Round(child, back, healthy_after, max(latencies, default=0.0), unanswered[0])


def report(rounds: list[Round]) -> None:
    print(
        "| child killed | rounds | new process, median (max) s | /healthz 200 again, median "
        "(max) s | slowest answer meanwhile s | unanswered |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for child in CHILDREN:
        mine = [r for r in rounds if r.child == child]
        back = [r.back_seconds for r in mine]
        well = [r.healthy_seconds for r in mine]
        print(
            f"| {child} | {len(mine)} | {statistics.median(back):.2f} ({max(back):.2f}) | "
            f"{statistics.median(well):.2f} ({max(well):.2f}) | "
            f"{max(r.slowest_answer for r in mine):.2f} | {sum(r.unanswered for r in mine)} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder:
        (port,) = free_ports(1)
        env = {
            **os.environ,
            "RALLY_INSTANCE_PATH": str(Path(folder) / "i"),
            "RALLY_RESTART_DELAY": "1",
        }
        command = [sys.executable, "-m", "service.operations.cli", "serve", "--port", str(port)]
        serve = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + WAIT_SECONDS
            while not healthy(f"http://{HOST}:{port}/healthz"):
                assert time.monotonic() < deadline, "rally serve did not start"
                time.sleep(0.2)
            rounds = []
            for _ in range(options.rounds):
                for child in CHILDREN:
                    rounds.append(kill_and_time(serve.pid, port, child))
                # Each child runs long enough that its next death restarts after the first delay.
                time.sleep(STABLE_SECONDS)
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(60)
    report(rounds)


if __name__ == "__main__":
    main()
