"""A league's page at full size: `GET /api/v1/leagues/{id}` for a league of 500 members with a
year of runs, among 100,000 leagues and 10 million runs; the weekend rally beside it.

For each database (a SQLite file, and a fresh PostgreSQL database on 127.0.0.1:5432
dropped afterwards) it migrates to the schema before the leagues (0006), bulk-loads a
year of dailies of both games (solved, with pars), the league's 500 members' runs (each
plays most days of the year, both games: their streaks run long) and other players'
official runs up to --runs runs in all, and the attempts of the last week (the league
reads whether a member started today's and yesterday's dailies). It builds the runs'
indexes after the load (as the migrations define them), then migrates to the newest
schema, whose migration creates the leagues and fills each player's latest streak from
the runs (timed), and loads --leagues leagues of 2 to 20 members besides the big one.

It then times, through the Flask app in-process, as a member of the big league: its
page's answer (`GET /api/v1/leagues/{id}`) as served (the days' dailies kept a second, as
every process keeps them) and with every cache off, the league's rally standings and
everyone's (the latest weekend's rally, not kept), and prints p50 and p99, CPU per
request, the answer's size, and the database's plan of the league's reads.

    python -m bench.leagues [--runs 10000000] [--leagues 100000] [--requests 500]
                            [--database sqlite postgresql]

The big league's runs carry a real 18-action run; the other runs a one-action list
(`--real-actions` gives every run a real one: about 10 GB more per database). No read
timed here touches a run's actions (they are read off covering indexes), so only the
size of the tables on disk changes with them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

from bench.databases import database, libpq_url, postgres_admin  # noqa: E402
from bench.leaderboard import RUN_COLUMNS, time_get, timed  # noqa: E402
from bench.load import finished_actions  # noqa: E402
from puzzles import GAMES  # noqa: E402
from service.config import Config  # noqa: E402
from service.domain import daily, rally  # noqa: E402
from service.domain.leagues import MAX_MEMBERS, week_of  # noqa: E402
from service.storage.migrations import upgrade  # noqa: E402
from service.storage.models import Run  # noqa: E402
from service.storage.store import Store  # noqa: E402
from service.web import players  # noqa: E402
from service.web.app import create_app  # noqa: E402
from service.web.web_worker import settle_heap  # noqa: E402

SCHEMA_BEFORE_LEAGUES = "0006"
DAYS = 366
OTHER_PLAYERS = 250_000
BIG_LEAGUE = "bench-big-league"
# A member of the big league skips a game's daily on this share of days.
MISSED = 0.07
# Today, of the big league's members: finished, still playing, ended unfinished, not started.
TODAY_SHARES = (0.6, 0.1, 0.05)
ATTEMPT_DAYS = 7
SQLITE_LOAD_CACHE_KIB = 2_000_000
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
    "par",
    "par_tiebreak",
    "par_line",
    "created_at",
    "updated_at",
)
ATTEMPT_COLUMNS = (
    "id",
    "puzzle_id",
    "player_id",
    "played",
    "state",
    "over",
    "run_id",
    "created_at",
    "updated_at",
)


def member(number: int) -> str:
    return f"m{number:03d}"


def other(number: int) -> str:
    return f"p{number:06d}"


def sqlite_stamp(moment: datetime) -> str:
    """A time as SQLAlchemy stores it in SQLite."""
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def postgresql_stamp(moment: datetime) -> str:
    return moment.isoformat()


@dataclass
class Fill:
    """The rows to load, every value ready for the database (times as text in its format,
    booleans as 1 and 0): ten million rows leave no room for converting each value."""

    runs: int
    leagues: int
    today: date
    real_actions: str
    short_actions: str
    every_run_real: bool
    stamp: Callable[[datetime], str]

    def __post_init__(self) -> None:
        self.chance = random.Random(29)
        first = self.today - timedelta(days=DAYS - 1)
        self.dailies = [(first + timedelta(days=n), game) for n in range(DAYS) for game in GAMES]
        self.moment = self.stamp(datetime.combine(self.today, datetime.min.time(), UTC))
        # The hours of each day, as text: a run is stored at one of them.
        self.hours = {
            day: [
                self.stamp(datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=h))
                for h in range(24)
            ]
            for day, _game in self.dailies
        }
        self.attempts: list[tuple[Any, ...]] = []
        self.run_count = 0
        self.first_attempt_day = self.today - timedelta(days=ATTEMPT_DAYS - 1)

    def puzzles(self) -> Iterator[tuple[Any, ...]]:
        for index, (day, game) in enumerate(self.dailies, start=1):
            yield (
                index,
                game,
                f"bench-{game}-{day}",
                GAMES[game].rules_version,
                day.isoformat(),
                daily.puzzle_number(day),
                "solved",
                200,
                9,
                150,
                4,
                "[]",
                self.moment,
                self.moment,
            )

    def players(self) -> Iterator[tuple[str, str, str]]:
        for number in range(MAX_MEMBERS):
            yield member(number), f"Member {number}", self.moment
        for number in range(OTHER_PLAYERS):
            yield other(number), f"Player {number}", self.moment

    def run_rows(self) -> Iterator[tuple[Any, ...]]:
        """(id, puzzle_id, player_id, actions, score, tiebreak, finished, official,
        created_at): the big league's members', then other players' round the dailies."""
        for puzzle_id, (day, _game) in enumerate(self.dailies, start=1):
            for number in range(MAX_MEMBERS):
                row = self._member_run(puzzle_id, day, member(number))
                if row is not None:
                    yield row
        per_puzzle = max(0, self.runs - self.run_count) // len(self.dailies)
        for puzzle_id, (day, _game) in enumerate(self.dailies, start=1):
            start = puzzle_id * 7919 % OTHER_PLAYERS
            for offset in range(per_puzzle):
                player = other((start + offset) % OTHER_PLAYERS)
                yield self._run(puzzle_id, day, player, official=True)

    def _member_run(self, puzzle_id: int, day: date, player: str) -> tuple[Any, ...] | None:
        if day < self.today:
            if self.chance.random() < MISSED:
                return None
            return self._run(puzzle_id, day, player, official=True, real=True)
        draw = self.chance.random()
        finished, playing, ended = TODAY_SHARES
        if draw < finished:
            return self._run(puzzle_id, day, player, official=True, real=True)
        if draw < finished + playing:
            self.attempts.append(self._attempt(puzzle_id, player, over=False, run=None))
            return None
        if draw < finished + playing + ended:
            return self._run(puzzle_id, day, player, official=False, real=True)
        return None

    def _run(
        self, puzzle_id: int, day: date, player: str, *, official: bool, real: bool = False
    ) -> tuple[Any, ...]:
        # Ids in the order the rows are loaded: the primary key's B-tree is filled by
        # appending. Scores, tie-breaks and hours spread by the count: full of ties.
        count = self.run_count = self.run_count + 1
        run_id = f"r{count:015d}"
        if day >= self.first_attempt_day:
            self.attempts.append(self._attempt(puzzle_id, player, over=True, run=run_id))
        actions = self.real_actions if real or self.every_run_real else self.short_actions
        score = 90 + count * 37 % 110 if official else None
        done = int(official)
        return (
            run_id,
            puzzle_id,
            player,
            actions,
            score,
            count * 7 % 12,
            done,
            done,
            self.hours[day][count % 24],
        )

    def _attempt(
        self, puzzle_id: int, player: str, *, over: bool, run: str | None
    ) -> tuple[Any, ...]:
        attempt_id = hashlib.sha256(f"a/{puzzle_id}/{player}".encode()).hexdigest()[:16]
        return (
            attempt_id,
            puzzle_id,
            player,
            18 if over else 5,
            "{}",
            int(over),
            run,
            self.moment,
            self.moment,
        )

    def league_rows(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """The leagues (the big one first) and their members."""
        leagues = [(BIG_LEAGUE, "The big league", member(0), MAX_MEMBERS)]
        members = [(BIG_LEAGUE, member(n), f"h{n:05d}") for n in range(MAX_MEMBERS)]
        everyone = [member(n) for n in range(MAX_MEMBERS)] + [
            other(n) for n in range(OTHER_PLAYERS)
        ]
        for number in range(1, self.leagues):
            chosen = self.chance.sample(everyone, self.chance.randint(2, 20))
            league_id = f"L{number:06d}"
            leagues.append((league_id, f"League {number}", chosen[0], len(chosen)))
            members.extend((league_id, player, f"h{n:05d}") for n, player in enumerate(chosen))
        return [
            (
                league_id,
                name,
                maker,
                f"salt-{league_id}",
                hashlib.sha256(league_id.encode()).hexdigest(),
                count,
                self.moment,
            )
            for league_id, name, maker, count in leagues
        ], [(*row, self.moment) for row in members]


LEAGUE_COLUMNS = ("id", "name", "maker_id", "invite_salt", "invite_hash", "members", "created_at")
MEMBER_COLUMNS = ("league_id", "player_id", "member", "joined_at")


def sqlite_insert(
    connection: sqlite3.Connection, table: str, columns: tuple[str, ...], rows: Any
) -> None:
    connection.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        rows,
    )


