"""The store on SQLite and on PostgreSQL: migrations, puzzles exactly once, official runs."""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from bench.round_trips import count_round_trips, sent_by
from service.storage.database import PoolSettings
from service.storage.migrations import alembic_config, upgrade
from service.storage.models import Base
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store

DAY = date(2026, 11, 30)


def daily_puzzle(store: Store, day: date = DAY, seed: str = "d-seed") -> PuzzleRecord:
    return store.puzzles.ensure("crazy-rally", seed, "v1", daily_date=day, number=30)


def add_finished(store: Store, puzzle: PuzzleRecord, player: str, score: int, **extra):
    return store.runs.add(
        puzzle, player, actions=[score], score=score, tiebreak=0, finished=True, today=DAY, **extra
    )


def test_migrations_build_exactly_the_models(database_url: str):
    engine = sqlalchemy.create_engine(database_url)
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    engine.dispose()
    assert differences == []


def test_migrations_downgrade_and_upgrade_again(tmp_path: Path, postgres_factory):
    for url in (f"sqlite:///{tmp_path / 'again.sqlite3'}", postgres_factory()):
        upgrade(url)
        command.downgrade(alembic_config(url), "base")
        upgrade(url)
        with Store(url) as store:
            assert store.puzzles.ensure("crazy-rally", "s", "v1").status == "pending"


def test_sqlite_runs_in_wal_mode(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'wal.sqlite3'}"
    upgrade(url)
    with Store(url) as store, store.database.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_a_new_puzzle_is_recorded_once_as_pending(store: Store):
    with ThreadPoolExecutor(8) as pool:
        found = list(
            pool.map(lambda _: store.puzzles.ensure("rallye-raser", "s1", "v1"), range(16))
        )
    assert {puzzle.id for puzzle in found} == {found[0].id}
    assert found[0].status == "pending"
    assert found[0].optimum is None
    assert store.puzzles.pending() == [found[0]]
    assert store.puzzles.get("rallye-raser", "s1", "v2") is None


def test_a_solution_is_stored_once_and_never_overwritten(store: Store):
    puzzle = store.puzzles.ensure("rallye-raser", "s1", "v1")
    first: dict[str, Any] = {"optimum": 7, "tiebreak": -9, "witness": [{"a": 1}], "proved": True}
    assert store.puzzles.record_solution(puzzle.id, **first, solve_seconds=0.5)
    assert not store.puzzles.record_solution(
        puzzle.id, optimum=3, tiebreak=0, witness=[], proved=False, solve_seconds=1.0
    )
    assert not store.puzzles.record_failure(puzzle.id, "too late")
    stored = store.puzzles.by_id(puzzle.id)
    assert stored is not None
    assert (stored.status, stored.optimum, stored.tiebreak) == ("solved", 7, -9)
    assert (stored.witness, stored.proved, stored.error) == ([{"a": 1}], True, None)
    assert store.puzzles.pending() == []


def test_a_failed_puzzle_can_still_be_solved_by_a_retry(store: Store):
    puzzle = store.puzzles.ensure("rallye-raser", "s1", "v1")
    assert store.puzzles.record_failure(puzzle.id, "solver timed out")
    assert store.puzzles.by_id(puzzle.id).error == "solver timed out"
    assert store.puzzles.record_solution(
        puzzle.id, optimum=None, tiebreak=None, witness=[], proved=True, solve_seconds=2.0
    )
    solved = store.puzzles.by_id(puzzle.id)
    assert (solved.status, solved.optimum, solved.error) == ("solved", None, None)


def test_daily_puzzles_of_a_date(store: Store):
    today = daily_puzzle(store)
    tomorrow = daily_puzzle(store, DAY + timedelta(days=1), seed="other")
    store.puzzles.ensure("crazy-rally", "practice", "v1")
    assert store.puzzles.dailies(DAY) == [today]
    assert store.puzzles.dailies(DAY + timedelta(days=1)) == [tomorrow]
    assert (today.game, today.seed, today.number, today.daily_date, today.status) == (
        "crazy-rally",
        "d-seed",
        30,
        DAY,
        "pending",
    )


def test_the_first_finished_run_of_a_daily_on_its_day_is_official(store: Store):
    puzzle = daily_puzzle(store)
    unfinished = store.runs.add(
        puzzle, "p1", actions=[], score=None, tiebreak=0, finished=False, today=DAY
    )
    first = add_finished(store, puzzle, "p1", 5)
    second = add_finished(store, puzzle, "p1", 9)
    late = store.runs.add(
        puzzle, "p2", actions=[1], score=8, tiebreak=0, finished=True, today=DAY + timedelta(1)
    )
    assert [unfinished.official, first.official, second.official, late.official] == [
        False,
        True,
        False,
        False,
    ]
    assert store.runs.get(second.id) == second


