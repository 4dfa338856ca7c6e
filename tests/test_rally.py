"""The weekend rally of Crazy Rally (rule CR-22, docs/rules/crazy-rally.md): the stages
summed, a stage not finished ending the rally, ties broken by the last stage, the optimum and
par summed, and the standings at the week's edges, for everyone and per league."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from datetime import time as time_of_day
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from puzzles import get_game
from service.clock import Clock
from service.domain import daily, rally
from service.domain.leagues import (
    MAX_LEAGUES_PER_PLAYER,
    MAX_MEMBERS,
    invite_hash,
    new_invite_salt,
    new_member_handle,
)
from service.storage.league_reads import OfficialResult
from service.storage.rally import StagePlay
from service.storage.store import Store
from tests.api_support import (
    client_of,
    finished_run,
    play_attempt,
    start_attempt,
    todays_daily,
    unfinished_run,
)

GAME = rally.RALLY_GAME
FRIDAY = date(2026, 12, 4)
SATURDAY, SUNDAY, MONDAY = (FRIDAY + timedelta(days=n) for n in (1, 2, 3))


def at(day: date, hour: int = 12, minute: int = 0, second: int = 0) -> datetime:
    return datetime.combine(day, time_of_day(hour, minute, second), UTC)


def stage(store: Store, day: date) -> Any:
    return todays_daily(store, GAME, day)


def finish(client: FlaskClient, store: Store, clock: Clock, day: date, variant: int = 0) -> Any:
    """The client finishes day's stage on its day; the attempt's answer."""
    clock.set(at(day))
    puzzle = stage(store, day)
    played = play_attempt(client, puzzle, finished_run(get_game(GAME), puzzle.seed, variant))
    assert played["finished"]
    return played


def crash(client: FlaskClient, store: Store, clock: Clock, day: date) -> None:
    clock.set(at(day))
    puzzle = stage(store, day)
    played = play_attempt(client, puzzle, unfinished_run(get_game(GAME), puzzle.seed))
    assert played["over"] and not played["finished"]


def rally_of(client: FlaskClient, league: str | None = None) -> Any:
    query = "" if league is None else f"?league={league}"
    answer = client.get(f"/api/v1/rallies/{FRIDAY}{query}")
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


def by_name(answer: Any) -> dict[str, Any]:
    return {entry["name"]: entry for entry in answer["standings"]}


@pytest.fixture
def weekend(app: Flask, api_store: Store, clock: Clock) -> dict[str, Any]:
    """A league's weekend: Ada finishes every stage; Ben Friday's and Saturday's; Cleo
    finishes Friday's, crashes out on Saturday, then finishes Sunday's; Dan skips Friday;
    Eve starts Friday's stage and never finishes it."""
    clients = {name: client_of(app) for name in ("Ada", "Ben", "Cleo", "Dan", "Eve")}
    clock.set(at(FRIDAY, 1))
    made = (
        clients["Ada"]
        .post("/api/v1/leagues", json={"name": "Weekenders", "display_name": "Ada"})
        .get_json()
    )
    for name, client in clients.items():
        if name != "Ada":
            answer = client.post(
                "/api/v1/leagues/join", json={"token": made["invite"], "display_name": name}
            )
            assert answer.status_code == 200
    scores: dict[str, list[Any]] = {name: [] for name in clients}
    for variant, day in enumerate((FRIDAY, SATURDAY, SUNDAY)):
        scores["Ada"].append(finish(clients["Ada"], api_store, clock, day, variant))
    for day in (FRIDAY, SATURDAY):
        scores["Ben"].append(finish(clients["Ben"], api_store, clock, day, 3))
    scores["Cleo"].append(finish(clients["Cleo"], api_store, clock, FRIDAY, 4))
    crash(clients["Cleo"], api_store, clock, SATURDAY)
    finish(clients["Cleo"], api_store, clock, SUNDAY, 5)
    for day in (SATURDAY, SUNDAY):
        finish(clients["Dan"], api_store, clock, day, 6)
    clock.set(at(FRIDAY, 23))
    start_attempt(clients["Eve"], stage(api_store, FRIDAY))
    return {"clients": clients, "league": made["id"], "scores": scores}


