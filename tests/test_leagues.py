"""Leagues of friends through the API: made, joined by the invite link, shown to their members
only; the invite renewed (the old link refused, a join racing the renewal), members removed,
the caps on members and leagues, and the standings of today, yesterday and the week, at the
week's edge too."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from datetime import time as time_of_day
from typing import Any

import pytest
import sqlalchemy
from flask import Flask
from flask.testing import FlaskClient

from puzzles import GAMES, get_game
from service.clock import Clock
from service.domain.leagues import (
    MAX_LEAGUES_PER_PLAYER,
    MAX_MEMBERS,
    invite_hash,
    new_invite_salt,
    new_league_id,
    new_member_handle,
)
from service.storage.leagues import NoSuchInvite, TooManyLeagues
from service.storage.models import League, LeagueMember, LeagueRemoval, Player
from service.storage.store import Store
from service.web.api.common import CACHE_SECONDS
from tests.api_support import (
    FINISHING_GAME,
    AppFactory,
    client_of,
    finished_run,
    play_attempt,
    start_attempt,
    todays_daily,
    unfinished_run,
)

# A Wednesday: its week runs from Monday 2026-12-07 to Sunday 2026-12-13.
DAY = date(2026, 12, 9)
OTHER_GAME = next(name for name in sorted(GAMES) if name != FINISHING_GAME)


def at(day: date, hour: int = 12, minute: int = 0, second: int = 0) -> datetime:
    return datetime.combine(day, time_of_day(hour, minute, second), UTC)


def make(client: FlaskClient, name: str = "Friday Club", player: str | None = "Ada") -> Any:
    body = {"name": name} if player is None else {"name": name, "display_name": player}
    answer = client.post("/api/v1/leagues", json=body)
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def join(client: FlaskClient, token: str, player: str | None = None) -> Any:
    body = {"token": token} if player is None else {"token": token, "display_name": player}
    return client.post("/api/v1/leagues/join", json=body)


def league_of(client: FlaskClient, league_id: str) -> Any:
    return client.get(f"/api/v1/leagues/{league_id}")


def names(standings: list[dict[str, Any]]) -> list[str | None]:
    return [entry["name"] for entry in standings]


@pytest.fixture
def friends(app: Flask, clock: Clock) -> tuple[FlaskClient, FlaskClient, dict[str, Any]]:
    """Ada's league, which Ben joined by its link, on DAY."""
    clock.set(at(DAY))
    ada, ben = client_of(app), client_of(app)
    made = make(ada)
    assert join(ben, made["invite"], "Ben").status_code == 200
    return ada, ben, made


def test_a_league_is_made_with_an_invite_link_and_joined_under_ones_name(app: Flask, clock: Clock):
    clock.set(at(DAY))
    ada, ben = client_of(app), client_of(app)
    made = make(ada)
    assert made["name"] == "Friday Club"
    assert made["invite_url"] == f"http://127.0.0.1:8000/leagues/join#{made['invite']}"
    assert len(made["invite"]) == 43
    assert [m["name"] for m in made["members"]] == ["Ada"]
    assert made["you"] == made["maker"] == made["members"][0]["member"]
    joined = join(ben, made["invite"], "Ben")
    assert joined.status_code == 200
    seen_by_ben = joined.get_json()
    assert seen_by_ben["id"] == made["id"]
    assert [m["name"] for m in seen_by_ben["members"]] == ["Ada", "Ben"]
    assert seen_by_ben["you"] != seen_by_ben["maker"]
    # Every member sees the current link, to pass it on.
    assert seen_by_ben["invite"] == made["invite"]
    # Joining again changes nothing.
    again = join(ben, made["invite"]).get_json()
    assert [m["name"] for m in again["members"]] == ["Ada", "Ben"]
    assert ben.get("/api/v1/me").get_json()["leagues"] == [
        {"id": made["id"], "name": "Friday Club", "members": 2, "maker": False}
    ]
    assert ada.get("/api/v1/me").get_json()["leagues"][0]["maker"] is True


