"""Leaderboard counts kept as runs are stored, the indexes that serve the leaderboard and a
player's history, and the history through the API, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from datetime import time as time_of_day
from pathlib import Path

import pytest
import sqlalchemy
from flask import Flask

from puzzles import get_game
from service.clock import Clock
from service.domain import daily
from service.storage.migrations import upgrade
from service.storage.models import Player, Run
from service.storage.players import HISTORY_PAGE
from service.storage.puzzles import PuzzleRecord
from service.storage.runs import RunRecord, Standings
from service.storage.store import Store
from tests.api_support import (
    FINISHING_GAME,
    client_of,
    finished_run,
    play_attempt,
    todays_daily,
)

DAY = date(2026, 11, 30)
EPOCH = datetime(2026, 11, 30, 12, tzinfo=UTC)


def daily_puzzle(store: Store, seed: str = "d-seed") -> PuzzleRecord:
    return store.puzzles.ensure("crazy-rally", seed, "v1", daily_date=DAY, number=30)


def counted_from_runs(database_url: str, puzzle_id: int) -> tuple[dict[int, int], int]:
    """The histogram and player count computed over the runs themselves."""
    engine = sqlalchemy.create_engine(database_url)
    with engine.connect() as connection:
        histogram = dict(
            connection.execute(
                sqlalchemy.select(Run.score, sqlalchemy.func.count())
                .where(Run.puzzle_id == puzzle_id, Run.official)
                .group_by(Run.score)
                .order_by(Run.score)
            ).all()
        )
        players = connection.scalar(
            sqlalchemy.select(sqlalchemy.func.count(sqlalchemy.distinct(Run.player_id))).where(
                Run.puzzle_id == puzzle_id
            )
        )
    engine.dispose()
    return histogram, players


def add(store: Store, puzzle: PuzzleRecord, player: str, score: int, *, finished=True, day=DAY):
    return store.runs.add(
        puzzle,
        player,
        actions=[score],
        score=score if finished else None,
        tiebreak=score % 3,
        finished=finished,
        today=day,
    )


def test_counts_follow_every_kind_of_run(store: Store, database_url: str):
    puzzle = daily_puzzle(store)
    other = daily_puzzle(store, "other")
    add(store, puzzle, "p1", 5, finished=False)  # unfinished: a player, no score
    add(store, puzzle, "p1", 7)  # official
    add(store, puzzle, "p1", 9)  # practice: the player had an official run
    add(store, puzzle, "p2", 7)
    add(store, puzzle, "p3", 4, day=DAY + timedelta(days=1))  # too late to be official
    add(store, other, "p1", 1)
    assert (
        store.runs.score_histogram(puzzle.id)
        == {7: 2}
        == counted_from_runs(database_url, puzzle.id)[0]
    )
    assert store.runs.player_count(puzzle.id) == 3 == counted_from_runs(database_url, puzzle.id)[1]
    assert (store.runs.score_histogram(other.id), store.runs.player_count(other.id)) == ({1: 1}, 1)
    standings = store.runs.standings(puzzle.id)
    assert (standings.histogram, standings.players) == ({7: 2}, 3)


@pytest.mark.parametrize("recorded_first", [True, False])
def test_counts_stay_exact_under_concurrent_runs(
    store: Store, database_url: str, recorded_first: bool
):
    puzzle = daily_puzzle(store)
    # Rounds of four players sending four runs each at the same moment: official candidates
    # and unfinished runs (which no unique index holds apart) of one player race each other.
    threads = 16
    work = [(f"p{number // 4 % 40}", number % 11, number % 3 > 0) for number in range(160)]
    # A run that fails leaves a round one sender short: the wait then breaks and the test
    # fails, where without a timeout it would wait for ever.
    start = threading.Barrier(threads, timeout=60)
    if recorded_first:  # known players: their rows no longer queue new inserts
        for player in {player for player, _, _ in work}:
            store.players.upsert(player)
    # Otherwise each player's first runs race to record them (on PostgreSQL in the run's
    # own statement), and the runs that lose find them recorded.

    def send(player: str, score: int, finished: bool) -> RunRecord:
        start.wait()
        return add(store, puzzle, player, score, finished=finished)

    with ThreadPoolExecutor(threads) as pool:
        runs = list(pool.map(lambda item: send(*item), work))
    assert sum(run.official for run in runs) == len({player for player, _, _ in work})
    assert (
        store.runs.score_histogram(puzzle.id),
        store.runs.player_count(puzzle.id),
    ) == counted_from_runs(database_url, puzzle.id)
    assert store.runs.player_count(puzzle.id) == 40


def test_the_migration_counts_the_runs_already_stored(tmp_path: Path, postgres_factory):
    for url in (f"sqlite:///{tmp_path / 'backfill.sqlite3'}", postgres_factory()):
        upgrade(url, "0001")
        engine = sqlalchemy.create_engine(url)
        with engine.begin() as connection:
            for number in (1, 2):
                connection.execute(
                    sqlalchemy.text(
                        "INSERT INTO puzzles (id, game, seed, rules_version, status, "
                        "created_at, updated_at) VALUES (:id, 'crazy-rally', :seed, 'v1', "
                        "'solved', :t, :t)"
                    ),
                    {"id": number, "seed": f"s{number}", "t": EPOCH},
                )
            connection.execute(
                sqlalchemy.insert(Player),
                [{"id": f"p{number}", "created_at": EPOCH} for number in range(30)],
            )
            connection.execute(
                sqlalchemy.insert(Run),
                [
                    {
                        "id": f"r{number}",
                        "puzzle_id": 1 + number % 2,
                        "player_id": f"p{number % 30}",
                        "actions": [],
                        "score": number % 7 if number % 5 else None,
                        "tiebreak": 0,
                        "finished": bool(number % 5),
                        "official": bool(number % 5) and number < 30,
                        "created_at": EPOCH + timedelta(seconds=number),
                    }
                    for number in range(90)
                ],
            )
        engine.dispose()
        upgrade(url)
        with Store(url) as store:
            for puzzle_id in (1, 2):
                found = (store.runs.score_histogram(puzzle_id), store.runs.player_count(puzzle_id))
                assert found == counted_from_runs(url, puzzle_id)
                assert found[1] > 0


def insert_ranked_runs(store: Store, puzzle: PuzzleRecord, count: int) -> list[dict]:
    """Official runs full of ties: few scores and tie-breaks, times shared by pairs."""
    chance = random.Random(7)
    rows = [
        {
            "id": f"run-{chance.randrange(10**9):09d}",
            "puzzle_id": puzzle.id,
            "player_id": f"p{number}",
            "actions": [],
            "score": chance.randrange(3),
            "tiebreak": chance.randrange(2),
            "finished": True,
            "official": True,
            "created_at": EPOCH + timedelta(seconds=number // 2),
        }
        for number in range(count)
    ]
    with store.database.engine.begin() as connection:
        connection.execute(
            sqlalchemy.insert(Player),
            [{"id": row["player_id"], "created_at": EPOCH} for row in rows],
        )
        connection.execute(sqlalchemy.insert(Run), rows)
    return rows


def test_the_leaderboard_keeps_its_order_on_ties(store: Store):
    puzzle = daily_puzzle(store)
    rows = insert_ranked_runs(store, puzzle, 300)
    expected = sorted(rows, key=lambda r: (-r["score"], -r["tiebreak"], r["created_at"], r["id"]))
    board = store.runs.leaderboard(puzzle.id, limit=len(rows))
    assert [run.id for run in board] == [row["id"] for row in expected]
    assert [run.id for run in store.runs.leaderboard(puzzle.id)] == [
        r["id"] for r in expected[:100]
    ]


def query_plans(store: Store, read: Callable[[], object]) -> list[dict[int, tuple[int, str]]]:
    """SQLite's plan of each SELECT that read() makes: node id -> (parent id, detail)."""
    statements: list[tuple[str, tuple]] = []

    def record(_connection, _cursor, statement, parameters, *_) -> None:
        if statement.startswith("SELECT"):
            statements.append((statement, parameters))

    sqlalchemy.event.listen(store.database.engine, "before_cursor_execute", record)
    read()
    sqlalchemy.event.remove(store.database.engine, "before_cursor_execute", record)
    with store.database.engine.connect() as connection:
        return [
            {
                node: (parent, detail)
                for node, parent, _, detail in connection.exec_driver_sql(
                    "EXPLAIN QUERY PLAN " + statement, parameters
                )
            }
            for statement, parameters in statements
        ]