@dataclass
class Loader:
    kind: str
    url: str

    def load_year(self, fill: Fill) -> None:
        """Puzzles, players, runs and the last week's attempts, with the runs' indexes built
        after their rows."""
        run_indexes = list(Run.metadata.tables[Run.__tablename__].indexes)
        self._each_index(run_indexes, "drop")
        if self.kind == "sqlite":
            self._sqlite_year(fill)
        else:
            self._postgresql_year(fill)
        self._each_index(run_indexes, "create")

    def _each_index(self, indexes: list[Any], action: str) -> None:
        """Drop or create indexes, as their models define them (the engine closed after, so
        that the loader may lock the database)."""
        engine = sqlalchemy.create_engine(self.url)
        with engine.begin() as connection:
            for index in indexes:
                getattr(index, action)(connection)
        engine.dispose()

    def _sqlite_year(self, fill: Fill) -> None:
        connection = self._sqlite()
        sqlite_insert(connection, "puzzles", PUZZLE_COLUMNS, fill.puzzles())
        sqlite_insert(connection, "players", ("id", "display_name", "created_at"), fill.players())
        sqlite_insert(connection, "runs", RUN_COLUMNS, fill.run_rows())
        sqlite_insert(connection, "attempts", ATTEMPT_COLUMNS, fill.attempts)
        self._sqlite_done(connection)

    def _postgresql_year(self, fill: Fill) -> None:
        with psycopg.connect(libpq_url(self.url)) as connection, connection.cursor() as cursor:
            self._copy(cursor, "puzzles", PUZZLE_COLUMNS, fill.puzzles())
            cursor.execute("SELECT setval('puzzles_id_seq', (SELECT max(id) FROM puzzles))")
            self._copy(cursor, "players", ("id", "display_name", "created_at"), fill.players())
            self._copy(cursor, "runs", RUN_COLUMNS, fill.run_rows())
            self._copy(cursor, "attempts", ATTEMPT_COLUMNS, fill.attempts)

    def load_leagues(self, fill: Fill) -> None:
        leagues, members = fill.league_rows()
        if self.kind == "sqlite":
            connection = self._sqlite()
            sqlite_insert(connection, "leagues", LEAGUE_COLUMNS, leagues)
            sqlite_insert(connection, "league_members", MEMBER_COLUMNS, sorted(members))
            self._sqlite_done(connection)
            return
        with psycopg.connect(libpq_url(self.url)) as server, server.cursor() as cursor:
            self._copy(cursor, "leagues", LEAGUE_COLUMNS, leagues)
            self._copy(cursor, "league_members", MEMBER_COLUMNS, members)

    def count(self) -> None:
        """The kept counts of official runs and players per puzzle (the rally's entrants
        read them), as migration 0003 filled them from the runs."""
        engine = sqlalchemy.create_engine(self.url)
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO score_counts (puzzle_id, score, runs) SELECT puzzle_id, score, "
                "COUNT(*) FROM runs WHERE official GROUP BY puzzle_id, score"
            )
            connection.exec_driver_sql(
                "INSERT INTO player_counts (puzzle_id, players) "
                "SELECT puzzle_id, COUNT(DISTINCT player_id) FROM runs GROUP BY puzzle_id"
            )
        engine.dispose()

    def settle(self) -> None:
        """What a database does after a load on its own: statistics (and on PostgreSQL the
        visibility map that index-only scans need)."""
        if self.kind == "sqlite":
            connection = sqlite3.connect(make_url(self.url).database)
            connection.execute("ANALYZE")
            connection.close()
            return
        with psycopg.connect(libpq_url(self.url), autocommit=True) as server:
            server.execute("VACUUM ANALYZE")

    def _sqlite(self) -> sqlite3.Connection:
        connection = sqlite3.connect(make_url(self.url).database, isolation_level=None)
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute(f"PRAGMA cache_size = -{SQLITE_LOAD_CACHE_KIB}")
        connection.execute("BEGIN")
        return connection

    @staticmethod
    def _sqlite_done(connection: sqlite3.Connection) -> None:
        connection.execute("COMMIT")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.close()

    @staticmethod
    def _copy(cursor: Any, table: str, columns: tuple[str, ...], rows: Any) -> None:
        with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def member_client(app: Any) -> FlaskClient:
    """A client whose signed player cookie is the big league's maker's."""
    client = app.test_client()
    signer = app.extensions[players._SIGNER_EXTENSION]
    client.set_cookie(players.COOKIE_NAME, signer.sign(member(0)).decode())
    return client