def test_only_members_see_a_league_anyone_else_gets_the_404_of_none(
    app: Flask, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, _ben, made = friends
    stranger, newcomer = client_of(app), client_of(app)
    make(newcomer, "Another league", "Cleo")  # a player, in a league of their own
    never = league_of(stranger, "no-such-league")
    assert never.status_code == 404
    for outsider in (stranger, newcomer):
        for answer in (
            league_of(outsider, made["id"]),
            outsider.post(f"/api/v1/leagues/{made['id']}/leave", json={}),
            outsider.post(f"/api/v1/leagues/{made['id']}/invite", json={}),
            outsider.post(f"/api/v1/leagues/{made['id']}/remove", json={"member": made["you"]}),
            outsider.get(f"/api/v1/rallies/2026-12-04?league={made['id']}"),
        ):
            # Word for word the answer about a league that does not exist.
            assert answer.status_code == 404
            assert answer.get_json() == never.get_json() == {"error": "no league", "status": 404}
            assert "Friday" not in answer.get_data(as_text=True)
    # The league's page too: the page of a page not found, the same as for no league.
    for outsider in (stranger, newcomer):
        page = outsider.get(f"/leagues/{made['id']}")
        assert page.status_code == 404
        assert page.get_data() == stranger.get("/leagues/no-such-league").get_data()
    assert ada.get(f"/leagues/{made['id']}").status_code == 200
    player = client_of(app)
    run = finish_today(player, app, FINISHING_GAME)
    share = player.get(f"/api/v1/runs/{run}/share?league={made['id']}")
    assert share.status_code == 404 and share.get_json() == never.get_json()
    # The member's answer is theirs alone.
    answer = league_of(ada, made["id"])
    assert answer.cache_control.private and answer.cache_control.no_store


def finish_today(client: FlaskClient, app: Flask, game: str, name: str | None = None) -> str:
    """The client plays today's daily of game to the finish; the run's id."""
    puzzle = todays_daily(app.extensions["rally"].store, game)
    body = {} if name is None else {"name": name}
    played = play_attempt(client, puzzle, finished_run(get_game(game), puzzle.seed), **body)
    assert played["finished"]
    return played["run"]


def test_a_renewed_invite_refuses_the_old_link(
    app: Flask, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, ben, made = friends
    old = made["invite"]
    # Only the maker renews.
    refused = ben.post(f"/api/v1/leagues/{made['id']}/invite", json={})
    assert refused.status_code == 403
    renewed = ada.post(f"/api/v1/leagues/{made['id']}/invite", json={})
    assert renewed.status_code == 200
    new = renewed.get_json()["invite"]
    assert new != old
    assert league_of(ben, made["id"]).get_json()["invite"] == new
    late = client_of(app)
    stale = join(late, old, "Cleo")
    assert stale.status_code == 404
    assert "renewed" in stale.get_json()["error"]
    assert league_of(late, made["id"]).status_code == 404
    assert join(late, new, "Cleo").status_code == 200
    # The database keeps neither token.
    engine = sqlalchemy.create_engine(app.extensions["rally"].config.database_url)
    with engine.connect() as connection:
        stored = connection.execute(sqlalchemy.select(League)).one()
    engine.dispose()
    assert new not in stored and old not in stored
    assert stored.invite_hash == invite_hash(new)


def test_a_removed_member_no_longer_sees_the_league(
    app: Flask, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, ben, made = friends
    cleo = client_of(app)
    assert join(cleo, made["invite"], "Cleo").status_code == 200
    handles = {m["name"]: m["member"] for m in league_of(ada, made["id"]).get_json()["members"]}
    remove = f"/api/v1/leagues/{made['id']}/remove"
    # Only the maker removes, never themselves, and only members of the league.
    assert ben.post(remove, json={"member": handles["Cleo"]}).status_code == 403
    assert ada.post(remove, json={"member": handles["Ada"]}).status_code == 400
    assert ada.post(remove, json={"member": "nobody"}).status_code == 404
    removed = ada.post(remove, json={"member": handles["Ben"]})
    assert removed.status_code == 200
    assert [m["name"] for m in removed.get_json()["members"]] == ["Ada", "Cleo"]
    assert league_of(ben, made["id"]).status_code == 404
    assert ben.get("/api/v1/me").get_json()["leagues"] == []
    assert ben.post(f"/api/v1/leagues/{made['id']}/leave", json={}).status_code == 404
    # Renewing the invite keeps them out: the link they had opens nothing.
    ada.post(f"/api/v1/leagues/{made['id']}/invite", json={})
    assert join(ben, made["invite"]).status_code == 404
    assert league_of(cleo, made["id"]).get_json()["members"][-1]["name"] == "Cleo"


def test_the_maker_leaving_hands_the_league_to_the_longest_member_and_the_last_deletes_it(
    app: Flask, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, ben, made = friends
    assert ada.post(f"/api/v1/leagues/{made['id']}/leave", json={}).get_json() == {
        "left": made["id"]
    }
    seen = league_of(ben, made["id"]).get_json()
    assert seen["maker"] == seen["you"]
    assert [m["name"] for m in seen["members"]] == ["Ben"]
    assert ben.post(f"/api/v1/leagues/{made['id']}/invite", json={}).status_code == 200
    assert ben.post(f"/api/v1/leagues/{made['id']}/leave", json={}).status_code == 200
    engine = sqlalchemy.create_engine(app.extensions["rally"].config.database_url)
    with engine.connect() as connection:
        assert (
            connection.scalar(sqlalchemy.select(sqlalchemy.func.count()).select_from(League)) == 0
        )
    engine.dispose()


def fill(store: Store, league_id: str, members: int) -> None:
    """Add members to a league in one transaction (its count of members with them): the
    joins the tests make through the API then meet the cap."""
    players = [f"filler-{league_id}-{number}" for number in range(members)]
    now = datetime.now(UTC)
    with store.database.engine.begin() as connection:
        connection.execute(
            sqlalchemy.insert(Player),
            [
                {"id": p, "display_name": f"Filler {n}", "created_at": now}
                for n, p in enumerate(players)
            ],
        )
        connection.execute(
            sqlalchemy.insert(LeagueMember),
            [
                {
                    "league_id": league_id,
                    "player_id": p,
                    "member": new_member_handle(),
                    "joined_at": now,
                }
                for p in players
            ],
        )
        connection.execute(
            sqlalchemy.update(League)
            .filter_by(id=league_id)
            .values(members=League.members + members)
        )


def test_a_league_takes_at_most_500_members(
    app: Flask, api_store: Store, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, _ben, made = friends
    fill(api_store, made["id"], MAX_MEMBERS - 3)
    last = client_of(app)
    assert join(last, made["invite"], "Last").status_code == 200
    full = join(client_of(app), made["invite"], "One too many")
    assert full.status_code == 409
    assert "full" in full.get_json()["error"]
    seen = league_of(ada, made["id"]).get_json()
    assert len(seen["members"]) == MAX_MEMBERS
    assert len(seen["today"][FINISHING_GAME]) == MAX_MEMBERS
    # A member leaving makes room.
    last.post(f"/api/v1/leagues/{made['id']}/leave", json={})
    assert join(client_of(app), made["invite"], "Next").status_code == 200


def test_a_player_is_in_at_most_50_leagues(app: Flask, api_store: Store, clock: Clock):
    clock.set(at(DAY))
    busy, other = client_of(app), client_of(app)
    invites = [make(other, f"League {n}", "Other")["invite"] for n in range(3)]
    first = make(busy, "Mine", "Busy")
    player = busy_player(api_store, first["id"])
    leagues = api_store.leagues
    for number in range(MAX_LEAGUES_PER_PLAYER - 2):
        salt = new_invite_salt()
        leagues.make(
            league_id=new_league_id(),
            name=f"Made {number}",
            maker_id=player,
            member=new_member_handle(),
            invite_salt=salt,
            invite_hash=invite_hash(salt),
            league_cap=MAX_LEAGUES_PER_PLAYER,
        )
    assert join(busy, invites[0]).status_code == 200  # the 50th
    for refused in (join(busy, invites[1]), busy.post("/api/v1/leagues", json={"name": "More"})):
        assert refused.status_code == 409
        assert "leave one first" in refused.get_json()["error"]
    assert len(busy.get("/api/v1/me").get_json()["leagues"]) == MAX_LEAGUES_PER_PLAYER
    busy.post(f"/api/v1/leagues/{first['id']}/leave", json={})
    assert join(busy, invites[1]).status_code == 200


def busy_player(store: Store, league_id: str) -> str:
    with store.database.engine.connect() as connection:
        return connection.scalar(sqlalchemy.select(League.maker_id).filter_by(id=league_id))


def test_concurrent_joins_fill_a_league_to_its_cap_exactly(make_app: AppFactory, database_url: str):
    app = make_app(database=database_url, RALLY_WRITES_PER_MINUTE="100000")
    store: Store = app.extensions["rally"].store
    made = make(client_of(app))
    fill(store, made["id"], MAX_MEMBERS - 5)
    clients = [client_of(app) for _ in range(12)]

    def attempt(client: FlaskClient) -> int:
        return join(client, made["invite"], "Racer").status_code

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(attempt, clients))
    assert sorted(statuses) == [200] * 4 + [409] * 8
    with store.database.engine.connect() as connection:
        counted = connection.scalar(sqlalchemy.select(League.members).filter_by(id=made["id"]))
        members = connection.scalar(
            sqlalchemy.select(sqlalchemy.func.count()).select_from(LeagueMember)
        )
    assert counted == members == MAX_MEMBERS


def hold_the_league(store: Store, league_id: str) -> tuple[Any, Any]:
    """A transaction of another connection that has begun renewing the league's invite (and
    so holds its row, or on SQLite the write lock): its connection and transaction."""
    engine = sqlalchemy.create_engine(store.database.engine.url)
    connection = engine.connect()
    if engine.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        transaction = None
    else:
        transaction = connection.begin()
    connection.execute(
        sqlalchemy.update(League)
        .where(League.id == league_id)
        .values(invite_salt="renewed", invite_hash=invite_hash("renewed"))
    )
    return connection, transaction


def test_a_join_racing_a_renewal_that_commits_first_finds_the_link_renewed(
    make_app: AppFactory, database_url: str
):
    app = make_app(database=database_url)
    store: Store = app.extensions["rally"].store
    made = make(client_of(app))
    player = "racer"
    store.players.upsert(player, "Racer")
    connection, transaction = hold_the_league(store, made["id"])
    outcome: list[Any] = []

    def join_now() -> None:
        try:
            outcome.append(
                store.leagues.join(
                    invite_hash=invite_hash(made["invite"]),
                    player_id=player,
                    member=new_member_handle(),
                    member_cap=MAX_MEMBERS,
                    league_cap=MAX_LEAGUES_PER_PLAYER,
                )
            )
        except Exception as error:
            outcome.append(error)

    racer = threading.Thread(target=join_now)
    racer.start()
    racer.join(0.5)
    assert racer.is_alive(), "the join waits for the renewal's transaction"
    if transaction is None:
        connection.exec_driver_sql("COMMIT")
    else:
        transaction.commit()
    connection.close()
    racer.join()
    assert len(outcome) == 1 and isinstance(outcome[0], NoSuchInvite)
    with store.database.engine.connect() as check:
        members = check.scalar(sqlalchemy.select(sqlalchemy.func.count()).select_from(LeagueMember))
        counted = check.scalar(sqlalchemy.select(League.members).filter_by(id=made["id"]))
    assert members == counted == 1


def test_a_join_that_commits_before_the_renewal_stays_a_member(
    app: Flask, api_store: Store, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, ben, made = friends
    ada.post(f"/api/v1/leagues/{made['id']}/invite", json={})
    assert league_of(ben, made["id"]).status_code == 200
    assert "Ben" in names(league_of(ada, made["id"]).get_json()["members"])


def test_joins_and_makes_are_limited_like_other_writes(make_app: AppFactory, clock: Clock):
    clock.set(at(DAY))
    app = make_app(RALLY_WRITES_PER_MINUTE="2")
    client = client_of(app)
    made = make(client)
    assert join(client, made["invite"]).status_code == 200
    limited = join(client, made["invite"])
    assert limited.status_code == 429
    assert "Retry-After" in limited.headers


def test_a_write_from_another_site_joins_no_one(
    app: Flask, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    _ada, _ben, made = friends
    victim = client_of(app)
    answer = victim.post(
        "/api/v1/leagues/join",
        json={"token": made["invite"]},
        headers={"Sec-Fetch-Site": "cross-site"},
    )
    assert answer.status_code == 403
    assert league_of(victim, made["id"]).status_code == 404


def test_todays_standings_show_scores_and_where_the_others_stand_but_no_line(
    app: Flask,
    api_store: Store,
    clock: Clock,
    friends: tuple[FlaskClient, FlaskClient, dict[str, Any]],
):
    ada, ben, made = friends
    cleo, dan = client_of(app), client_of(app)
    join(cleo, made["invite"], "Cleo")
    join(dan, made["invite"], "Dan")
    puzzle = todays_daily(api_store, FINISHING_GAME)
    ada_run = finish_today(ada, app, FINISHING_GAME)
    played = play_attempt(ben, puzzle, finished_run(get_game(FINISHING_GAME), puzzle.seed, 1))
    start_attempt(cleo, puzzle)  # under way
    api_store.puzzles.record_solution(
        puzzle.id, optimum=200, tiebreak=9, witness=[], proved=True, solve_seconds=1.0
    )
    api_store.puzzles.record_par(puzzle.id, par=150, tiebreak=4, line=[], seconds=1.0)
    clock.advance(CACHE_SECONDS)  # a process keeps a day's puzzles that long
    seen = league_of(dan, made["id"]).get_json()
    board = seen["today"][FINISHING_GAME]
    ada_record = api_store.runs.get(ada_run)
    assert ada_record is not None
    results = [
        ("Ada", ada_record.score, ada_record.tiebreak),
        ("Ben", played["score"], played["tiebreak"]),
    ]
    # Best first: score, then tie-break; equal ones by name.
    finished = sorted(results, key=lambda e: (-(e[1] or 0), -e[2], e[0]))
    assert [(e["name"], e["score"], e["tiebreak"]) for e in board[:2]] == finished
    assert [e["status"] for e in board] == ["finished", "finished", "playing", "not_played"]
    assert names(board[2:]) == ["Cleo", "Dan"]
    assert [e["rank"] for e in board[2:]] == [None, None]
    # The other game's standings list everyone, nobody played.
    assert {e["status"] for e in seen["today"][OTHER_GAME]} == {"not_played"}
    today = {p["game"]: p for p in seen["dailies"]["today"]["puzzles"]}
    assert (today[FINISHING_GAME]["optimum"], today[FINISHING_GAME]["par"]) == (200, 150)
    assert today[FINISHING_GAME]["seed"] is None
    # A score and a run's id, never its moves while the day runs.
    assert "actions" not in str(seen)
    moves = dan.get(f"/api/v1/runs/{board[0]['run']}").get_json()
    assert moves["actions"] is None


def test_equal_results_share_a_rank(
    app: Flask, api_store: Store, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, ben, made = friends
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(FINISHING_GAME), puzzle.seed)
    play_attempt(ada, puzzle, actions)
    play_attempt(ben, puzzle, actions)
    board = league_of(ada, made["id"]).get_json()["today"][FINISHING_GAME]
    assert [(e["rank"], e["name"]) for e in board] == [(1, "Ada"), (1, "Ben")]


def test_an_attempt_that_crashed_out_did_not_finish(
    app: Flask, api_store: Store, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, ben, made = friends
    puzzle = todays_daily(api_store, FINISHING_GAME)
    over = play_attempt(ben, puzzle, unfinished_run(get_game(FINISHING_GAME), puzzle.seed))
    assert over["over"] and not over["finished"]
    board = league_of(ada, made["id"]).get_json()["today"][FINISHING_GAME]
    assert {e["name"]: e["status"] for e in board} == {"Ada": "not_played", "Ben": "did_not_finish"}


def play_on(client: FlaskClient, store: Store, clock: Clock, day: date, game: str) -> int:
    """The client plays day's daily of game to the finish on that day; its score."""
    clock.set(at(day))
    puzzle = todays_daily(store, game, day)
    return play_attempt(client, puzzle, finished_run(get_game(game), puzzle.seed))["score"]


def test_the_week_runs_monday_to_sunday_with_points_days_played_and_streaks(
    app: Flask, api_store: Store, clock: Clock
):
    monday = date(2026, 12, 7)
    sunday = monday + timedelta(days=6)
    ada, ben = client_of(app), client_of(app)
    clock.set(at(monday - timedelta(days=2)))
    made = make(ada)
    join(ben, made["invite"], "Ben")
    # Ada plays every day from the Saturday before; Ben on Monday, then Wednesday.
    ada_points = {}
    for offset in range(-2, 7):
        day = monday + timedelta(days=offset)
        ada_points[day] = play_on(ada, api_store, clock, day, FINISHING_GAME)
    ben_monday = play_on(ben, api_store, clock, monday, FINISHING_GAME)
    ben_wednesday = play_on(ben, api_store, clock, monday + timedelta(days=2), FINISHING_GAME)

    def week_at(moment: datetime) -> dict[str, Any]:
        clock.set(moment)
        return league_of(ada, made["id"]).get_json()["week"]

    week = week_at(at(sunday, 23, 59, 59))
    assert (week["start"], week["end"]) == (monday.isoformat(), sunday.isoformat())
    rows = {row["name"]: row for row in week["games"][FINISHING_GAME]}
    assert rows["Ada"]["days"] == [ada_points[monday + timedelta(days=n)] for n in range(7)]
    assert rows["Ada"]["points"] == sum(rows["Ada"]["days"])
    assert (rows["Ada"]["days_played"], rows["Ada"]["current_streak"]) == (7, 9)
    assert rows["Ben"]["days"] == [ben_monday, None, ben_wednesday, None, None, None, None]
    assert (rows["Ben"]["days_played"], rows["Ben"]["current_streak"]) == (2, 0)
    assert [row["rank"] for row in week["games"][FINISHING_GAME]] == [1, 2]
    # The streaks are those GET /me counts.
    me = ada.get("/api/v1/me").get_json()["games"][FINISHING_GAME]
    assert me["current_streak"] == 9
    # At 00:00 UTC a new week begins: no points yet, yesterday's standings are Sunday's,
    # and Ada's streak lives on while Monday's daily may still be played.
    next_week = week_at(at(sunday + timedelta(days=1), 0, 0, 0))
    assert next_week["start"] == (sunday + timedelta(days=1)).isoformat()
    rows = {row["name"]: row for row in next_week["games"][FINISHING_GAME]}
    assert rows["Ada"]["days"] == [None] * 7
    assert (rows["Ada"]["points"], rows["Ada"]["days_played"]) == (0, 0)
    assert rows["Ada"]["current_streak"] == 9
    seen = league_of(ben, made["id"]).get_json()
    assert seen["dailies"]["yesterday"]["date"] == sunday.isoformat()
    yesterday = {e["name"]: e for e in seen["yesterday"][FINISHING_GAME]}
    assert yesterday["Ada"]["score"] == ada_points[sunday]
    assert yesterday["Ben"]["status"] == "not_played"
    # A day later, missed, the streak is over.
    clock.set(at(sunday + timedelta(days=2), 0, 0, 0))
    rows = {
        r["name"]: r for r in league_of(ada, made["id"]).get_json()["week"]["games"][FINISHING_GAME]
    }
    assert rows["Ada"]["current_streak"] == 0


def test_yesterdays_unfinished_attempt_did_not_finish(app: Flask, api_store: Store, clock: Clock):
    ada, ben = client_of(app), client_of(app)
    clock.set(at(DAY, 23, 59, 0))
    made = make(ada)
    join(ben, made["invite"], "Ben")
    start_attempt(ben, todays_daily(api_store, FINISHING_GAME))
    assert {
        e["name"]: e["status"]
        for e in league_of(ada, made["id"]).get_json()["today"][FINISHING_GAME]
    }["Ben"] == "playing"
    clock.set(at(DAY + timedelta(days=1), 0, 0, 0))
    seen = league_of(ada, made["id"]).get_json()
    assert {e["name"]: e["status"] for e in seen["yesterday"][FINISHING_GAME]}[
        "Ben"
    ] == "did_not_finish"
    assert {e["name"]: e["status"] for e in seen["today"][FINISHING_GAME]}["Ben"] == "not_played"


def test_the_share_text_can_invite_to_a_league_of_the_players(
    app: Flask, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, _ben, made = friends
    run = finish_today(ada, app, FINISHING_GAME)
    plain = ada.get(f"/api/v1/runs/{run}/share").get_json()
    inviting = ada.get(f"/api/v1/runs/{run}/share?league={made['id']}")
    assert inviting.cache_control.no_store
    text = inviting.get_json()["text"]
    assert text == (
        f"{plain['text']}\nJoin my league “Friday Club” on Rally Daily: {made['invite_url']}"
    )
    assert made["invite"] not in plain["text"]


def test_a_removed_member_is_refused_by_every_link_until_the_maker_lets_them_back_in(
    app: Flask, database_url: str, make_app: AppFactory, clock: Clock
):
    clock.set(at(DAY))
    app = make_app(database=database_url)
    ada, ben, cleo = client_of(app), client_of(app), client_of(app)
    made = make(ada)
    assert join(ben, made["invite"], "Ben").status_code == 200
    assert join(cleo, made["invite"], "Cleo").status_code == 200
    handles = {m["name"]: m["member"] for m in league_of(ada, made["id"]).get_json()["members"]}
    removed = ada.post(f"/api/v1/leagues/{made['id']}/remove", json={"member": handles["Ben"]})
    assert [(r["member"], r["name"]) for r in removed.get_json()["removed"]] == [
        (handles["Ben"], "Ben")
    ]
    # Only the maker sees whom they removed.
    assert league_of(cleo, made["id"]).get_json()["removed"] == []
    unknown = join(client_of(app), "x" * 43)
    assert unknown.status_code == 404
    # The link they had, and the one the maker makes next, answer as a link of no league.
    renewed = ada.post(f"/api/v1/leagues/{made['id']}/invite", json={}).get_json()["invite"]
    for token in (made["invite"], renewed):
        refused = join(ben, token)
        assert refused.status_code == 404
        assert refused.get_data() == unknown.get_data()
        assert refused.headers.get("Content-Type") == unknown.headers.get("Content-Type")
    assert league_of(ben, made["id"]).status_code == 404
    assert ben.get("/api/v1/me").get_json()["leagues"] == []
    # Others still join by the current link.
    assert join(client_of(app), renewed, "Dan").status_code == 200
    readmit = f"/api/v1/leagues/{made['id']}/readmit"
    # Only the maker lets them back in; a handle no removed player had is a 404.
    assert cleo.post(readmit, json={"member": handles["Ben"]}).status_code == 403
    assert ben.post(readmit, json={"member": handles["Ben"]}).get_json() == {
        "error": "no league",
        "status": 404,
    }
    assert ada.post(readmit, json={"member": handles["Cleo"]}).status_code == 404
    lifted = ada.post(readmit, json={"member": handles["Ben"]})
    assert lifted.status_code == 200 and lifted.get_json()["removed"] == []
    # The old link stays renewed; the current one lets them in, under a new handle.
    assert join(ben, made["invite"]).get_data() == unknown.get_data()
    back = join(ben, renewed)
    assert back.status_code == 200
    assert back.get_json()["you"] != handles["Ben"]
    assert names(back.get_json()["members"]) == ["Ada", "Cleo", "Dan", "Ben"]
    # Removed again, kept out again.
    ada.post(f"/api/v1/leagues/{made['id']}/remove", json={"member": back.get_json()["you"]})
    assert join(ben, renewed).get_data() == unknown.get_data()


def test_a_league_deleted_by_its_last_leaver_takes_its_removals_with_it(
    app: Flask, friends: tuple[FlaskClient, FlaskClient, dict[str, Any]]
):
    ada, ben, made = friends
    ben_handle = league_of(ben, made["id"]).get_json()["you"]
    ada.post(f"/api/v1/leagues/{made['id']}/remove", json={"member": ben_handle})
    assert ada.post(f"/api/v1/leagues/{made['id']}/leave", json={}).status_code == 200
    engine = sqlalchemy.create_engine(app.extensions["rally"].config.database_url)
    with engine.connect() as connection:
        for table in (League, LeagueRemoval):
            count = sqlalchemy.select(sqlalchemy.func.count()).select_from(table)
            assert connection.scalar(count) == 0
    engine.dispose()


def hold_a_removal(store: Store, league_id: str, player_id: str) -> tuple[Any, Any]:
    """A transaction of another connection that has removed the player from the league
    (the league's row held, or on SQLite the write lock) and not committed yet."""
    engine = sqlalchemy.create_engine(store.database.engine.url)
    connection = engine.connect()
    if engine.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        transaction = None
    else:
        transaction = connection.begin()
        connection.execute(
            sqlalchemy.select(League.id).where(League.id == league_id).with_for_update()
        )
    member = connection.scalar(
        sqlalchemy.select(LeagueMember.member).filter_by(league_id=league_id, player_id=player_id)
    )
    connection.execute(
        sqlalchemy.delete(LeagueMember).filter_by(league_id=league_id, player_id=player_id)
    )
    connection.execute(
        sqlalchemy.update(League).where(League.id == league_id).values(members=League.members - 1)
    )
    connection.execute(
        sqlalchemy.insert(LeagueRemoval).values(
            league_id=league_id, player_id=player_id, member=member, removed_at=datetime.now(UTC)
        )
    )
    return connection, transaction


def join_of(store: Store, token: str, player: str) -> Any:
    """The store's join of the league by token for player: its answer, or the refusal."""
    try:
        return store.leagues.join(
            invite_hash=invite_hash(token),
            player_id=player,
            member=new_member_handle(),
            member_cap=MAX_MEMBERS,
            league_cap=MAX_LEAGUES_PER_PLAYER,
        )
    except Exception as error:
        return error


def test_a_join_racing_a_removal_that_commits_first_is_refused(
    make_app: AppFactory, database_url: str
):
    app = make_app(database=database_url)
    store: Store = app.extensions["rally"].store
    made = make(client_of(app))
    player = "racer"
    store.players.upsert(player, "Racer")
    joined = join_of(store, made["invite"], player)
    assert joined[1] is True
    connection, transaction = hold_a_removal(store, made["id"], player)
    outcome: list[Any] = []
    racer = threading.Thread(target=lambda: outcome.append(join_of(store, made["invite"], player)))
    racer.start()
    racer.join(0.5)
    assert racer.is_alive(), "the join waits for the removal's transaction"
    if transaction is None:
        connection.exec_driver_sql("COMMIT")
    else:
        transaction.commit()
    connection.close()
    racer.join()
    assert len(outcome) == 1 and isinstance(outcome[0], NoSuchInvite)
    assert store.leagues.membership(made["id"], player) is None
    with store.database.engine.connect() as check:
        members = check.scalar(sqlalchemy.select(sqlalchemy.func.count()).select_from(LeagueMember))
        counted = check.scalar(sqlalchemy.select(League.members).filter_by(id=made["id"]))
    assert members == counted == 1


def test_removals_racing_the_removed_members_joins_keep_every_one_of_them_out(
    make_app: AppFactory, database_url: str
):
    app = make_app(database=database_url, RALLY_WRITES_PER_MINUTE="100000")
    store: Store = app.extensions["rally"].store
    made = make(client_of(app))
    maker = busy_player(store, made["id"])
    racers = [f"racer-{number}" for number in range(8)]
    handles = {}
    for racer in racers:
        store.players.upsert(racer, racer)
        handles[racer] = join_of(store, made["invite"], racer)[0].member
    start = threading.Barrier(2 * len(racers))

    def remove(racer: str) -> Any:
        start.wait()
        store.leagues.remove(made["id"], maker, handles[racer])
        return None

    def rejoin(racer: str) -> Any:
        start.wait()
        outcomes = [join_of(store, made["invite"], racer) for _ in range(5)]
        return outcomes

    with ThreadPoolExecutor(max_workers=2 * len(racers)) as pool:
        removals = [pool.submit(remove, racer) for racer in racers]
        rejoins = [pool.submit(rejoin, racer) for racer in racers]
        for removal in removals:
            assert removal.result() is None
        for joins in rejoins:
            for outcome in joins.result():
                # Each join came before its removal (the player was in already) or after it.
                assert isinstance(outcome, NoSuchInvite) or outcome[1] is False
    for racer in racers:
        assert store.leagues.membership(made["id"], racer) is None
        assert isinstance(join_of(store, made["invite"], racer), NoSuchInvite)
    with store.database.engine.connect() as check:
        members = check.scalar(sqlalchemy.select(sqlalchemy.func.count()).select_from(LeagueMember))
        counted = check.scalar(sqlalchemy.select(League.members).filter_by(id=made["id"]))
        kept_out = check.scalar(
            sqlalchemy.select(sqlalchemy.func.count()).select_from(LeagueRemoval)
        )
    assert members == counted == 1
    assert kept_out == len(racers)


def test_concurrent_joins_of_one_player_stop_at_the_cap_of_leagues_exactly(
    make_app: AppFactory, database_url: str
):
    app = make_app(database=database_url)
    store: Store = app.extensions["rally"].store
    player = "busy"
    store.players.upsert(player, "Busy")
    for number in range(MAX_LEAGUES_PER_PLAYER - 4):
        salt = new_invite_salt()
        store.leagues.make(
            league_id=new_league_id(),
            name=f"Made {number}",
            maker_id=player,
            member=new_member_handle(),
            invite_salt=salt,
            invite_hash=invite_hash(salt),
            league_cap=MAX_LEAGUES_PER_PLAYER,
        )
    others = [make(client_of(app), f"Open {number}", "Other") for number in range(12)]
    start = threading.Barrier(len(others))

    def attempt(made: dict[str, Any]) -> Any:
        start.wait()
        return join_of(store, made["invite"], player)

    with ThreadPoolExecutor(max_workers=len(others)) as pool:
        outcomes = list(pool.map(attempt, others))
    joined = [outcome for outcome in outcomes if isinstance(outcome, tuple)]
    refused = [outcome for outcome in outcomes if not isinstance(outcome, tuple)]
    assert len(joined) == 4 and all(outcome[1] for outcome in joined)
    assert len(refused) == 8 and all(isinstance(error, TooManyLeagues) for error in refused)
    assert len(store.leagues.player_leagues(player)) == MAX_LEAGUES_PER_PLAYER
    with store.database.engine.connect() as check:
        for made in others:
            members = check.scalar(
                sqlalchemy.select(sqlalchemy.func.count())
                .select_from(LeagueMember)
                .filter_by(league_id=made["id"])
            )
            counted = check.scalar(sqlalchemy.select(League.members).filter_by(id=made["id"]))
            assert members == counted