def test_practice_puzzles_have_no_official_runs(store: Store):
    practice = store.puzzles.ensure("crazy-rally", "practice", "v1")
    assert not add_finished(store, practice, "p1", 5).official


def test_concurrent_submissions_make_exactly_one_official_run(store: Store):
    puzzle = daily_puzzle(store)
    with ThreadPoolExecutor(8) as pool:
        runs = list(pool.map(lambda score: add_finished(store, puzzle, "p1", score), range(16)))
    assert sum(run.official for run in runs) == 1
    assert len({run.id for run in runs}) == 16
    assert store.runs.player_count(puzzle.id) == 1  # one new player, whichever run recorded them


def test_a_run_of_a_player_recorded_before_is_stored_once_whichever_way_it_comes(store: Store):
    """A run from a player not known to be recorded is first tried with the player in one
    statement on PostgreSQL; a player found recorded then stores it in the transaction that
    locks them: once, under the name they have or are given, counted once."""
    puzzle = daily_puzzle(store)
    first = add_finished(store, puzzle, "p1", 5, display_name="Ada")
    again = add_finished(store, puzzle, "p1", 6)
    renamed = add_finished(store, puzzle, "p1", 7, display_name="Grace")
    known = add_finished(store, puzzle, "p1", 8, known_player=True)
    runs = [first, again, renamed, known]
    assert [run.official for run in runs] == [True, False, False, False]
    assert [run.display_name for run in runs] == ["Ada", "Ada", "Grace", "Grace"]
    assert [run.id for run in store.players.history("p1")] == [run.id for run in runs[::-1]]
    assert all(store.runs.get(run.id) == run for run in runs)
    assert store.runs.player_count(puzzle.id) == 1
    assert store.runs.score_histogram(puzzle.id) == {5: 1}
    assert store.players.count() == 1


def test_a_known_players_concurrent_runs_each_wait_for_the_one_before(store: Store):
    """A known player's run looks for their earlier runs only once their row is locked (and
    renamed): of eight first runs of one practice puzzle sent at the same moment (sixteen
    puzzles in turn), which no unique index holds apart, only one counts the player, and
    each run keeps the name it came with."""
    senders = 8
    puzzles = [store.puzzles.ensure("crazy-rally", f"race-{number}", "v1") for number in range(16)]
    store.players.upsert("p1", "Ada")
    # A run that fails leaves a round one sender short: the wait then breaks.
    start = threading.Barrier(senders, timeout=60)

    def send(puzzle: PuzzleRecord, score: int) -> Any:
        start.wait()
        return store.runs.add(
            puzzle,
            "p1",
            actions=[score],
            score=score,
            tiebreak=0,
            finished=True,
            display_name=f"n{score}",
            known_player=True,
        )

    work = [(puzzle, score) for puzzle in puzzles for score in range(senders)]
    with ThreadPoolExecutor(senders) as pool:
        runs = list(pool.map(lambda item: send(*item), work))
    assert [store.runs.player_count(puzzle.id) for puzzle in puzzles] == [1] * len(puzzles)
    assert [run.display_name for run in runs] == [f"n{run.score}" for run in runs]
    assert all(store.runs.get(run.id) == run for run in runs)


def test_a_known_players_run_keeps_every_character_and_a_failed_one_renames_nobody(
    store: Store,
):
    """On PostgreSQL a known player's rename and run go to the server as one text, values
    and all: what was sent reads back as it was, and a run that cannot be stored leaves
    the player's name as it was."""
    practice = store.puzzles.ensure("crazy-rally", "practice", "v1")
    store.players.upsert("p1", "Ada")
    name = "O'Brien %(name)s \\ ;"
    actions: list[Any] = ["it's", "50%", "%s", "back\\slash", {"q": '"; DROP TABLE runs; --'}]
    run = store.runs.add(
        practice,
        "p1",
        actions=actions,
        score=3,
        tiebreak=0,
        finished=True,
        display_name=name,
        known_player=True,
    )
    assert store.runs.get(run.id) == run
    assert (run.actions, run.display_name, store.players.display_name("p1")) == (
        actions,
        name,
        name,
    )
    missing = replace(practice, id=practice.id + 1000)  # a run's puzzle must be recorded
    with pytest.raises(sqlalchemy.exc.IntegrityError):
        store.runs.add(
            missing,
            "p1",
            actions=[],
            score=1,
            tiebreak=0,
            finished=True,
            display_name="Ben",
            known_player=True,
        )
    assert store.players.display_name("p1") == name
    assert [each.id for each in store.players.history("p1") or []] == [run.id]


