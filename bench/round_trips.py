"""Round trips to PostgreSQL per attempt append and per run submission.

On PostgreSQL each statement, each BEGIN, COMMIT and ROLLBACK is a round trip to the
server: a system call pair and a wait in the web worker. This drives the service in
process (Flask's test client, the embedded Redis, the database DATABASE_URL names,
migrated first) as bench.load's attempt path and submissions do: players each playing
today's Rallye Raser daily through an attempt, batch by batch, then practice run
submissions, each from a new player. It counts, through SQLAlchemy's events and the
driver's cursor, what each request sends:

- statements: every execute on the driver's cursor, SQLAlchemy's and DriverStatement's;
- BEGIN: psycopg sends one before the first statement of a transaction;
- COMMIT and ROLLBACK: only those that end a transaction (the pool's reset of an idle
  connection sends nothing);
- connection checkouts from the pool (not round trips: a request holds one at a time).

    DATABASE_URL=postgresql+psycopg://... python -m bench.round_trips [--players 4] [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

import psycopg  # noqa: E402
from flask import Flask  # noqa: E402
from flask.testing import FlaskClient  # noqa: E402
from psycopg.pq import TransactionStatus  # noqa: E402
from sqlalchemy import Engine, event  # noqa: E402

from bench.load import (  # noqa: E402
    ATTEMPT_GAME,
    GAME,
    PRACTICE_SEED,
    daily_batches,
    finished_actions,
    migrated_service_env,
)
from service.config import Config  # noqa: E402
from service.domain.daily import today  # noqa: E402
from service.operations.redis_server import EmbeddedRedis  # noqa: E402
from service.web.app import create_app  # noqa: E402

KINDS = ("statements", "BEGIN", "COMMIT", "ROLLBACK", "checkouts")
SENT: Counter[str] = Counter()


class CountingCursor(psycopg.Cursor[Any]):
    """psycopg's cursor, counting each statement and the BEGIN psycopg sends before it."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        connection = self.connection
        idle = connection.info.transaction_status == TransactionStatus.IDLE
        if not connection.autocommit and idle:
            SENT["BEGIN"] += 1
        SENT["statements"] += 1
        return super().execute(*args, **kwargs)


def _in_transaction(dbapi_connection: Any) -> bool:
    return bool(dbapi_connection.info.transaction_status != TransactionStatus.IDLE)


def count_round_trips(engine: Engine) -> None:
    """Counts into SENT what engine's connections send from now on."""

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.cursor_factory = CountingCursor

    @event.listens_for(engine, "checkout")
    def on_checkout(*_args: Any) -> None:
        SENT["checkouts"] += 1

    @event.listens_for(engine, "commit")
    def on_commit(connection: Any) -> None:
        if _in_transaction(connection.connection.dbapi_connection):
            SENT["COMMIT"] += 1

    @event.listens_for(engine, "rollback")
    def on_rollback(connection: Any) -> None:
        if _in_transaction(connection.connection.dbapi_connection):
            SENT["ROLLBACK"] += 1

    @event.listens_for(engine, "reset")
    def on_reset(dbapi_connection: Any, _record: Any, _state: Any) -> None:
        if _in_transaction(dbapi_connection):
            SENT["ROLLBACK"] += 1


def start_attempt(client: FlaskClient) -> str:
    """Today's attempt started as a new player: its id."""
    started = client.post(f"/api/v1/daily/{today()}/{ATTEMPT_GAME}/attempt", json={})
    assert started.status_code == 201, started.data
    attempt: str = started.get_json()["attempt"]
    return attempt


def append_all(client: FlaskClient, attempt: str, batches: list[list[Any]]) -> None:
    played = 0
    for batch in batches:
        body = {"played": played, "actions": batch}
        answer = client.post(f"/api/v1/attempts/{attempt}/actions", json=body)
        assert answer.status_code == 200, answer.data
        played += len(batch)


def submit_runs(app: Flask, runs: int, client: FlaskClient | None = None) -> None:
    """runs practice submissions of one finished run, each from a new player, or all from
    client's (a returning player, their cookie sent)."""
    body = {"actions": finished_actions(PRACTICE_SEED)}
    for _ in range(runs):
        sender = client or app.test_client()
        answer = sender.post(f"/api/v1/puzzles/{GAME}/{PRACTICE_SEED}/runs", json=body)
        assert answer.status_code == 201, answer.data


def sent_by(send: Callable[[], object]) -> Counter[str]:
    """What send() sent."""
    before = SENT.copy()
    send()
    return Counter({kind: SENT[kind] - before[kind] for kind in KINDS})


def play_daily(app: Flask, batches: list[list[Any]]) -> tuple[Counter[str], Counter[str]]:
    """What a new player's start of today's attempt sent, and what all its appends sent."""
    client = app.test_client()
    attempt: list[str] = []
    start = sent_by(lambda: attempt.append(start_attempt(client)))
    return start, sent_by(lambda: append_all(client, attempt[0], batches))


def per_request(sent: Counter[str], requests: int) -> dict[str, float]:
    return {kind: sent[kind] / requests for kind in KINDS}


def print_row(name: str, counts: dict[str, float]) -> None:
    trips = sum(counts[kind] for kind in KINDS if kind != "checkouts")
    cells = "".join(f"{counts[kind]:>11.2f}" for kind in KINDS)
    print(f"{name:<34}{cells}{trips:>13.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--runs", type=int, default=20)
    options = parser.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith("postgresql"):
        sys.exit("DATABASE_URL must name a PostgreSQL database (the counts are psycopg's)")
    with tempfile.TemporaryDirectory(prefix="rally-trips-") as folder:
        instance = Path(folder)
        with EmbeddedRedis(instance / "redis.sock", instance):
            app = create_app(Config.from_env(migrated_service_env(instance)))
            count_round_trips(app.extensions["rally"].store.database.engine)
            batches = daily_batches()
            submit_runs(app, 1)  # the puzzle recorded, so every counted submission is alike
            print(f"{'per request':<34}" + "".join(f"{kind:>11}" for kind in KINDS), end="")
            print(f"{'round trips':>13}")
            starts: Counter[str] = Counter()
            appends: Counter[str] = Counter()
            for _ in range(options.players):
                start, appended = play_daily(app, batches)
                starts += start
                appends += appended
            print_row(f"attempt start ({options.players})", per_request(starts, options.players))
            count = options.players * len(batches)
            print_row(f"append ({count})", per_request(appends, count))
            runs = sent_by(lambda: submit_runs(app, options.runs))
            print_row(f"run submission ({options.runs})", per_request(runs, options.runs))
            returning = app.test_client()
            submit_runs(app, 1, returning)  # the player recorded, their cookie set
            again = sent_by(lambda: submit_runs(app, options.runs, returning))
            print_row(f"returning player's ({options.runs})", per_request(again, options.runs))
            app.extensions["rally"].store.close()


if __name__ == "__main__":
    main()
