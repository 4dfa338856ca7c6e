"""CPU of each step of a run submission inside the web workers, under load.

Starts the service as bench.load does (gunicorn with gevent workers, the embedded
Redis, SQLite unless DATABASE_URL names another database) with the hooks of
bench.step_cpu, sends cookieless practice run submissions (each one a new
player) from --connections connections for --seconds, stops the workers and
prints the CPU milliseconds per request of each step, worker by worker. The
hooks cost some CPU themselves (about 0.1-0.2 ms a request).

    python -m bench.submission_steps [--seconds 6] [--connections 32] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from bench.load import (
    GAME,
    HOST,
    PRACTICE_SEED,
    Target,
    finished_actions,
    free_ports,
    post_json,
    python_load,
    start_service,
    wait_until_up,
)
from service.operations.redis_server import EmbeddedRedis


def worker_reports(instance: Path) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(instance.glob("step-cpu-*.json"))]


def print_table(reports: list[dict]) -> None:
    reports = [report for report in reports if report["requests"]]
    print("CPU ms per request, each worker:")
    totals = [report["worker CPU"] / report["requests"] * 1000 for report in reports]
    print(f"  {'the worker, whole':<48}" + "".join(f"{total:>9.3f}" for total in totals))
    named = {step for report in reports for step in report["steps"]}
    steps = sorted(named, key=lambda step: -reports[0]["steps"].get(step, 0.0))
    for step in steps:
        cells = [report["steps"].get(step, 0.0) / report["requests"] * 1000 for report in reports]
        print(f"  {step:<48}" + "".join(f"{cell:>9.3f}" for cell in cells))
    print("  requests" + " " * 40 + "".join(f"{report['requests']:>9}" for report in reports))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rally-steps-") as folder:
        instance = Path(folder)
        with EmbeddedRedis(instance / "redis.sock", instance):
            [port] = free_ports(1)
            hooks = ("-c", "python:bench.step_cpu")
            service = start_service(instance, options.workers, port, gunicorn_options=hooks)
            try:
                wait_until_up(f"http://{HOST}:{port}/api/v1/games")
                actions = finished_actions(PRACTICE_SEED)
                runs = f"/api/v1/puzzles/{GAME}/{PRACTICE_SEED}/runs"
                post_json(f"http://{HOST}:{port}{runs}", {"actions": actions})
                body = json.dumps({"actions": actions})
                target = Target("submissions", port, runs, body)
                load = python_load(target, options.seconds, options.connections)
            finally:
                service.terminate()
                service.wait(15)
            print(
                f"{load.requests_per_second:.0f} submissions/s, p50 {load.p50_ms:.1f} ms, "
                f"p99 {load.p99_ms:.1f} ms, {load.failures} failed"
            )
            print_table(worker_reports(instance))


if __name__ == "__main__":
    main()