def plans(app: Any, kind: str) -> list[str]:
    """How the database runs the league's reads of its members, as the service sends them
    (today's and yesterday's dailies of both games, the week's range of puzzles)."""
    reads = app.extensions["rally"].store.leagues._members
    store: Store = app.extensions["rally"].store
    today = daily.today()
    week = [p.id for day in week_of(today) if day <= today for p in store.puzzles.dailies(day)]
    days = [p.id for day in (today - timedelta(days=1), today) for p in store.puzzles.dailies(day)]
    league = {"league_id": BIG_LEAGUE}
    padded = [*days, *[-1] * (reads.ATTEMPTED_PUZZLES - len(days))]
    statements = {
        "members": (reads._members, league),
        "official runs": (reads._official, {**league, "first": min(week), "last": max(week)}),
        "runs": (reads._ran, {**league, "first": min(days), "last": max(days)}),
        "attempts": (
            reads._attempted,
            {**league, **{f"puzzle_{n}": p for n, p in enumerate(padded)}},
        ),
        "streaks": (reads._streaks, league),
    }
    explain = "EXPLAIN QUERY PLAN " if kind == "sqlite" else "EXPLAIN "
    found = []
    with store.database.engine.connect() as connection:
        for name, (statement, values) in statements.items():
            parameters = statement._parameters(values)
            rows = connection.exec_driver_sql(
                explain + statement.sql,
                tuple(parameters) if isinstance(parameters, list) else parameters,
            )
            found.append(f"{name}: " + " | ".join(str(row[-1]).strip() for row in rows))
    return found