def test_sqlite_reads_the_leaderboard_and_history_off_their_indexes(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'plans.sqlite3'}"
    upgrade(url)
    with Store(url) as store:
        puzzle = daily_puzzle(store)
        [board] = query_plans(store, lambda: store.runs.leaderboard(puzzle.id))
        [history] = query_plans(store, lambda: store.players.history("p1"))
    details = [detail for _, detail in board.values()]
    assert any("USING INDEX ix_runs_ranking" in detail for detail in details), details
    assert not any("TEMP B-TREE" in detail for detail in details), details
    # The page of runs is read off the index in order; only the page itself is sorted.
    [page] = [node for node, (_, detail) in history.items() if detail.startswith("MATERIALIZE")]
    inside = [detail for parent, detail in history.values() if parent == page]
    assert inside == ["SEARCH runs USING INDEX ix_runs_player_time (player_id=?)"], history


def test_sqlite_finds_a_players_official_run_in_the_unique_index(tmp_path: Path):
    """Every run asks whether its player has an official run of the puzzle: an index seek,
    not a read of each of the player's runs of it."""
    url = f"sqlite:///{tmp_path / 'plans.sqlite3'}"
    upgrade(url)
    with Store(url) as store, store.database.engine.connect() as connection:
        plan = connection.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + store.runs.sql.earlier_runs_of.sql, (1, "p1", 1, "p1")
        )
        searches = [detail for *_, detail in plan if detail.startswith("SEARCH")]
    assert searches == [
        "SEARCH runs USING INDEX ix_runs_player (player_id=? AND puzzle_id=?)",
        "SEARCH runs USING INDEX uq_runs_official_player (puzzle_id=? AND player_id=?)",
    ], searches


