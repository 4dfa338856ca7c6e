"""Leaderboard and history reads on a database filled to a popular daily's size.

For each database (a SQLite file, and a fresh PostgreSQL database on 127.0.0.1:5432
dropped afterwards) it migrates to the schema before the kept counts, bulk-loads one
past daily with --runs official runs (one per player, crazy-rally scores and tie-breaks
full of ties, each run a real 18-action run) and one player with --history practice runs
over 50 puzzles, then migrates to the newest schema, whose migration counts the runs already
stored. It then times, through the Flask app in-process:

- `GET /api/v1/puzzles/<game>/<seed>/leaderboard` (top 100, histogram, player count)
  with every cache off (each request reads the database) and as served (kept a second);
- `GET /api/v1/players/me/runs` for the busy player, first page and the page after
  half of their runs;

and, as the baseline, the histogram and player count aggregated over the runs
themselves, as they were read before the counts were kept. It prints load and
migration times, p50 and p99 of each read, and the baseline's medians.

    python -m bench.leaderboard [--runs 1000000] [--history 5000] [--requests 1000]
                                [--database sqlite postgresql]
"""

from __future__ import annotations

import argparse
import json
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

import psycopg  # noqa: E402
import sqlalchemy  # noqa: E402
from flask.testing import FlaskClient  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench.databases import database, libpq_url  # noqa: E402
from bench.load import GAME, finished_actions  # noqa: E402
from puzzles import get_game  # noqa: E402
from service.config import Config  # noqa: E402
from service.domain import daily  # noqa: E402
from service.storage.migrations import upgrade  # noqa: E402
from service.storage.store import Store  # noqa: E402
from service.web.app import create_app  # noqa: E402

# The newest schema without the kept counts: the migration timed is the one that adds them.
SCHEMA_BEFORE_COUNTS = "0002_attempts"
DAILY_SEED = "bench-daily"
HISTORY_PUZZLES = 50
BUSY_PLAYER = "bench-busy"
BASELINE_REPEATS = 3
WARM_UP = 20
SQLITE_LOAD_CACHE_KIB = 1_000_000
RUN_COLUMNS = (
    "id",
    "puzzle_id",
    "player_id",
    "actions",
    "score",
    "tiebreak",
    "finished",
    "official",
    "created_at",
)


@dataclass(frozen=True)
class Fill:
    """What the bench stores: the daily's official runs and the busy player's history."""

    runs: int
    history: int
    actions: str
    daily_id: int
    practice_ids: list[int]
    day: date

    def players(self) -> Iterator[tuple[str, datetime]]:
        start = self.start()
        yield BUSY_PLAYER, start
        for number in range(self.runs):
            yield f"p{number:07d}", start

    def start(self) -> datetime:
        return datetime.combine(self.day, datetime.min.time(), UTC)

    def run_rows(self) -> Iterator[tuple[Any, ...]]:
        """(id, puzzle_id, player_id, actions, score, tiebreak, finished, official, created_at)"""
        chance = random.Random(10)
        spacing = timedelta(days=1) / max(self.runs, 1)
        for number in range(self.runs):
            score = max(0, min(100, round(chance.gauss(60, 12))))
            yield (
                secrets.token_urlsafe(12),
                self.daily_id,
                f"p{number:07d}",
                self.actions,
                score,
                chance.randrange(13),
                True,
                True,
                self.start() + number * spacing,
            )
        history_spacing = timedelta(days=365) / max(self.history, 1)
        for number in range(self.history):
            yield (
                secrets.token_urlsafe(12),
                self.practice_ids[number % len(self.practice_ids)],
                BUSY_PLAYER,
                self.actions,
                chance.randrange(100),
                chance.randrange(13),
                True,
                False,
                self.start() - timedelta(days=365) + number * history_spacing,
            )


# The puzzles' table as the schema before the kept counts has it: later migrations add
# columns (the par's) that the store's model reads, so the puzzles are written here.
PUZZLES_BEFORE_COUNTS = sqlalchemy.table(
    "puzzles",
    *(
        sqlalchemy.column(name)
        for name in (
            "id", "game", "seed", "rules_version", "daily_date", "number", "status",
            "optimum", "tiebreak", "witness", "proved", "solve_seconds", "created_at",
            "updated_at",
        )
    ),
)  # fmt: skip


