"""Bursts of writes through nginx in front of two web replicas: how many get a 502?

It starts the scaled-out web tier on loopback as deploy.yml describes it: two
`rally web` replicas (gunicorn, --workers each; SQLite and an embedded Redis in a
fresh instance folder) and Debian's nginx running deploy/nginx.conf (or
--nginx-config, another version of it) in front of both. Then, for each of --gaps,
it sends --bursts bursts of --burst simultaneous `POST /api/v1/play/...` (half a
practice run each, every one on a new client connection, as from many browsers),
each that many seconds after the previous one was answered, and prints how many
requests got which status. A 502 here, with both replicas healthy, is a request
nginx sent on an idle connection the replica was closing: the gaps lie around
gunicorn's default keep-alive (2 s), where that happens.

To measure the configuration before a change, name the older file and gunicorn's
keep-alive of that time:

    git show REV:deploy/nginx.conf > /tmp/nginx-old.conf
    python -m bench.proxy_bursts --nginx-config /tmp/nginx-old.conf --keep-alive 2

    python -m bench.proxy_bursts [--gaps 1.9 1.92 ...] [--bursts 10] [--burst 16]
                                 [--workers 2]
                                 [--nginx-config PATH] [--keep-alive SECONDS]

It needs nginx (`make nginx`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import platform
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from bench.load import GAME, HOST, finished_actions, free_ports, start_service  # noqa: E402
from bench.load import wait_until_up as wait_for_200  # noqa: E402
from service.operations.redis_server import EmbeddedRedis  # noqa: E402
from tests.proxy_support import NGINX_CONFIG, nginx  # noqa: E402

SEED = "bench-bursts"
REPLICAS = 2
ANSWER_SECONDS = 30.0
# Seconds between one burst's last answer and the next burst: across gunicorn's default
# keep-alive, since where in it the race falls moves with the machine's load.
GAPS = [round(1.9 + 0.02 * step, 2) for step in range(8)]


def post(port: int, path: str, body: bytes) -> int:
    """The status of one POST on a connection of its own; 0 when no answer came."""
    connection = http.client.HTTPConnection(HOST, port, timeout=ANSWER_SECONDS)
    try:
        connection.request("POST", path, body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        answer.read()
        return answer.status
    except OSError:
        return 0
    finally:
        connection.close()


def burst(port: int, path: str, body: bytes, size: int, statuses: Counter[int]) -> None:
    """size POSTs sent at once; their statuses counted once all are answered."""
    answers: list[int] = []
    start = threading.Barrier(size)

    def send() -> None:
        start.wait()
        answers.append(post(port, path, body))

    threads = [threading.Thread(target=send) for _ in range(size)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses.update(answers)


def bursts(port: int, gap: float, options: argparse.Namespace) -> Counter[int]:
    actions = finished_actions(SEED)
    body = json.dumps({"actions": actions[: len(actions) // 2]}).encode()
    path = f"/api/v1/play/{GAME}/{SEED}"
    statuses: Counter[int] = Counter()
    for _ in range(options.bursts):
        time.sleep(gap)
        burst(port, path, body, options.burst, statuses)
    return statuses


def report(results: dict[float, Counter[int]], options: argparse.Namespace) -> None:
    config = options.nginx_config or NGINX_CONFIG
    print(f"machine: {platform.machine()}, {platform.python_implementation()}")
    print(f"nginx config: {config}; gunicorn keep-alive: {options.keep_alive or 'rally web'}")
    print(
        f"{REPLICAS} replicas x {options.workers} workers; "
        f"{options.bursts} bursts of {options.burst} POSTs per gap"
    )
    for gap, statuses in results.items():
        total = sum(statuses.values())
        counts = ", ".join(f"{status or 'none'}: {n}" for status, n in sorted(statuses.items()))
        print(f"gap {gap:.2f} s: 502 in {statuses[502]} of {total} ({counts})")
    every = sum(results.values(), Counter())
    print(f"all: 502 in {every[502]} of {sum(every.values())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gaps", type=float, nargs="+", default=GAPS)
    parser.add_argument("--bursts", type=int, default=10, help="per gap")
    parser.add_argument("--burst", type=int, default=16, help="simultaneous requests")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per replica")
    parser.add_argument("--nginx-config", type=Path, help="default: deploy/nginx.conf")
    parser.add_argument("--keep-alive", type=int, help="gunicorn's, instead of rally web's")
    options = parser.parse_args()
    extra = ("--keep-alive", str(options.keep_alive)) if options.keep_alive else ()
    config = options.nginx_config.read_text() if options.nginx_config else None
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder, ExitStack() as stack:
        instance = Path(folder)
        stack.enter_context(EmbeddedRedis(instance / "redis.sock", instance))
        *web_ports, proxy_port = free_ports(REPLICAS + 1)
        for port in web_ports:
            replica = start_service(instance, options.workers, port, gunicorn_options=extra)
            stack.callback(replica.wait, 15)
            stack.callback(replica.terminate)
            wait_for_200(f"http://{HOST}:{port}/api/v1/games")
        stack.enter_context(nginx(instance / "nginx", web_ports, proxy_port, config))
        results = {gap: bursts(proxy_port, gap, options) for gap in options.gaps}
    report(results, options)


if __name__ == "__main__":
    main()