def test_on_postgresql_a_players_run_is_one_statement_new_or_known(postgres_url: str):
    """A first visit's run and a known player's, renamed or not, are each one round trip:
    no BEGIN, no COMMIT. A known player's statements are prepared once on a connection, in
    a message of their own before its first such run."""
    with Store(postgres_url, PoolSettings(size=1)) as store:
        count_round_trips(store.database.engine)
        puzzle = daily_puzzle(store, seed="round-trips")
        player = f"p-{secrets.token_hex(4)}"
        new = sent_by(lambda: add_finished(store, puzzle, player, 5))
        first = sent_by(lambda: add_finished(store, puzzle, player, 6, known_player=True))
        known = sent_by(lambda: add_finished(store, puzzle, player, 7, known_player=True))
        renamed = sent_by(
            lambda: add_finished(store, puzzle, player, 8, display_name="Ada", known_player=True)
        )
        assert store.runs.player_count(puzzle.id) == 1
        assert store.players.display_name(player) == "Ada"
    for sent in (new, known, renamed):
        assert (sent["statements"], sent["BEGIN"], sent["COMMIT"], sent["ROLLBACK"]) == (1, 0, 0, 0)
    assert (first["statements"], first["BEGIN"], first["COMMIT"]) == (2, 0, 0)


def prepared_statements(store: Store) -> dict[str, tuple[int, str]]:
    """The statements prepared on the connection of store's one-connection pool, by name:
    how many times each ran, and the text the server keeps of it."""
    with store.database.read() as connection:
        rows = connection.exec_driver_sql(
            "SELECT name, generic_plans + custom_plans, statement FROM pg_prepared_statements"
        )
        return {name: (count, text) for name, count, text in rows}


def prepared_runs(store: Store) -> list[int]:
    """How many times each statement of a known player's run (the lock, then the run) ran
    prepared on the connection of store's one-connection pool: none when not prepared."""
    held = prepared_statements(store)
    together = store.runs.sql.insert_locked
    assert together is not None, "PostgreSQL's"
    return [held.get(statement.name, (0, ""))[0] for statement in together.prepared]


def test_on_postgresql_a_known_players_run_executes_statements_prepared_once(postgres_url: str):
    """A known player's lock and run are prepared once on a connection and then only
    executed: the server does not parse and plan their text on every run."""
    with Store(postgres_url, PoolSettings(size=1)) as store:
        puzzle = store.puzzles.ensure("crazy-rally", "prepared", "v1")
        player = f"p-{secrets.token_hex(4)}"
        store.players.upsert(player)
        for score, name in [(1, None), (2, "Ada"), (3, None)]:
            add_finished(store, puzzle, player, score, display_name=name, known_player=True)
        assert prepared_runs(store) == [3, 3]
        assert store.players.display_name(player) == "Ada"
        # What the server keeps of them for the connection's life holds no run's values.
        assert not any(player in text for _, text in prepared_statements(store).values())


def test_on_postgresql_a_connection_that_lost_its_prepared_statements_prepares_them_again(
    postgres_url: str,
):
    """Statements the server's session no longer holds (a DEALLOCATE ALL, a new session
    behind a new connection) or holds unbeknown to the connection are prepared again, and
    the run is stored once."""
    with Store(postgres_url, PoolSettings(size=1)) as store:
        puzzle = store.puzzles.ensure("crazy-rally", "lost", "v1")
        player = f"p-{secrets.token_hex(4)}"
        store.players.upsert(player)
        add_finished(store, puzzle, player, 1, known_player=True)
        with store.database.read() as connection:
            connection.exec_driver_sql("DEALLOCATE ALL")
        add_finished(store, puzzle, player, 2, known_player=True)
        assert prepared_runs(store) == [1, 1]
        with store.database.read() as connection:
            connection.info.clear()  # the connection's record of them, not the server's
        add_finished(store, puzzle, player, 3, known_player=True)
        assert prepared_runs(store) == [2, 2]
        with store.database.read() as connection:
            connection.invalidate()  # the next checkout opens a new session
        add_finished(store, puzzle, player, 4, known_player=True)
        assert prepared_runs(store) == [1, 1]
        assert [run.score for run in store.players.history(player) or []] == [4, 3, 2, 1]
        assert store.runs.player_count(puzzle.id) == 1


