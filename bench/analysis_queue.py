"""What a flood of analyses does to the queue: how many one worker settles an hour, and
how long a daily's solve queued behind the flood waits.

An embedded Redis and a SQLite database in a temporary folder; FLOOD runs of one practice
seed (seeded random playouts; the seed is solved first, so each analysis reuses its
stored optimum, as in service) each get their analysis asked for through the API (GET
/runs/{id}/analysis, each from an address of its own). Then today's daily is recorded and
its solve queued, as the planning run queues it. One worker, as `rally worker` runs it
(the solvers preloaded, RQ forking a process per job), then works in burst mode until
every queue is empty. It prints when the daily's job (its solve, then its par) started and
ended, in seconds after the worker started, each analysis's seconds (median and max) and
the analyses settled per hour, with the load average.

    python -m bench.analysis_queue [--flood 12] [--game crazy-rally]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

import redis  # noqa: E402
from flask import Flask  # noqa: E402
from rq.job import Job  # noqa: E402

from puzzles import GAMES  # noqa: E402
from puzzles.playout import random_playout, seeded_chooser  # noqa: E402
from service.config import Config  # noqa: E402
from service.domain import daily  # noqa: E402
from service.jobs import jobs  # noqa: E402
from service.jobs.queue import Urgency, enqueue_solve, solve_job_id, solve_queue, solve_queues  # noqa: E402
from service.operations.redis_server import EmbeddedRedis  # noqa: E402
from service.storage.migrations import upgrade  # noqa: E402
from service.storage.puzzles import PuzzleRecord  # noqa: E402
from service.storage.store import Store  # noqa: E402
from service.web.app import create_app  # noqa: E402
from solver import solve  # noqa: E402

SEED = "flood-bench"


def flood_runs(store: Store, game: str, count: int) -> list[str]:
    """count finished-or-not runs of SEED, solved first; their ids."""
    engine = GAMES[game]
    puzzle = store.puzzles.ensure(game, SEED, engine.rules_version)
    jobs.store_solution(store, puzzle.id, solve(game, SEED))
    run_ids = []
    for number in range(count):
        final, actions = random_playout(engine, SEED, seeded_chooser(SEED, f"flood/{number}"))
        run = store.runs.add(
            puzzle,
            f"flood-player-{number}",
            actions=actions,
            score=engine.score(final),
            tiebreak=engine.tiebreak(final),
            finished=engine.is_finished(final),
        )
        run_ids.append(run.id)
    return run_ids


def bench_env(folder: Path, redis_url: str, count: int) -> Config:
    """The settings of the bench's service, applied to this process (and so to the job
    processes the worker forks)."""
    os.environ.update(
        {
            "RALLY_INSTANCE_PATH": str(folder / "instance"),
            "DATABASE_URL": f"sqlite:///{folder / 'rally.sqlite3'}",
            "REDIS_URL": redis_url,
            "RALLY_SECRET_KEY": secrets.token_urlsafe(32),
            "RALLY_DAILY_KEY": secrets.token_urlsafe(32),
            "RALLY_MAX_PENDING_ANALYSES": str(count),
        }
    )
    config = Config.from_env()
    upgrade(config.database_url)
    return config


def ask_for_analyses(app: Flask, run_ids: list[str]) -> None:
    """Each run's analysis asked for through the API, by a client of its own."""
    client = app.test_client()
    for number, run_id in enumerate(run_ids):
        address = {"REMOTE_ADDR": f"10.9.{number // 256}.{number % 256}"}
        answer = client.get(f"/api/v1/runs/{run_id}/analysis", environ_base=address)
        assert answer.status_code == 202, answer.get_json()


def report(
    store: Store,
    connection: redis.Redis,
    todays: PuzzleRecord,
    run_ids: list[str],
    started: datetime,
    elapsed: float,
) -> None:
    key = (todays.game, todays.seed, todays.rules_version)
    daily_job = Job.fetch(solve_job_id(*key), connection=connection)
    assert daily_job.started_at is not None and daily_job.ended_at is not None
    solved = store.puzzles.by_id(todays.id)
    assert solved is not None
    analyses = [store.analyses.get(run_id) for run_id in run_ids]
    seconds = [a.seconds for a in analyses if a is not None and a.seconds is not None]
    done = sum(1 for a in analyses if a is not None and a.status == "done")
    print(
        f"{todays.game}: {len(run_ids)} analyses, then today's daily; one worker: {elapsed:.1f} s"
    )
    print(
        f"  daily's job: started {(daily_job.started_at - started).total_seconds():.1f} s, "
        f"ended {(daily_job.ended_at - started).total_seconds():.1f} s after the worker; "
        f"optimum {solved.optimum}, par {solved.par}"
    )
    print(
        f"  analyses: {done} of {len(run_ids)} done, median {statistics.median(seconds):.1f} s, "
        f"max {max(seconds):.1f} s; {3600 * done / elapsed:.0f} settled an hour"
    )
    print(f"  load average {os.getloadavg()[0]:.1f}")


def measure(folder: Path, game: str, count: int) -> None:
    with EmbeddedRedis(folder / "redis.sock", folder) as server:
        config = bench_env(folder, server.url, count)
        app = create_app(config)
        store: Store = app.extensions["rally"].store
        run_ids = flood_runs(store, game, count)
        ask_for_analyses(app, run_ids)
        todays = daily.ensure_daily(store, config.daily_key, game, daily.today())
        connection = redis.Redis.from_url(config.redis_url)
        key = (todays.game, todays.seed, todays.rules_version)
        enqueue_solve(solve_queue(connection, Urgency.TODAY), config, *key)
        worker = jobs.SolveWorker(solve_queues(connection), connection=connection, heartbeat=10)
        started = datetime.now(UTC)
        began = time.perf_counter()
        worker.work(burst=True, logging_level="WARNING")
        report(store, connection, todays, run_ids, started, time.perf_counter() - began)
        store.close()
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flood", type=int, default=12, help="analyses asked for first")
    parser.add_argument("--game", default="crazy-rally", choices=sorted(GAMES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rally-flood-") as folder:
        measure(Path(folder), args.game, args.flood)


if __name__ == "__main__":
    main()