def load(kind: str, url: str, fill: Fill) -> None:
    """Fill a database at the schema before the leagues, then migrate and add the leagues."""
    upgrade(url, SCHEMA_BEFORE_LEAGUES)
    loader = Loader(kind, url)
    steps = {
        "bulk load of the year (the runs' indexes built after)": lambda: loader.load_year(fill),
        "migration to the newest schema (streaks filled)": lambda: upgrade(url),
        "bulk load of the leagues": lambda: loader.load_leagues(fill),
        "the kept counts of official runs": loader.count,
        "statistics": loader.settle,
    }
    for step, call in steps.items():
        print(f"{step}: {timed(call):.1f} s", flush=True)


@contextmanager
def kept_database(kind: str, loaded: Path) -> Iterator[str]:
    """A database kept between runs (a SQLite file beside the mark `loaded`, or
    PostgreSQL's rally_bench_leagues), so that the load can be done once, on a busy
    machine, and the timing again on a quiet one. Without today's mark (a load cut short,
    or one of another day, whose dailies are not today's) it starts empty."""
    loaded.parent.mkdir(parents=True, exist_ok=True)
    if kind == "sqlite":
        file = loaded.parent / "bench.sqlite3"
        if not loaded.exists():
            for stale in loaded.parent.glob("bench.sqlite3*"):
                stale.unlink()
        yield f"sqlite:///{file}"
        return
    admin = postgres_admin()
    name = "rally_bench_leagues"
    if not loaded.exists():
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    yield admin.url.set(database=name).render_as_string(hide_password=False)


