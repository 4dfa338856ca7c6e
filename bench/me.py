"""`GET /api/v1/me` for a player with a long history in a database of a million runs.

For each database (a SQLite file, and a fresh PostgreSQL database on 127.0.0.1:5432 dropped
afterwards) it migrates to the newest schema, bulk-loads the dailies of --days days of both
games (solved), one busy player with an official run of --busy of them (some days missed,
so their streaks break) and other players' official runs up to --runs runs in all, each run
a real 18-action run. It then times `GET /api/v1/me` for the busy player through the Flask
app in-process and prints p50 and p99, with the runs and the streaks the answer holds.

    python -m bench.me [--runs 1000000] [--busy 1000] [--days 600] [--requests 500]
                       [--database sqlite postgresql]
"""

from __future__ import annotations

import argparse
import json
import secrets
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
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
from bench.leaderboard import RUN_COLUMNS, time_get, timed  # noqa: E402
from bench.load import GAME, finished_actions  # noqa: E402
from puzzles import GAMES  # noqa: E402
from service.config import Config  # noqa: E402
from service.domain import daily  # noqa: E402
from service.storage.migrations import upgrade  # noqa: E402
from service.storage.store import Store  # noqa: E402
from service.web.app import create_app  # noqa: E402

BUSY_PLAYER = "bench-busy"
# The other players: each has runs on many days, as regulars do.
OTHER_PLAYERS = 50_000
# The busy player misses one day in this many, which ends a streak each time.
MISSED_EVERY = 37
OPTIMUM = 20
PRACTICE_SEED = "bench-practice"
SQLITE_LOAD_CACHE_KIB = 1_000_000
PUZZLE_COLUMNS = (
    "id",
    "game",
    "seed",
    "rules_version",
    "daily_date",
    "number",
    "status",
    "optimum",
    "tiebreak",
    "created_at",
    "updated_at",
)


@dataclass(frozen=True)
class Fill:
    runs: int
    busy: int
    days: int
    actions: str
    today: date

    def puzzles(self) -> Iterator[tuple[Any, ...]]:
        """The dailies of both games on each of the last `days` days, ids from 1."""
        moment = datetime.combine(self.today, datetime.min.time(), UTC)
        for index, (day, game) in enumerate(self.dailies(), start=1):
            rules = GAMES[game].rules_version
            number = daily.puzzle_number(day)
            yield (
                index,
                game,
                f"bench-{game}-{day}",
                rules,
                day,
                number,
                "solved",
                OPTIMUM,
                0,
                moment,
                moment,
            )

    def dailies(self) -> list[tuple[date, str]]:
        first = self.today - timedelta(days=self.days - 1)
        return [(first + timedelta(days=n), game) for n in range(self.days) for game in GAMES]

    def players(self) -> Iterator[tuple[str, datetime]]:
        moment = datetime.combine(self.today, datetime.min.time(), UTC)
        yield BUSY_PLAYER, moment
        for number in range(OTHER_PLAYERS):
            yield f"p{number:06d}", moment

    def busy_puzzles(self) -> list[int]:
        """The busy player's dailies: the newest first, skipping one day in MISSED_EVERY."""
        newest_first = range(len(self.dailies()), 0, -1)
        chosen = [pid for pid in newest_first if (pid - 1) // len(GAMES) % MISSED_EVERY != 3]
        return chosen[: self.busy]

    def run_rows(self) -> Iterator[tuple[Any, ...]]:
        """(id, puzzle_id, player_id, actions, score, tiebreak, finished, official,
        created_at): the busy player's, then the others' round the dailies."""
        dailies = self.dailies()
        for pid in self.busy_puzzles():
            yield self.row(pid, BUSY_PLAYER, dailies[pid - 1][0], pid)
        for number in range(self.runs - self.busy):
            pid = number % len(dailies) + 1
            player = f"p{number // len(dailies) % OTHER_PLAYERS:06d}"
            yield self.row(pid, player, dailies[pid - 1][0], number)

    def row(self, puzzle_id: int, player: str, day: date, salt: int) -> tuple[Any, ...]:
        moment = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=salt % 24)
        score = OPTIMUM - salt % 6
        return (
            secrets.token_urlsafe(12),
            puzzle_id,
            player,
            self.actions,
            score,
            salt % 13,
            True,
            True,
            moment,
        )