def create_puzzles(url: str, day: date) -> tuple[int, list[int]]:
    """The solved daily of day and the practice puzzles of the history, at the schema
    before the kept counts."""
    rules = get_game(GAME).rules_version
    now = datetime.now(UTC)
    engine = sqlalchemy.create_engine(url)
    ids = []
    with engine.begin() as connection:
        for number, seed in enumerate([DAILY_SEED, *(f"bench-{n}" for n in range(50))]):
            is_daily = number == 0
            added = connection.execute(
                PUZZLES_BEFORE_COUNTS.insert()
                .values(
                    game=GAME,
                    seed=seed,
                    rules_version=rules,
                    daily_date=day if is_daily else None,
                    number=daily.puzzle_number(day) if is_daily else None,
                    status="solved",
                    optimum=95,
                    tiebreak=12,
                    witness="[]",
                    proved=True,
                    solve_seconds=0.1,
                    created_at=now,
                    updated_at=now,
                )
                .returning(PUZZLES_BEFORE_COUNTS.c.id)
            )
            ids.append(added.scalar_one())
    engine.dispose()
    return ids[0], ids[1:]


def load_sqlite(url: str, fill: Fill) -> None:
    """Rows straight through sqlite3, unjournalled (a new file: nothing to roll back to)
    and in id order, so that each B-tree of random ids is filled by appending."""
    connection = sqlite3.connect(make_url(url).database, isolation_level=None)
    connection.execute("PRAGMA journal_mode = OFF")
    connection.execute("PRAGMA synchronous = OFF")
    connection.execute(f"PRAGMA cache_size = -{SQLITE_LOAD_CACHE_KIB}")
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO players (id, created_at) VALUES (?, ?)",
        ((player, moment.strftime("%Y-%m-%d %H:%M:%S.%f")) for player, moment in fill.players()),
    )
    connection.executemany(
        f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * 9)})",
        (
            (*row[:6], int(row[6]), int(row[7]), row[8].strftime("%Y-%m-%d %H:%M:%S.%f"))
            for row in sorted(fill.run_rows())
        ),
    )
    connection.execute("COMMIT")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.close()


def load_postgresql(url: str, fill: Fill) -> None:
    with psycopg.connect(libpq_url(url)) as connection, connection.cursor() as cursor:
        with cursor.copy("COPY players (id, created_at) FROM STDIN") as copy:
            for row in fill.players():
                copy.write_row(row)
        with cursor.copy(f"COPY runs ({', '.join(RUN_COLUMNS)}) FROM STDIN") as copy:
            for row in fill.run_rows():
                copy.write_row(row)
        cursor.execute("ANALYZE")


def fetch_all(connection: sqlalchemy.Connection, query: str) -> None:
    connection.exec_driver_sql(query).all()


def timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


@dataclass(frozen=True)
class Timings:
    seconds: list[float]
    cpu_seconds: float  # of this process: the app's, and on SQLite the database's too

    def summary(self) -> str:
        cuts = statistics.quantiles(self.seconds, n=100)
        cpu = self.cpu_seconds / len(self.seconds)
        return (
            f"p50 {statistics.median(self.seconds) * 1000:.2f} ms, p99 {cuts[98] * 1000:.2f} ms, "
            f"CPU {cpu * 1000:.2f} ms each, over {len(self.seconds)} requests"
        )


def time_get(client: FlaskClient, path: str, requests: int) -> Timings:
    for _ in range(WARM_UP):
        assert client.get(path).status_code == 200
    seconds = []
    cpu_started = time.process_time()
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(path)
        seconds.append(time.perf_counter() - started)
        assert response.status_code == 200, response.data
    return Timings(seconds, time.process_time() - cpu_started)


