"""The caller's history and stats (`GET /api/v1/me`): streaks at day boundaries as the
service's clock crosses them, distances to the optimum, and a long history read off its
index without replaying a run."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from datetime import time as time_of_day
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from flask import Flask
from flask.testing import FlaskClient

from puzzles import GAMES, get_game
from service.clock import Clock
from service.domain.history import streaks
from service.storage.migrations import upgrade
from service.storage.players import PlayerSummary
from service.storage.store import Store
from tests.api_support import (
    FINISHING_GAME,
    append_line,
    client_of,
    finished_run,
    play_attempt,
    start_attempt,
    todays_daily,
)

DAY = date(2026, 12, 10)
OTHER_GAME = next(name for name in sorted(GAMES) if name != FINISHING_GAME)


def at(day: date, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime.combine(day, time_of_day(hour, minute, second), UTC)


def me(client: FlaskClient) -> dict[str, Any]:
    answer = client.get("/api/v1/me")
    assert answer.status_code == 200
    assert answer.cache_control.private and answer.cache_control.no_store
    return answer.get_json()


def streak_of(client: FlaskClient, game: str = FINISHING_GAME) -> tuple[int, int, int]:
    stats = me(client)["games"][game]
    return stats["current_streak"], stats["best_streak"], stats["days_played"]


def play_day(client: FlaskClient, store: Store, day: date) -> dict[str, Any]:
    puzzle = todays_daily(store, FINISHING_GAME, day)
    return play_attempt(client, puzzle, finished_run(get_game(FINISHING_GAME), puzzle.seed))


def test_streaks_count_runs_finished_on_their_day(app: Flask, api_store: Store, clock: Clock):
    client = client_of(app)
    clock.set(at(DAY, 23, 59, 30))
    assert streak_of(client) == (0, 0, 0)
    first = play_day(client, api_store, DAY)
    assert api_store.runs.get(first["run"]).official
    assert streak_of(client) == (1, 1, 1)
    # Past midnight the streak stays alive while the new day's daily may be played.
    clock.set(at(DAY + timedelta(days=1)))
    assert streak_of(client) == (1, 1, 1)
    play_day(client, api_store, DAY + timedelta(days=1))
    assert streak_of(client) == (2, 2, 2)
    clock.set(at(DAY + timedelta(days=2), 23, 59, 59))
    assert streak_of(client) == (2, 2, 2)
    # A day missed: at its end the streak is over, the best stays.
    clock.set(at(DAY + timedelta(days=3)))
    assert streak_of(client) == (0, 2, 2)


def test_a_run_finished_after_its_day_does_not_count(app: Flask, api_store: Store, clock: Clock):
    client = client_of(app)
    clock.set(at(DAY, 12))
    play_day(client, api_store, DAY)
    late_day = DAY + timedelta(days=1)
    puzzle = todays_daily(api_store, FINISHING_GAME, late_day)
    actions = finished_run(get_game(FINISHING_GAME), puzzle.seed)
    clock.set(at(late_day, 23, 59, 50))
    begun = start_attempt(client, puzzle).get_json()
    append = f"/api/v1/attempts/{begun['attempt']}/actions"
    assert client.post(append, json={"played": 0, "actions": actions[:1]}).status_code == 200
    clock.set(at(late_day + timedelta(days=1), 0, 0, 1))
    over = append_line(client, puzzle, {**begun, "played": 1}, actions)
    assert over["finished"] and not api_store.runs.get(over["run"]).official
    assert streak_of(client) == (0, 1, 1)
    assert [run["date"] for run in me(client)["runs"]] == [DAY.isoformat()]


def test_me_lists_the_official_runs_with_their_optimum_and_name(
    app: Flask, api_store: Store, clock: Clock, document_schemas: jsonschema_rs.Validator
):
    client = client_of(app)
    clock.set(at(DAY, 9))
    assert me(client) == {
        "name": None,
        "today": DAY.isoformat(),
        "attempts": [],
        "runs": [],
        "games": {
            game: {
                "days_played": 0,
                "current_streak": 0,
                "best_streak": 0,
                "to_optimum": {"mean": None, "histogram": []},
                "to_par": {"mean": None, "histogram": []},
            }
            for game in sorted(GAMES)
        },
        "leagues": [],
    }
    puzzle = todays_daily(api_store, FINISHING_GAME, DAY)
    actions = finished_run(get_game(FINISHING_GAME), puzzle.seed)
    played = play_attempt(client, puzzle, actions, name="Ada")
    answer = me(client)
    document_schemas.validate(answer)
    assert answer["name"] == "Ada"
    assert answer["attempts"] == [
        {
            "game": FINISHING_GAME,
            "number": puzzle.number,
            "over": True,
            "run": played["run"],
            "score": played["score"],
            "official": True,
        }
    ]
    assert answer["runs"] == [
        {
            "id": played["run"],
            "date": DAY.isoformat(),
            "game": FINISHING_GAME,
            "number": puzzle.number,
            "score": played["score"],
            "tiebreak": played["tiebreak"],
            "optimum": None,
            "par": None,
        }
    ]
    assert answer["games"][FINISHING_GAME]["to_optimum"] == {"mean": None, "histogram": []}
    optimum = played["score"] + 3
    api_store.puzzles.record_solution(
        puzzle.id, optimum=optimum, tiebreak=0, witness=[], proved=True, solve_seconds=1.0
    )
    solved = me(client)
    assert solved["runs"][0]["optimum"] == optimum
    assert solved["games"][FINISHING_GAME]["to_optimum"] == {
        "mean": 3.0,
        "histogram": [{"distance": 3, "runs": 1}],
    }
    # Par, once computed, beside the optimum; a run may beat it.
    api_store.puzzles.record_par(
        puzzle.id, par=played["score"] - 2, tiebreak=0, line=[], seconds=1.0
    )
    with_par = me(client)
    assert with_par["runs"][0]["par"] == played["score"] - 2
    assert with_par["games"][FINISHING_GAME]["to_par"] == {
        "mean": -2.0,
        "histogram": [{"distance": -2, "runs": 1}],
    }
    # Another player's run and a practice run of the same daily are not the caller's.
    play_attempt(client_of(app), puzzle, actions)
    practice = client.post(
        f"/api/v1/puzzles/{FINISHING_GAME}/a-practice-seed/runs",
        json={"actions": finished_run(get_game(FINISHING_GAME), "a-practice-seed")},
    )
    assert practice.status_code == 201
    assert [run["id"] for run in me(client)["runs"]] == [played["run"]]


@pytest.fixture
def document_schemas(app: Flask) -> jsonschema_rs.Validator:
    """A validator of the Me schema of the served OpenAPI document."""
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    schemas = document["components"]["schemas"]
    return jsonschema_rs.validator_for({**schemas["Me"], "$defs": schemas}, validate_formats=True)


HISTORY_DAYS = 300
# Days (before today) with no official run: the streaks between them are 149, 129 and 20 days.
MISSED = {150, 20}


def long_history(store: Store, player: str, today: date) -> list[tuple[date, int]]:
    """Official runs of player on every one of the last HISTORY_DAYS days but MISSED, the
    optimum known on all but every tenth day; a practice run and a late run beside them.
    Returns (day, distance to the optimum) of the days solved."""
    solved = []
    for back in range(HISTORY_DAYS):
        day = today - timedelta(days=back)
        puzzle = store.puzzles.ensure(
            FINISHING_GAME, f"h-{back}", "v1", daily_date=day, number=back
        )
        if back in MISSED:
            store.runs.add(
                puzzle,
                player,
                actions=[],
                score=9,
                tiebreak=0,
                finished=True,
                today=day + timedelta(days=1),
            )
            continue
        score = 10 + back % 7
        run = store.runs.add(
            puzzle, player, actions=[], score=score, tiebreak=back % 3, finished=True, today=day
        )
        assert run.official
        store.runs.add(puzzle, player, actions=[], score=1, tiebreak=0, finished=True, today=day)
        if back % 10:
            store.puzzles.record_solution(
                puzzle.id, optimum=20, tiebreak=0, witness=[], proved=True, solve_seconds=0.1
            )
            solved.append((day, 20 - score))
    return solved


def test_a_long_history_is_read_without_replaying_a_run(
    app: Flask, api_store: Store, clock: Clock, monkeypatch: pytest.MonkeyPatch
):
    client = client_of(app)
    clock.set(at(DAY, 15))
    player = client.post(
        f"/api/v1/puzzles/{FINISHING_GAME}/a-practice-seed/runs",
        json={"actions": finished_run(get_game(FINISHING_GAME), "a-practice-seed")},
    )
    player_id = api_store.runs.get(player.get_json()["id"]).player_id
    solved = long_history(api_store, player_id, DAY)
    for game in GAMES.values():
        monkeypatch.setattr(game, "replay", refuse_replay)
    answer = me(client)
    stats = answer["games"][FINISHING_GAME]
    assert (stats["current_streak"], stats["best_streak"]) == (20, 149)
    assert stats["days_played"] == HISTORY_DAYS - len(MISSED) == len(answer["runs"])
    distances = [distance for _, distance in solved]
    histogram = [{"distance": d, "runs": distances.count(d)} for d in sorted(set(distances))]
    assert stats["to_optimum"] == {
        "mean": round(sum(distances) / len(distances), 3),
        "histogram": histogram,
    }
    dates = [run["date"] for run in answer["runs"]]
    assert dates == sorted(dates, reverse=True)
    assert answer["games"][OTHER_GAME]["days_played"] == 0


def refuse_replay(*_args: object) -> None:
    raise AssertionError("the history replayed a run")


def test_sqlite_reads_the_official_runs_off_their_index(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'plans.sqlite3'}"
    upgrade(url)
    with Store(url) as store, store.database.engine.connect() as connection:
        plan = connection.exec_driver_sql(
            "EXPLAIN QUERY PLAN " + store.players.sql.official_runs_of.sql, ("p1",)
        )
        details = [detail for *_, detail in plan]
    assert details[:2] == [
        "SEARCH runs USING COVERING INDEX ix_runs_player_official (player_id=?)",
        "SEARCH puzzles USING INTEGER PRIMARY KEY (rowid=?)",
    ], details


@pytest.mark.parametrize(
    ("days", "today", "expected"),
    [
        ([], DAY, (0, 0)),
        ([DAY], DAY, (1, 1)),
        ([DAY - timedelta(days=1)], DAY, (1, 1)),
        ([DAY - timedelta(days=2)], DAY, (0, 1)),
        # Two puzzles of one day (say under two rules versions) count as one day.
        ([DAY, DAY, DAY - timedelta(days=1)], DAY, (2, 2)),
        ([DAY - timedelta(days=n) for n in (0, 1, 3, 4, 5)], DAY, (2, 3)),
    ],
)
def test_streaks(days: list[date], today: date, expected: tuple[int, int]):
    found = streaks(days, today)
    assert (found.current, found.best) == expected


def test_the_store_reads_only_official_runs_newest_day_first(store: Store):
    first, second = (
        store.puzzles.ensure(
            FINISHING_GAME, f"s-{n}", "v1", daily_date=DAY + timedelta(n), number=n
        )
        for n in (0, 1)
    )
    other = store.puzzles.ensure(OTHER_GAME, "s-2", "v1", daily_date=DAY, number=0)
    practice = store.puzzles.ensure(FINISHING_GAME, "s-3", "v1")
    for puzzle in (first, second, other):
        store.runs.add(
            puzzle, "p1", actions=[], score=5, tiebreak=1, finished=True, today=puzzle.daily_date
        )
    store.runs.add(first, "p1", actions=[], score=7, tiebreak=1, finished=True, today=DAY)
    store.runs.add(practice, "p1", actions=[], score=7, tiebreak=1, finished=True, today=DAY)
    store.runs.add(first, "p2", actions=[], score=7, tiebreak=1, finished=True, today=DAY)
    store.puzzles.record_solution(
        first.id, optimum=9, tiebreak=2, witness=[], proved=True, solve_seconds=1
    )
    summary = store.players.summary("p1", DAY)
    runs = summary.official_runs
    assert summary.name is None
    assert [(run.daily_date, run.game, run.optimum) for run in runs] == [
        (second.daily_date, FINISHING_GAME, None),
        (DAY, FINISHING_GAME, 9),
        (DAY, OTHER_GAME, None),
    ]
    assert {(run.score, run.tiebreak, run.par) for run in runs} == {(5, 1, None)}
    assert store.players.summary("nobody", DAY) == PlayerSummary(None, [], [])


def test_todays_attempts_say_what_the_home_page_shows(app: Flask, api_store: Store, clock: Clock):
    client = client_of(app)
    clock.set(at(DAY, 10))
    puzzle = todays_daily(api_store, FINISHING_GAME, DAY)
    begun = start_attempt(client, puzzle).get_json()
    assert me(client)["attempts"] == [
        {
            "game": FINISHING_GAME,
            "number": puzzle.number,
            "over": False,
            "run": None,
            "score": None,
            "official": False,
        }
    ]
    # Yesterday's attempts are not today's.
    clock.set(at(DAY + timedelta(days=1), 0, 0, 1))
    assert me(client)["attempts"] == []
    assert begun["run"] is None