def test_cr22_a_rallys_score_is_the_sum_of_its_stages_its_tiebreak_the_last_stages(
    weekend: dict[str, Any], clock: Clock
):
    clock.set(at(MONDAY, 9))
    answer = rally_of(weekend["clients"]["Dan"])
    assert (answer["start"], answer["end"], answer["status"]) == (
        FRIDAY.isoformat(),
        SUNDAY.isoformat(),
        "over",
    )
    assert [s["date"] for s in answer["stages"]] == [
        d.isoformat() for d in (FRIDAY, SATURDAY, SUNDAY)
    ]
    ada = by_name(answer)["Ada"]
    stages = weekend["scores"]["Ada"]
    assert ada["score"] == sum(s["score"] for s in stages)
    assert ada["tiebreak"] == stages[-1]["tiebreak"]
    assert [s["score"] for s in ada["stages"]] == [s["score"] for s in stages]
    assert [s["run"] for s in ada["stages"]] == [s["run"] for s in stages]
    assert (ada["rank"], ada["status"], ada["stages_finished"]) == (1, "complete", 3)
    # Everyone's standings list those still in: Ada alone, among three who finished Friday.
    assert [entry["name"] for entry in answer["standings"]] == ["Ada"]
    assert answer["entrants"] == 3
    assert answer["league"] is None


def test_cr22_a_stage_not_finished_ends_the_rally(weekend: dict[str, Any], clock: Clock):
    clock.set(at(SATURDAY, 20))
    cleo = by_name(rally_of(weekend["clients"]["Cleo"], weekend["league"]))["Cleo"]
    # Out as soon as Saturday's attempt ended, the day still running.
    assert (cleo["status"], cleo["rank"], cleo["stages_finished"]) == ("out", None, 1)
    clock.set(at(MONDAY, 9))
    answer = rally_of(weekend["clients"]["Cleo"], weekend["league"])
    cleo = by_name(answer)["Cleo"]
    # Sunday's finished stage does not count: the rally had ended.
    assert cleo["score"] == weekend["scores"]["Cleo"][0]["score"]
    assert cleo["stages"][1:] == [None, None]
    eve = by_name(answer)["Eve"]
    assert (eve["status"], eve["stages_finished"], eve["score"]) == ("out", 0, 0)
    # Dan never started the first stage: he is not in the rally at all.
    assert "Dan" not in by_name(answer)
    assert answer["entrants"] == 4
    assert answer["league"]["name"] == "Weekenders"
    assert by_name(answer)["Ada"]["you"] is False and by_name(answer)["Cleo"]["you"] is True


def test_cr22_standings_at_the_weeks_edge_sunday_to_monday(weekend: dict[str, Any], clock: Clock):
    viewer = weekend["clients"]["Ada"]
    clock.set(at(SUNDAY, 23, 59, 59))
    public = rally_of(viewer)
    assert public["status"] == "running"
    assert [(e["name"], e["rank"], e["status"]) for e in public["standings"]] == [
        ("Ada", 1, "complete"),
        ("Ben", 2, "running"),
    ]
    league = by_name(rally_of(viewer, weekend["league"]))
    assert league["Ben"]["status"] == "running"
    assert league["Eve"]["status"] == "out"
    assert [s["status"] for s in public["stages"]] == ["over", "over", "today"]
    # At 00:00 UTC on Monday, Sunday's stage is over: Ben, who did not finish it, is out.
    clock.set(at(MONDAY, 0, 0, 0))
    public = rally_of(viewer)
    assert public["status"] == "over"
    assert [e["name"] for e in public["standings"]] == ["Ada"]
    league = rally_of(viewer, weekend["league"])
    assert [(e["name"], e["rank"], e["status"]) for e in league["standings"]] == [
        ("Ada", 1, "complete"),
        ("Ben", None, "out"),
        ("Cleo", None, "out"),
        ("Eve", None, "out"),
    ]
    assert [s["status"] for s in public["stages"]] == ["over", "over", "over"]


def test_cr22_while_the_weekend_runs_later_stages_show_nothing(
    app: Flask, api_store: Store, clock: Clock
):
    clock.set(at(FRIDAY, 8))
    answer = rally_of(client_of(app))
    assert [s["status"] for s in answer["stages"]] == ["today", "upcoming", "upcoming"]
    assert [s["puzzle"] is None for s in answer["stages"]] == [False, True, True]
    assert answer["stages"][0]["puzzle"]["seed"] is None
    assert answer["optimum"] is None and answer["par"] is None
    assert answer["standings"] == [] and answer["entrants"] == 0


def test_cr22_the_optimum_and_par_are_the_sums_of_the_stages(
    app: Flask, api_store: Store, clock: Clock
):
    clock.set(at(MONDAY, 9))
    puzzles = [stage(api_store, day) for day in (FRIDAY, SATURDAY, SUNDAY)]
    for number, puzzle in enumerate(puzzles):
        api_store.puzzles.record_solution(
            puzzle.id,
            optimum=100 + number,
            tiebreak=number,
            witness=[],
            proved=True,
            solve_seconds=1.0,
        )
    client = client_of(app)
    for number, puzzle in enumerate(puzzles[:2]):
        api_store.puzzles.record_par(
            puzzle.id, par=80 + number, tiebreak=number, line=[], seconds=1.0
        )
    answer = rally_of(client)
    assert (answer["optimum"], answer["optimum_tiebreak"]) == (303, 2)
    # A par still unknown leaves the sum unknown.
    assert answer["par"] is None
    api_store.puzzles.record_par(puzzles[2].id, par=90, tiebreak=7, line=[], seconds=1.0)
    answer = rally_of(client)
    assert (answer["par"], answer["par_tiebreak"]) == (80 + 81 + 90, 7)