def measure(kind: str, options: argparse.Namespace, folder: Path) -> None:
    today = daily.today()
    fill = Fill(
        options.runs,
        options.leagues,
        today,
        json.dumps(finished_actions("bench-league")),
        json.dumps(finished_actions("bench-league")[:1]),
        options.real_actions,
        sqlite_stamp if kind == "sqlite" else postgresql_stamp,
    )
    loaded = options.keep / f"{kind}-{today}.loaded" if options.keep else None
    opened = kept_database(kind, loaded) if loaded else database(kind, folder)
    with opened as url:
        print(f"\n## {kind}: {options.runs:,} runs, {options.leagues:,} leagues")
        if loaded is not None and loaded.exists():
            print(f"loaded on {today} already: {timed(lambda: upgrade(url)):.1f} s to migrate")
        else:
            load(kind, url, fill)
        if loaded is not None:
            loaded.touch()
        if options.load_only:
            return
        config = Config.from_env(
            {
                "RALLY_INSTANCE_PATH": str(folder / f"instance-{kind}"),
                "DATABASE_URL": url,
                "REDIS_URL": options.redis,
            }
        )
        app = create_app(config)
        settle_heap()  # as a web worker does once its app is built
        client = member_client(app)
        path = f"/api/v1/leagues/{BIG_LEAGUE}"
        answer = client.get(path)
        assert answer.status_code == 200, answer.data
        body = answer.get_json()
        streaks = sorted(row["current_streak"] for row in body["week"]["games"]["crazy-rally"])
        statuses = sorted({e["status"] for e in body["today"]["crazy-rally"]})
        print(
            f"answer: {len(body['members'])} members, {len(answer.data) / 1024:.0f} KiB; "
            f"today's statuses {statuses}; streaks from {streaks[0]} to {streaks[-1]}"
        )
        print(f"GET {path}, as served: {time_get(client, path, options.requests).summary()}")
        # Every cache off: each request reads the days' dailies too.
        app.extensions["rally"].cache.seconds = 0
        print(f"GET {path}, no cache: {time_get(client, path, options.requests).summary()}")
        friday = rally.start_of(today)
        league_rally = f"/api/v1/rallies/{friday}?league={BIG_LEAGUE}"
        print(f"GET {league_rally}: {time_get(client, league_rally, options.requests).summary()}")
        public = f"/api/v1/rallies/{friday}"
        entrants = client.get(public).get_json()["entrants"]
        timings = time_get(client, public, options.requests // 5)
        print(f"GET {public} ({entrants:,} entrants, not kept): {timings.summary()}")
        for plan in plans(app, kind):
            print(f"plan of {plan}")
        app.extensions["rally"].store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000_000, help="runs in all")
    parser.add_argument("--leagues", type=int, default=100_000, help="leagues in all")
    parser.add_argument("--requests", type=int, default=500, help="timed GETs of the league")
    parser.add_argument("--real-actions", action="store_true", help="a real run in every run")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="the rate limits'")
    parser.add_argument(
        "--database", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite", "postgresql"]
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep the loaded databases in this folder (and PostgreSQL's rally_bench_leagues)"
        " and reuse them when loaded the same day: only the timing runs again",
    )
    parser.add_argument("--load-only", action="store_true", help="with --keep: load, time nothing")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rally-bench-") as folder:
        for kind in options.database:
            measure(kind, options, Path(folder))


if __name__ == "__main__":
    main()