def test_standings_are_kept_briefly_and_any_processs_new_run_shows_at_once(
    store: Store, clock, monkeypatch: pytest.MonkeyPatch
):
    puzzle = daily_puzzle(store)
    add(store, puzzle, "p1", 4)
    reads: list[int] = []
    read = store.runs._read_standings

    def counted_read(puzzle_id: int) -> Standings:
        reads.append(puzzle_id)
        return read(puzzle_id)

    monkeypatch.setattr(store.runs, "_read_standings", counted_read)
    assert store.runs.standings(puzzle.id).players == 1
    assert store.runs.standings(puzzle.id).players == 1
    assert len(reads) == 1, "unchanged standings are kept"
    url = store.database.engine.url.render_as_string(hide_password=False)
    with Store(url) as elsewhere:
        add(elsewhere, puzzle, "p2", 5)  # another process's official run
    kept = store.runs.standings(puzzle.id)
    assert (kept.players, [entry.player_id for entry in kept.entries]) == (2, ["p2", "p1"])
    with Store(url) as elsewhere:
        # Another process's run that is not official, by a player new to the puzzle.
        elsewhere.runs.add(
            puzzle, "p3", actions=[1], score=1, tiebreak=0, finished=False, today=DAY
        )
    assert store.runs.standings(puzzle.id).players == 3
    add(store, puzzle, "p4", 6)
    assert store.runs.standings(puzzle.id).players == 4
    reads.clear()
    clock.advance(store.runs.kept_standings.seconds)
    store.runs.standings(puzzle.id)
    assert len(reads) == 1, "kept a moment only"


