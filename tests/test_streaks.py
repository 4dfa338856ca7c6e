"""Each player's latest streak, kept as official runs are stored (service.storage.streaks):
the same current streak `GET /me` counts from the whole history, and filled by migration
0008 from the runs stored before it."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy

from service.domain import daily
from service.domain.history import streaks
from service.storage.migrations import upgrade
from service.storage.models import Streak
from service.storage.store import Store
from service.storage.streaks import current_length

GAME = "crazy-rally"
FIRST = date(2026, 11, 10)


def kept(store: Store, player: str) -> tuple[int, int] | None:
    with store.database.engine.connect() as connection:
        row = connection.execute(
            sqlalchemy.select(Streak.first_number, Streak.last_number).filter_by(
                player_id=player, game=GAME
            )
        ).first()
    return None if row is None else (row[0], row[1])


def official_run(store: Store, player: str, day: date) -> None:
    puzzle = store.puzzles.ensure(GAME, f"s-{day}", "cr-2", day, daily.puzzle_number(day))
    run = store.runs.add(puzzle, player, actions=[], score=5, tiebreak=0, finished=True, today=day)
    assert run.official


def test_the_kept_streak_is_the_streak_me_counts(store: Store):
    chance = random.Random(8)
    played: list[date] = []
    for offset in range(60):
        day = FIRST + timedelta(days=offset)
        if chance.random() < 0.75:
            official_run(store, "ada", day)
            played.append(day)
        # An unfinished run and a practice run of the day change nothing.
        puzzle = store.puzzles.ensure(GAME, f"s-{day}", "cr-2", day, daily.puzzle_number(day))
        store.runs.add(puzzle, "ada", actions=[], score=None, tiebreak=0, finished=False, today=day)
        for today in (day, day + timedelta(days=1), day + timedelta(days=2)):
            found = kept(store, "ada")
            length = 0 if found is None else current_length(*found, daily.puzzle_number(today))
            assert length == streaks(played, today).current, (day, today)


def test_a_second_official_run_of_a_day_keeps_the_streak(store: Store):
    """A day can have two dailies of a game (its rules changed that day): the second
    official run is the same day of the streak."""
    official_run(store, "ada", FIRST)
    day = FIRST + timedelta(days=1)
    official_run(store, "ada", day)
    newer = store.puzzles.ensure(GAME, f"new-{day}", "cr-3", day, daily.puzzle_number(day))
    store.runs.add(newer, "ada", actions=[], score=5, tiebreak=0, finished=True, today=day)
    number = daily.puzzle_number(FIRST)
    assert kept(store, "ada") == (number, number + 1)


def test_migration_0008_keeps_each_players_latest_streak_of_the_runs_stored_before(
    tmp_path: Path,
):
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    upgrade(url, "0006")
    engine = sqlalchemy.create_engine(url)
    days = {
        "ada": [0, 1, 2, 5, 6, 7, 8],  # her latest streak: days 5 to 8
        "ben": [3],
        "cleo": [],  # a practice run only
    }
    moment = datetime(2026, 12, 1, tzinfo=UTC)
    with engine.begin() as connection:
        for offset in range(10):
            day = FIRST + timedelta(days=offset)
            connection.exec_driver_sql(
                "INSERT INTO puzzles (id, game, seed, rules_version, daily_date, number, status, "
                "created_at, updated_at) VALUES (?, ?, ?, 'cr-2', ?, ?, 'solved', ?, ?)",
                (
                    offset + 1,
                    GAME,
                    f"s{offset}",
                    day.isoformat(),
                    daily.puzzle_number(day),
                    moment,
                    moment,
                ),
            )
        for player, played in days.items():
            connection.exec_driver_sql(
                "INSERT INTO players (id, created_at) VALUES (?, ?)", (player, moment)
            )
            for offset in played:
                connection.exec_driver_sql(
                    "INSERT INTO runs (id, puzzle_id, player_id, actions, score, tiebreak, "
                    "finished, official, created_at) VALUES (?, ?, ?, '[]', 5, 0, 1, 1, ?)",
                    (f"{player}-{offset}", offset + 1, player, moment),
                )
        connection.exec_driver_sql(
            "INSERT INTO runs (id, puzzle_id, player_id, actions, score, tiebreak, finished, "
            "official, created_at) VALUES ('practice', 4, 'cleo', '[]', 5, 0, 1, 0, ?)",
            (moment,),
        )
    engine.dispose()
    upgrade(url)
    with Store(url) as store:
        number = daily.puzzle_number(FIRST)
        assert kept(store, "ada") == (number + 5, number + 8)
        assert kept(store, "ben") == (number + 3, number + 3)
        assert kept(store, "cleo") is None


@pytest.mark.parametrize("offset", [1, 2])
def test_a_streak_lives_through_the_next_day_and_ends_after_it(offset: int):
    assert current_length(10, 14, 14 + offset) == (5 if offset == 1 else 0)