def baseline(url: str, daily_id: int) -> dict[str, float]:
    """Median seconds of the aggregates over the runs that the leaderboard used to read."""
    queries = {
        "player count over the runs": "SELECT COUNT(DISTINCT player_id) FROM runs "
        f"WHERE puzzle_id = {daily_id}",
        "histogram over the runs": "SELECT score, COUNT(*) FROM runs "
        f"WHERE puzzle_id = {daily_id} AND official GROUP BY score ORDER BY score",
    }
    engine = sqlalchemy.create_engine(url)
    medians = {}
    with engine.connect() as connection:
        for name, query in queries.items():
            runs = [timed(partial(fetch_all, connection, query)) for _ in range(BASELINE_REPEATS)]
            medians[name] = statistics.median(runs)
    engine.dispose()
    return medians


def signed_in_client(app: Any, actions: list[Any]) -> tuple[FlaskClient, str]:
    """A client whose player cookie is the busy player's: it submits a practice run of the
    daily to get a cookie, and the busy player's runs are then handed to that player."""
    client = app.test_client()
    answer = client.post(f"/api/v1/puzzles/{GAME}/{DAILY_SEED}/runs", json={"actions": actions})
    assert answer.status_code == 201, answer.data
    store: Store = app.extensions["rally"].store
    run = store.runs.get(answer.get_json()["id"])
    assert run is not None and not run.official
    with store.database.engine.begin() as connection:
        connection.execute(
            sqlalchemy.text("UPDATE runs SET player_id = :player WHERE player_id = :busy"),
            {"player": run.player_id, "busy": BUSY_PLAYER},
        )
    return client, run.player_id


def measure(kind: str, options: argparse.Namespace, folder: Path) -> None:
    actions = finished_actions(DAILY_SEED)
    day = daily.today() - timedelta(days=1)
    with database(kind, folder) as url:
        upgrade(url, SCHEMA_BEFORE_COUNTS)
        daily_id, practice_ids = create_puzzles(url, day)
        fill = Fill(options.runs, options.history, json.dumps(actions), daily_id, practice_ids, day)
        loader = load_sqlite if kind == "sqlite" else load_postgresql
        print(f"\n## {kind}: {options.runs:,} official runs, {options.history:,} of one player")
        print(f"bulk load: {timed(lambda: loader(url, fill)):.1f} s")
        migration = timed(lambda: upgrade(url))
        print(f"migration to the newest schema (counts backfilled): {migration:.1f} s")
        instance = folder / f"instance-{kind}"
        config = Config.from_env(
            {
                "RALLY_INSTANCE_PATH": str(instance),
                "DATABASE_URL": url,
                "REDIS_URL": "redis://127.0.0.1:6379/0",
            }
        )
        app = create_app(config)
        client, player = signed_in_client(app, actions)
        store: Store = app.extensions["rally"].store
        board = f"/api/v1/puzzles/{GAME}/{DAILY_SEED}/leaderboard"
        assert client.get(board).get_json()["players"] == options.runs + 1
        middle = store.players.history(player, limit=options.history // 2)[-1].id
        report = {}
        app.extensions["rally"].cache.seconds = 0
        store.runs.kept_standings.seconds = 0
        report["leaderboard GET, no cache"] = time_get(client, board, options.requests)
        report["history GET, first page"] = time_get(
            client, "/api/v1/players/me/runs", options.requests
        )
        report["history GET, page after half the runs"] = time_get(
            client, f"/api/v1/players/me/runs?before={middle}", options.requests
        )
        app.extensions["rally"].cache.seconds = 1.0
        store.runs.kept_standings.seconds = 1.0
        report["leaderboard GET, as served (kept 1 s)"] = time_get(client, board, options.requests)
        for name, timings in report.items():
            print(f"{name}: {timings.summary()}")
        for name, seconds in baseline(url, daily_id).items():
            print(f"baseline, {name}: median {seconds * 1000:.0f} ms of {BASELINE_REPEATS}")
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000, help="official runs of the daily")
    parser.add_argument("--history", type=int, default=5_000, help="runs of the busy player")
    parser.add_argument("--requests", type=int, default=1_000, help="timed GETs of each kind")
    parser.add_argument(
        "--database",
        nargs="+",
        choices=["sqlite", "postgresql"],
        default=["sqlite", "postgresql"],
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder:
        for kind in options.database:
            measure(kind, options, Path(folder))


if __name__ == "__main__":
    main()
