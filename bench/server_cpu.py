"""The PostgreSQL server's CPU per stored run, beside the client's: what the web process's
CPU figures (bench.load, bench.submission_cpu) leave out.

Stores practice runs through the store itself (no web layer), one connection in its pool,
so that one server process does all of the database's work; its CPU time is read from
/proc (so the server must run on this machine, as the benches' fresh database does), and
this process's from the kernel too. `returning`: runs of one recorded player, sent with
their lock (RunStatements.insert_locked); `new`: each run a new player's, one statement.
After --runs / 5 of each kind as a warm-up, --runs of each:

    python -m bench.server_cpu [--runs 1000]
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Run as a script, bench/ would come first on the path (and bench/solver.py shadow the package).
sys.path.insert(0, str(BENCH_DIR.parent))

from bench.databases import fresh_postgres_database  # noqa: E402
from service.operations.children import process_info  # noqa: E402
from service.storage.database import PoolSettings  # noqa: E402
from service.storage.migrations import upgrade  # noqa: E402
from service.storage.puzzles import PuzzleRecord  # noqa: E402
from service.storage.store import Store  # noqa: E402


def process_cpu_seconds(pid: int) -> float:
    """A process's user and system CPU time so far, from /proc."""
    info = process_info(pid)
    assert info is not None, "the server's process for this connection runs"
    return info.cpu_ticks / os.sysconf("SC_CLK_TCK")


def storers(store: Store, puzzle: PuzzleRecord) -> dict[str, Callable[[], object]]:
    """A returning player's run and a new player's, as a submission stores them."""
    returning = f"p-{secrets.token_hex(4)}"
    store.players.upsert(returning)

    def add(player: str, known: bool) -> object:
        return store.runs.add(
            puzzle, player, actions=[1, 2], score=3, tiebreak=0, finished=True, known_player=known
        )

    return {
        "returning": lambda: add(returning, True),
        "new": lambda: add(f"p-{secrets.token_hex(6)}", False),
    }


def measure(server: int, store_run: Callable[[], object], runs: int) -> str:
    server_before, client_before = process_cpu_seconds(server), time.process_time()
    started = time.perf_counter()
    for _ in range(runs):
        store_run()
    wall = time.perf_counter() - started
    server_ms = (process_cpu_seconds(server) - server_before) / runs * 1000
    client_ms = (time.process_time() - client_before) / runs * 1000
    return f"{wall / runs * 1000:>10.3f}{server_ms:>12.3f}{client_ms:>12.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    options = parser.parse_args()
    with fresh_postgres_database() as url:
        upgrade(url)
        with Store(url, PoolSettings(size=1)) as store:
            with store.database.read() as connection:
                server = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            puzzle = store.puzzles.ensure("crazy-rally", "server-cpu", "v1")
            kinds = storers(store, puzzle)
            for store_run in kinds.values():
                for _ in range(max(1, options.runs // 5)):
                    store_run()
            print(f"{'run stored':<12}{'wall ms':>10}{'server ms':>12}{'client ms':>12}")
            for kind, store_run in kinds.items():
                print(f"{kind:<12}{measure(server, store_run, options.runs)}")


if __name__ == "__main__":
    main()