@pytest.mark.parametrize("day", ["2026-12-05", "2026-12-07", "2026-10-30", "2027-01-01"])
def test_a_rally_is_asked_for_by_a_friday_that_has_come(day: str, app: Flask, clock: Clock):
    clock.set(at(MONDAY, 9))
    answer = client_of(app).get(f"/api/v1/rallies/{day}")
    assert answer.status_code == 404


def test_ties_are_broken_by_the_last_stage_and_equal_rallies_share_a_rank():
    def entry(name: str, *stages: tuple[int, int]) -> rally.Standing:
        plays = [
            StagePlay(OfficialResult(score, tiebreak, name), True, True)
            for score, tiebreak in stages
        ]
        found = rally.standing(name, name, plays, [True] * 3)
        assert found is not None
        return found

    standings = [
        entry("Ada", (10, 9), (10, 1), (10, 5)),
        entry("Ben", (12, 0), (10, 0), (8, 6)),
        entry("Cleo", (8, 9), (12, 9), (10, 5)),
        entry("Dan", (9, 0), (9, 0), (9, 0)),
    ]
    assert [(rank, s.name) for rank, s in rally.ranked(standings)] == [
        (1, "Ben"),
        (2, "Ada"),
        (2, "Cleo"),
        (4, "Dan"),
    ]


def add_league(store: Store, players: list[str]) -> str:
    leagues = store.leagues
    salt = new_invite_salt()
    league = leagues.make(
        league_id="everyone",
        name="Everyone",
        maker_id=players[0],
        member=new_member_handle(),
        invite_salt=salt,
        invite_hash=invite_hash(salt),
        league_cap=MAX_LEAGUES_PER_PLAYER,
    )
    for player in players[1:]:
        leagues.join(
            invite_hash=invite_hash(salt),
            player_id=player,
            member=new_member_handle(),
            member_cap=MAX_MEMBERS,
            league_cap=MAX_LEAGUES_PER_PLAYER,
        )
    return league.id


@pytest.mark.parametrize("moment", [at(SATURDAY, 10), at(SUNDAY, 10), at(MONDAY, 0)])
def test_everyones_standings_ranked_by_the_database_are_the_domains(store: Store, moment: datetime):
    """The public standings are ordered in SQL; a league of every player, ranked by the
    domain, gives the same order."""
    chance = random.Random(29)
    players = [f"player-{n:02d}" for n in range(60)]
    for player in players:
        store.players.upsert(player, chance.choice(["Ann", "Bo", None, "Cy"]))
    days = [FRIDAY, SATURDAY, SUNDAY]
    puzzles = [
        store.puzzles.ensure(GAME, f"stage-{d}", "cr-2", d, daily.puzzle_number(d)) for d in days
    ]
    for player in players:
        for day, puzzle in zip(days, puzzles, strict=True):
            if day >= moment.date() and not (day == moment.date() and chance.random() < 0.5):
                break
            if chance.random() < 0.15:
                continue  # this stage not played
            finished = chance.random() < 0.8
            store.runs.add(
                puzzle,
                player,
                actions=[],
                # Few scores and speeds, so that ties are many.
                score=chance.randrange(3) if finished else None,
                tiebreak=chance.randrange(2),
                finished=finished,
                today=day,
            )
    league = add_league(store, players)
    today = moment.date()
    stage_ids = [p.id if d <= today else None for d, p in zip(days, puzzles, strict=True)]
    days_over = [d < today for d in days]
    query = store.rally
    leaders, entrants = query.leaders(stage_ids, days_over, 100)
    public = rally.ranked(
        [
            s
            for row in leaders
            if (s := rally.standing(row.player_id, row.name, row.plays, days_over))
        ]
    )
    everyone = [
        s
        for row in query.league(league, stage_ids)
        if (s := rally.standing(row.player_id, row.name, row.plays, days_over))
    ]
    expected = [
        (rank, s.player_id, s.total, s.tiebreak)
        for rank, s in rally.ranked(everyone)
        if rank is not None and s.finished
    ]
    assert [(rank, s.player_id, s.total, s.tiebreak) for rank, s in public] == expected
    # The database's order is the domain's too, equal rallies by name (then player).
    assert [row.player_id for row in leaders] == [entry[1] for entry in expected]
    assert entrants == sum(1 for s in everyone if s.finished)