def sqlite_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def load_sqlite(url: str, fill: Fill) -> None:
    """Rows straight through sqlite3, unjournalled (a new file: nothing to roll back to)."""
    connection = sqlite3.connect(make_url(url).database, isolation_level=None)
    connection.execute("PRAGMA journal_mode = OFF")
    connection.execute("PRAGMA synchronous = OFF")
    connection.execute(f"PRAGMA cache_size = -{SQLITE_LOAD_CACHE_KIB}")
    connection.execute("BEGIN")
    connection.executemany(
        f"INSERT INTO puzzles ({', '.join(PUZZLE_COLUMNS)}) VALUES "
        f"({', '.join('?' * len(PUZZLE_COLUMNS))})",
        (
            (*row[:4], row[4].isoformat(), *row[5:9], sqlite_time(row[9]), sqlite_time(row[10]))
            for row in fill.puzzles()
        ),
    )
    connection.executemany(
        "INSERT INTO players (id, created_at) VALUES (?, ?)",
        ((player, sqlite_time(moment)) for player, moment in fill.players()),
    )
    connection.executemany(
        f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * 9)})",
        ((*row[:6], int(row[6]), int(row[7]), sqlite_time(row[8])) for row in fill.run_rows()),
    )
    connection.execute("COMMIT")
    connection.execute("PRAGMA journal_mode = WAL")
    connection.close()


def load_postgresql(url: str, fill: Fill) -> None:
    with psycopg.connect(libpq_url(url)) as connection, connection.cursor() as cursor:
        with cursor.copy(f"COPY puzzles ({', '.join(PUZZLE_COLUMNS)}) FROM STDIN") as copy:
            for row in fill.puzzles():
                copy.write_row(row)
        cursor.execute("SELECT setval('puzzles_id_seq', (SELECT max(id) FROM puzzles))")
        with cursor.copy("COPY players (id, created_at) FROM STDIN") as copy:
            for row in fill.players():
                copy.write_row(row)
        with cursor.copy(f"COPY runs ({', '.join(RUN_COLUMNS)}) FROM STDIN") as copy:
            for row in fill.run_rows():
                copy.write_row(row)
        connection.commit()
        connection.autocommit = True
        # The visibility map too, as autovacuum would after a load: index-only scans need it.
        cursor.execute("VACUUM ANALYZE")


def signed_in_client(app: Any) -> tuple[FlaskClient, str]:
    """A client whose player cookie is the busy player's: it submits a practice run to get
    a cookie, and the busy player's runs are then handed to that player (whose id it
    returns too)."""
    client = app.test_client()
    actions = finished_actions(PRACTICE_SEED)
    answer = client.post(f"/api/v1/puzzles/{GAME}/{PRACTICE_SEED}/runs", json={"actions": actions})
    assert answer.status_code == 201, answer.data
    store: Store = app.extensions["rally"].store
    run = store.runs.get(answer.get_json()["id"])
    assert run is not None
    with store.database.engine.begin() as connection:
        connection.execute(
            sqlalchemy.text("UPDATE runs SET player_id = :player WHERE player_id = :busy"),
            {"player": run.player_id, "busy": BUSY_PLAYER},
        )
    return client, run.player_id


def plan(app: Any, kind: str, player: str) -> str:
    """How the database reads the player's official runs: the plan of the store's statement."""
    store: Store = app.extensions["rally"].store
    sql = store.players.sql.official_runs_of.sql
    explain, parameters = (
        ("EXPLAIN QUERY PLAN ", (player,))
        if kind == "sqlite"
        else ("EXPLAIN ", {"player_id": player})
    )
    with store.database.engine.connect() as connection:
        rows = connection.exec_driver_sql(explain + sql, parameters)
        return " | ".join(str(row[-1]).strip() for row in rows)


def measure(kind: str, options: argparse.Namespace, folder: Path) -> None:
    fill = Fill(
        options.runs,
        options.busy,
        options.days,
        json.dumps(finished_actions("bench-daily")),
        daily.today(),
    )
    with database(kind, folder) as url:
        upgrade(url)
        loader = load_sqlite if kind == "sqlite" else load_postgresql
        print(f"\n## {kind}: {options.runs:,} official runs, {options.busy:,} of one player")
        print(f"bulk load: {timed(lambda: loader(url, fill)):.1f} s")
        config = Config.from_env(
            {
                "RALLY_INSTANCE_PATH": str(folder / f"instance-{kind}"),
                "DATABASE_URL": url,
                "REDIS_URL": options.redis,
            }
        )
        app = create_app(config)
        client, player = signed_in_client(app)
        answer = client.get("/api/v1/me").get_json()
        streaks = {
            game: (stats["current_streak"], stats["best_streak"], stats["days_played"])
            for game, stats in answer["games"].items()
        }
        print(f"answer: {len(answer['runs'])} runs; (current, best, days) per game {streaks}")
        assert len(answer["runs"]) == options.busy
        print(f"GET /api/v1/me: {time_get(client, '/api/v1/me', options.requests).summary()}")
        print(f"plan: {plan(app, kind, player)}")
        app.extensions["rally"].store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1_000_000, help="official runs in all")
    parser.add_argument("--busy", type=int, default=1_000, help="official runs of the player")
    parser.add_argument("--days", type=int, default=600, help="days of dailies, both games")
    parser.add_argument("--requests", type=int, default=500, help="timed GETs")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="the rate limits'")
    parser.add_argument(
        "--database", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"]
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder:
        for kind in options.database:
            measure(kind, options, Path(folder))


if __name__ == "__main__":
    main()