def test_leaderboard_ranks_official_runs_by_score_tiebreak_and_time(store: Store):
    puzzle = daily_puzzle(store)
    store.players.upsert("early", "Ada")
    for player, score, tiebreak in [("low", 3, 9), ("early", 8, 2), ("late", 8, 2), ("best", 8, 5)]:
        store.runs.add(
            puzzle, player, actions=[], score=score, tiebreak=tiebreak, finished=True, today=DAY
        )
    add_finished(store, puzzle, "best", 99)  # a later practice run does not count
    board = store.runs.leaderboard(puzzle.id)
    assert [run.player_id for run in board] == ["best", "early", "late", "low"]
    assert board[1].display_name == "Ada"
    assert store.runs.score_histogram(puzzle.id) == {3: 1, 8: 3}
    assert store.runs.player_count(puzzle.id) == 4
    assert store.players.count() == 4


def test_a_display_name_is_kept_until_replaced_and_runs_keep_theirs(store: Store):
    puzzle = daily_puzzle(store)
    first = add_finished(store, puzzle, "p1", 1, display_name="Ada")
    store.players.upsert("p1")
    assert store.players.display_name("p1") == "Ada"
    run = add_finished(store, puzzle, "p1", 2, display_name="Grace")
    assert run.display_name == "Grace"
    assert store.players.display_name("p1") == "Grace"
    assert store.runs.get(first.id).display_name == "Ada"
    assert [entry.display_name for entry in store.runs.leaderboard(puzzle.id)] == ["Ada"]


def test_a_par_is_stored_once_beside_the_optimum(store: Store):
    puzzle = daily_puzzle(store)
    assert not puzzle.has_par
    assert (puzzle.par, puzzle.par_tiebreak, puzzle.par_line) == (None, None, None)
    assert store.puzzles.record_par(puzzle.id, par=17, tiebreak=-20, line=[{"a": 1}], seconds=4.5)
    assert not store.puzzles.record_par(puzzle.id, par=18, tiebreak=-15, line=[], seconds=1.0)
    stored = store.puzzles.by_id(puzzle.id)
    assert stored.has_par
    assert (stored.par, stored.par_tiebreak, stored.par_line, stored.par_seconds) == (
        17,
        -20,
        [{"a": 1}],
        4.5,
    )
    assert stored.status == "pending"  # the par and the optimum are stored apart


def test_a_par_run_that_does_not_finish_is_a_computed_par_of_null(store: Store):
    puzzle = store.puzzles.ensure("rallye-raser", "no-finish", "v1")
    assert store.puzzles.record_par(
        puzzle.id, par=None, tiebreak=None, line=[{"a": 2}], seconds=1.0
    )
    stored = store.puzzles.by_id(puzzle.id)
    assert stored.has_par and stored.par is None


def test_an_analysis_is_recorded_once_then_settled_once(store: Store):
    run = add_finished(store, daily_puzzle(store), "p1", 5)
    assert store.analyses.get(run.id) is None
    with ThreadPoolExecutor(8) as pool:
        asked = list(pool.map(lambda seed: store.analyses.request(run.id, seed), range(8)))
    assert {(found.status, found.rng_seed) for found in asked} == {("pending", asked[0].rng_seed)}
    assert store.analyses.record(run.id, {"decisions": [], "total": 3}, seconds=2.5)
    assert not store.analyses.record(run.id, {"decisions": [1]}, seconds=9.0)
    assert not store.analyses.record_failure(run.id, "too late")
    done = store.analyses.get(run.id)
    assert (done.status, done.analysis, done.seconds, done.error) == (
        "done",
        {"decisions": [], "total": 3},
        2.5,
        None,
    )
    assert store.analyses.request(run.id, 7) == done


def test_a_failed_analysis_keeps_its_reason(store: Store):
    run = add_finished(store, daily_puzzle(store), "p1", 5)
    store.analyses.request(run.id, 0)
    assert store.analyses.record_failure(run.id, "over the time bound")
    failed = store.analyses.get(run.id)
    assert (failed.status, failed.error, failed.analysis) == ("failed", "over the time bound", None)


def test_a_known_player_is_locked_or_renamed_first_and_recorded_only_when_missing(store: Store):
    """record_and_lock with known=True (a cookie came with the request) ends as without it:
    a missing player is recorded (True), a recorded one kept or renamed (False)."""
    players = store.players
    for known in (False, True):
        player = f"player-{known}"
        with store.database.write() as connection:
            assert players.record_and_lock(connection, player, None, known) is True
        with store.database.write() as connection:
            assert players.record_and_lock(connection, player, None, known) is False
        assert players.display_name(player) is None
        with store.database.write() as connection:
            assert players.record_and_lock(connection, player, "Ada", known) is False
        assert players.display_name(player) == "Ada"
        with store.database.write() as connection:
            assert players.record_and_lock(connection, player, None, known) is False
        assert players.display_name(player) == "Ada"
        with store.database.write() as connection:
            assert players.record_and_lock(connection, f"{player}-named", "Ben", known) is True
        assert players.display_name(f"{player}-named") == "Ben"