def test_a_run_the_store_adds_while_its_standings_are_read_shows_at_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    """Under gevent, reading the standings waits on the database and lets other greenlets
    run: a run one of them stores meanwhile must not stay hidden behind what was read."""
    puzzle = daily_puzzle(store)
    add(store, puzzle, "p1", 4)
    read = store.runs._read_standings

    def read_while_another_greenlet_adds_a_run(puzzle_id: int) -> Standings:
        standings = read(puzzle_id)
        add(store, puzzle, "p2", 5)
        return standings

    monkeypatch.setattr(store.runs, "_read_standings", read_while_another_greenlet_adds_a_run)
    assert store.runs.standings(puzzle.id).players == 1  # read before the run was stored
    monkeypatch.undo()
    assert store.runs.standings(puzzle.id).players == 2


def test_a_players_history_comes_newest_first_a_page_at_a_time(store: Store):
    puzzle = daily_puzzle(store)
    runs = [
        add(store, puzzle, "p1", number % 9, finished=False) for number in range(HISTORY_PAGE + 5)
    ]
    add(store, puzzle, "p2", 3)
    first = store.players.history("p1")
    assert [run.id for run in first] == [run.id for run in reversed(runs)][:HISTORY_PAGE]
    rest = store.players.history("p1", before=first[-1].id)
    assert [run.id for run in rest] == [run.id for run in reversed(runs)][HISTORY_PAGE:]
    assert (first[0].game, first[0].seed, first[0].daily_date) == ("crazy-rally", "d-seed", DAY)
    assert store.players.history("p2", before=first[0].id) is None
    assert store.players.history("nobody") == []


def test_the_history_api_shows_the_callers_runs_with_todays_seed_hidden(app: Flask, clock: Clock):
    store: Store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    client = client_of(app)
    assert client.get("/api/v1/players/me/runs").get_json() == {"runs": [], "next": None}
    played = play_attempt(client, puzzle, actions)
    play_attempt(client_of(app), puzzle, actions)
    answer = client.get("/api/v1/players/me/runs")
    assert answer.cache_control.private and answer.cache_control.no_store
    assert puzzle.seed not in answer.get_data(as_text=True)
    history = answer.get_json()
    assert history["next"] is None
    assert [run["id"] for run in history["runs"]] == [played["run"]]
    entry = history["runs"][0]
    assert (entry["seed"], entry["date"]) == (None, daily.today().isoformat())
    assert (entry["score"], entry["official"]) == (played["score"], True)
    assert "actions" not in entry
    missing = client.get("/api/v1/players/me/runs?before=not-mine")
    assert missing.status_code == 404

    clock.set(datetime.combine(puzzle.daily_date + timedelta(days=1), time_of_day.min, UTC))
    [revealed] = client.get("/api/v1/players/me/runs").get_json()["runs"]
    assert (revealed["id"], revealed["seed"]) == (played["run"], puzzle.seed)


def test_official_runs_made_through_attempts_are_counted(make_app, database_url: str):
    app: Flask = make_app(database=database_url)
    store: Store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME)
    game = get_game(puzzle.game)
    board = f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/leaderboard"
    client = client_of(app)
    assert client.get(board).get_json()["players"] == 0  # kept a second: the runs drop it
    for variant in range(3):
        play_attempt(client_of(app), puzzle, finished_run(game, puzzle.seed, variant))
    histogram, players = counted_from_runs(database_url, puzzle.id)
    assert players == 3 and sum(histogram.values()) == 3
    standings = client.get(board).get_json()
    assert standings["players"] == players
    assert {row["score"]: row["count"] for row in standings["histogram"]} == histogram
    assert len(standings["entries"]) == 3
