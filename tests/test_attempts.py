"""Attempts: today's daily played on the server once per player, and what a player who has
not finished may see of other players' runs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from threading import Barrier, BrokenBarrierError
from typing import Any

import pytest
import sqlalchemy
from flask import Flask
from flask.testing import FlaskClient

from puzzles import GAMES, get_game
from service.clock import Clock
from service.domain import daily
from service.operations.redis_server import EmbeddedRedis
from service.storage.attempts import AttemptMoved, ClientLimit, Extension, RunResult
from service.storage.models import Attempt, Run
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web.players import COOKIE_NAME
from tests.api_support import (
    FINISHING_GAME,
    append_line,
    attempt_batches,
    client_of,
    finished_run,
    over_run,
    play_attempt,
    start_attempt,
    todays_daily,
)

games = pytest.mark.parametrize("game_name", sorted(GAMES))
# A client (a keyed hash of its address bucket) that may start a few attempts of a puzzle.
ONE_CLIENT = ClientLimit("c0ffee" * 5 + "00", 3)


def append(client: FlaskClient, attempt: dict[str, Any], actions: list[Any], **extra: Any):
    return client.post(
        f"/api/v1/attempts/{attempt['attempt']}/actions",
        json={"played": attempt["played"], "actions": actions, **extra},
    )


@games
def test_a_daily_is_played_through_its_attempt_to_an_official_run(
    game_name: str, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, game_name)
    game = get_game(game_name)
    actions = (
        finished_run(game, puzzle.seed)
        if game_name == FINISHING_GAME
        else over_run(game, puzzle.seed)
    )
    started = start_attempt(client, puzzle)
    assert started.status_code == 201
    attempt = started.get_json()
    assert (attempt["played"], attempt["actions"], attempt["run"]) == (0, [], None)
    assert attempt["puzzle"]["seed"] is None
    state = game.new_game(puzzle.seed)
    assert (attempt["view"], attempt["legal_actions"]) == (
        game.view(state),
        game.legal_actions(state),
    )
    sent = attempt_batches(puzzle, actions)
    assert len(sent) > 1
    played: list[Any] = []
    for batch in sent:
        answer = append(client, attempt, batch)
        assert answer.status_code == 200, answer.get_json()
        attempt = answer.get_json()
        played += batch
        state = game.replay(puzzle.seed, played)
        assert (attempt["played"], attempt["view"], attempt["legal_actions"], attempt["over"]) == (
            len(played),
            game.view(state),
            game.legal_actions(state),
            game.is_over(state),
        )
    assert client.get(f"/api/v1/attempts/{attempt['attempt']}").get_json()["actions"] == actions
    run = client.get(f"/api/v1/runs/{attempt['run']}").get_json()
    final = game.replay(puzzle.seed, actions)
    assert (run["score"], run["tiebreak"], run["finished"]) == (
        game.score(final),
        game.tiebreak(final),
        game.is_finished(final),
    )
    assert run["official"] is game.is_finished(final)
    assert (run["actions"], run["seed"], run["yours"]) == (actions, None, True)
    assert api_store.attempts.get(attempt["attempt"]).over


def test_a_second_start_returns_the_same_attempt_there_is_no_restart(
    client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    first = start_attempt(client, puzzle).get_json()
    append_line(client, puzzle, first, actions[:5])
    again = start_attempt(client, puzzle)
    assert again.status_code == 200
    assert (again.get_json()["attempt"], again.get_json()["actions"]) == (
        first["attempt"],
        actions[:5],
    )
    assert client.get(f"/api/v1/attempts/{first['attempt']}").get_json() == again.get_json()
    over = play_attempt(client, puzzle, actions)
    after = start_attempt(client, puzzle).get_json()
    assert (after["attempt"], after["over"], after["run"]) == (first["attempt"], True, over["run"])
    refused = append(client, after, actions[:1])
    assert refused.status_code == 422
    assert api_store.attempts.get(first["attempt"]).played == len(actions)


@games
def test_a_retried_append_is_applied_once(game_name: str, client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, game_name)
    batch = attempt_batches(puzzle, over_run(get_game(game_name), puzzle.seed))[0]
    attempt = start_attempt(client, puzzle).get_json()
    first = append(client, attempt, batch)
    retried = append(client, attempt, batch)  # the answer to the first was lost
    assert (first.status_code, retried.status_code) == (200, 200)
    assert retried.get_json() == first.get_json()
    assert api_store.attempts.actions(attempt["attempt"]) == batch


def test_a_stale_played_count_is_a_409_with_the_current_state(
    client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    attempt = start_attempt(client, puzzle).get_json()
    current = append_line(client, puzzle, attempt, actions[:3])
    assert actions[0] != actions[1]
    for played, sent in ((0, actions[1:2]), (7, actions[7:8])):
        answer = append(client, {**attempt, "played": played}, sent)
        assert answer.status_code == 409
        body = answer.get_json()
        assert body["error"]
        assert body["actions"] == actions[:3]
        assert {key: body[key] for key in current} == current
    assert api_store.attempts.get(attempt["attempt"]).played == 3


def test_an_illegal_action_names_its_index_and_rule_and_appends_nothing(
    client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, "rallye-raser")
    attempt = start_attempt(client, puzzle).get_json()
    answer = append(client, attempt, [{"type": "gear", "gear": 2}, {"type": "no-such-action"}])
    assert answer.status_code == 422
    assert answer.get_json()["index"] == 1
    assert answer.get_json()["reason"].startswith("RR-27 (actions)")
    assert api_store.attempts.get(attempt["attempt"]).played == 0


def test_only_its_player_may_read_or_extend_an_attempt(app: Flask, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    owner, other = client_of(app), client_of(app)
    attempt = start_attempt(owner, puzzle).get_json()
    start_attempt(other, puzzle)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    for answer in (
        other.get(f"/api/v1/attempts/{attempt['attempt']}"),
        append(other, attempt, actions[:1]),
        client_of(app).get(f"/api/v1/attempts/{attempt['attempt']}"),
    ):
        assert answer.status_code == 404
    assert api_store.attempts.get(attempt["attempt"]).played == 0


def test_only_todays_daily_takes_attempts(client: FlaskClient, api_store: Store):
    today = daily.today()
    for day, status in ((today + timedelta(days=1), 404), (today - timedelta(days=1), 409)):
        answer = client.post(f"/api/v1/daily/{day}/{FINISHING_GAME}/attempt", json={})
        assert answer.status_code == status
        assert "Set-Cookie" not in answer.headers
    assert api_store.players.count() == 0


class RefusedError(Exception):
    pass


def test_two_concurrent_appends_with_the_same_count_let_exactly_one_through(store: Store):
    """On SQLite and PostgreSQL: of two appends checked against the same count, the
    database lets exactly one through, every time."""
    game = GAMES[FINISHING_GAME]
    puzzle = store.puzzles.ensure(
        FINISHING_GAME, "race", game.rules_version, daily_date=daily.today(), number=1
    )
    attempt, _ = store.attempts.start(puzzle.id, "p1", game.new_game(puzzle.seed), ONE_CLIENT)
    for _round in range(8):
        choices = game.legal_actions(attempt.state)[:2]
        if len(choices) < 2:
            break
        barrier, expected = Barrier(2), attempt.played

        def race(
            action: Any,
            barrier: Barrier = barrier,
            expected: int = expected,
            target: str = attempt.id,
        ) -> str:
            def extend(current: Any) -> Extension:
                # Both read the same count, where the database lets both read at once.
                with suppress(BrokenBarrierError):
                    barrier.wait(timeout=1)
                if current.played != expected:
                    raise RefusedError
                return Extension([action], game.apply(current.state, action))

            try:
                store.attempts.extend(target, extend)
            except (RefusedError, AttemptMoved):
                return "conflict"
            return "appended"

        with ThreadPoolExecutor(2) as pool:
            outcomes = sorted(pool.map(race, choices))
        assert outcomes == ["appended", "conflict"]
        attempt = store.attempts.get(attempt.id)
        stored = store.attempts.actions(attempt.id)
        assert attempt.played == expected + 1 == len(stored)
        assert stored[-1] in choices
    assert attempt.played >= 3


def next_action_of(game: Any, played_by: Callable[[Any], None]) -> Callable[[Any], Extension]:
    """An extend that appends the first legal action to the attempt it is given, telling
    played_by the attempt's count it saw."""

    def extend(current: Any) -> Extension:
        played_by(current.played)
        action = game.legal_actions(current.state)[0]
        return Extension([action], game.apply(current.state, action))

    return extend


def test_an_append_to_an_attempt_this_process_kept_at_the_clients_count_reads_nothing_first(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    game = GAMES[FINISHING_GAME]
    puzzle = store.puzzles.ensure(
        FINISHING_GAME, "kept", game.rules_version, daily_date=daily.today(), number=1
    )
    attempt, _ = store.attempts.start(puzzle.id, "p1", game.new_game(puzzle.seed), ONE_CLIENT)
    reads: list[str] = []
    read = store.attempts.get

    def counted_read(attempt_id: str) -> Any:
        reads.append(attempt_id)
        return read(attempt_id)

    monkeypatch.setattr(store.attempts, "get", counted_read)
    seen: list[int] = []
    for played in range(4):
        extended = store.attempts.extend(
            attempt.id, next_action_of(game, seen.append), None, played, "p1"
        )
        assert extended.played == played + 1
    assert seen == [0, 1, 2, 3]
    assert reads == [attempt.id], "only the first append reads the attempt"
    assert store.attempts.actions(attempt.id) == game_line(game, puzzle.seed, 4)
    # A client holding another count than the kept one: the attempt is read.
    with pytest.raises(RefusedError):
        store.attempts.extend(attempt.id, refuse, None, 2, "p1")
    assert reads == [attempt.id] * 2
    # Another player's request at the kept count reads it too: its time tells them nothing.
    with pytest.raises(RefusedError):
        store.attempts.extend(attempt.id, refuse, None, 4, "p2")
    assert reads == [attempt.id] * 3


def refuse(current: Any) -> Extension:
    raise RefusedError


def test_an_attempt_another_process_extended_since_is_read_again_not_refused(database_url: str):
    """Two processes (two stores on one database): what one kept is stale once the other
    appends, and an append at the count the client holds still goes through."""
    game = GAMES[FINISHING_GAME]
    first, second = Store(database_url), Store(database_url)
    try:
        puzzle = first.puzzles.ensure(
            FINISHING_GAME, "moved", game.rules_version, daily_date=daily.today(), number=1
        )
        attempt, _ = first.attempts.start(puzzle.id, "p1", game.new_game(puzzle.seed), ONE_CLIENT)
        seen: list[int] = []
        first.attempts.extend(attempt.id, next_action_of(game, seen.append), None, 0, "p1")
        second.attempts.extend(attempt.id, next_action_of(game, seen.append), None, 1, "p1")
        # The first process keeps the attempt at 1 action; the client now holds 2.
        extended = first.attempts.extend(
            attempt.id, next_action_of(game, seen.append), None, 2, "p1"
        )
        assert (extended.played, seen) == (3, [0, 1, 2])
        # A client still holding 2 (a retry) meets the stored count of 3, never a kept 2:
        # the second process kept it at 2, and its append's guard finds the attempt moved.
        retried = second.attempts.extend(
            attempt.id, next_action_of(game, seen.append), None, 2, "p1"
        )
        assert (retried.played, seen) == (4, [0, 1, 2, 2, 3])
        stored = first.attempts.actions(attempt.id)
        assert len(stored) == 4 == first.attempts.get(attempt.id).played
        assert stored == game_line(game, puzzle.seed, 4)
    finally:
        first.close()
        second.close()


def game_line(game: Any, seed: str, length: int) -> list[Any]:
    """The first legal action taken length times from the start."""
    state, line = game.new_game(seed), []
    for _ in range(length):
        action = game.legal_actions(state)[0]
        line.append(action)
        state = game.apply(state, action)
    return line


def test_the_append_that_ends_the_game_stores_the_run_in_the_same_step(store: Store):
    game = GAMES[FINISHING_GAME]
    puzzle = store.puzzles.ensure(
        FINISHING_GAME, "ends", game.rules_version, daily_date=daily.today(), number=1
    )
    actions = finished_run(game, puzzle.seed)
    attempt, created = store.attempts.start(
        puzzle.id, "p1", game.new_game(puzzle.seed), ONE_CLIENT, display_name="Ada"
    )
    final = game.replay(puzzle.seed, actions)
    result = RunResult(game.score(final), game.tiebreak(final), True)
    over = store.attempts.extend(
        attempt.id, lambda _current: Extension(actions, final, result, official=True)
    )
    assert created and over.over
    run = store.runs.get(over.run_id)
    assert (run.score, run.official, run.display_name, run.actions) == (
        result.score,
        True,
        "Ada",
        actions,
    )
    assert store.attempts.get(attempt.id) == over


# What others see of a run while the day lasts


def finish_as(
    app: Flask, puzzle: PuzzleRecord, variant: int, name: str
) -> tuple[FlaskClient, dict[str, Any]]:
    player = client_of(app)
    over = play_attempt(
        player, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, variant), name=name
    )
    return player, player.get(f"/api/v1/runs/{over['run']}").get_json()


def test_another_players_run_of_today_shows_its_score_not_its_line_until_the_day_is_over(
    app: Flask, api_store: Store, clock: Clock
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    _ada, adas_run = finish_as(app, puzzle, 0, "Ada")
    visitor = client_of(app)
    seen = visitor.get(f"/api/v1/runs/{adas_run['id']}").get_json()
    assert (seen["actions"], seen["seed"], seen["yours"]) == (None, None, False)
    assert (seen["name"], seen["score"], seen["game"], seen["number"], seen["date"]) == (
        "Ada",
        adas_run["score"],
        puzzle.game,
        puzzle.number,
        puzzle.daily_date.isoformat(),
    )
    # Nor once the visitor's own attempt is over: a second identity of theirs could play it.
    own = play_attempt(visitor, puzzle, finished_run(get_game(puzzle.game), puzzle.seed, 1))
    assert visitor.get(f"/api/v1/runs/{own['run']}").get_json()["actions"] is not None
    assert visitor.get(f"/api/v1/runs/{adas_run['id']}").get_json()["actions"] is None
    # Their own run replays step by step (what they saw while playing); Ada's does not.
    assert visitor.get(f"/api/v1/runs/{own['run']}/steps/2").status_code == 200
    refused = visitor.get(f"/api/v1/runs/{adas_run['id']}/steps/2")
    assert refused.status_code == 403
    assert refused.get_json()["line_opens_at"] == daily.revealed_at(puzzle.daily_date).isoformat()
    clock.set(daily.revealed_at(puzzle.daily_date))
    after = client_of(app).get(f"/api/v1/runs/{adas_run['id']}").get_json()
    assert (after["actions"], after["seed"]) == (adas_run["actions"], puzzle.seed)
    assert client_of(app).get(f"/api/v1/runs/{adas_run['id']}/steps/2").status_code == 200


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_a_run_replays_step_by_step_as_its_player_saw_it(
    game_name: str, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, game_name)
    game = get_game(game_name)
    actions = over_run(game, puzzle.seed)
    run_id = play_attempt(client, puzzle, actions)["run"]
    for step in (0, 1, len(actions) // 2, len(actions)):
        answer = client.get(f"/api/v1/runs/{run_id}/steps/{step}")
        assert answer.status_code == 200
        state = game.replay(puzzle.seed, actions[:step])
        assert answer.get_json() == {
            "step": step,
            "view": game.view(state),
            "legal_actions": game.legal_actions(state),
            "stakes": game.stakes(state, game.legal_actions(state)),
            "over": game.is_over(state),
            "finished": game.is_finished(state),
            "score": game.score(state),
            "tiebreak": game.tiebreak(state),
        }
    assert client.get(f"/api/v1/runs/{run_id}/steps/{len(actions) + 1}").status_code == 404
    assert client.get(f"/api/v1/runs/{run_id}/steps/01").status_code == 404
    assert client.get("/api/v1/runs/no-such-run/steps/0").status_code == 404


def test_practice_of_a_daily_opens_to_everyone_once_the_day_is_over_and_not_before(
    app: Flask, api_store: Store, clock: Clock
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    path = f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/play"
    player = client_of(app)
    assert player.post(path, json={"actions": actions[:3]}).status_code == 403
    play_attempt(player, puzzle, actions)
    refused = player.post(path, json={"actions": actions[:3]})
    assert refused.status_code == 403
    opens = daily.revealed_at(puzzle.daily_date)
    assert refused.get_json()["line_opens_at"] == opens.isoformat()
    clock.set(opens - timedelta(seconds=90))
    refused = player.post(path, json={"actions": []})
    assert (refused.status_code, refused.headers["Retry-After"]) == (403, "90")
    assert client_of(app).post(path, json={"actions": []}).status_code == 403
    clock.set(opens)
    practised = player.post(path, json={"actions": actions[:3]})
    assert practised.status_code == 200
    assert practised.get_json()["actions"] == actions[:3]
    assert client_of(app).post(path, json={"actions": actions}).get_json()["over"] is True
    assert len(api_store.runs.leaderboard(puzzle.id)) == 1


def test_an_attempt_finished_after_its_day_is_a_practice_run(
    app: Flask, api_store: Store, clock: Clock
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    actions = finished_run(get_game(puzzle.game), puzzle.seed)
    player = client_of(app)
    begun = play_attempt(player, puzzle, actions[:4])
    clock.set(datetime.combine(puzzle.daily_date + timedelta(days=1), datetime.min.time(), UTC))
    attempt = player.post(f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/attempt", json={})
    assert attempt.status_code == 409
    over = append_line(player, puzzle, begun, actions)
    assert player.get(f"/api/v1/runs/{over['run']}").get_json()["official"] is False
    assert api_store.runs.leaderboard(puzzle.id) == []


# Limits


def test_attempt_starts_are_limited_per_address_and_daily(make_app):
    app = make_app(RALLY_ATTEMPTS_PER_ADDRESS="2")
    store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME)
    household = client_of(app)
    address = household.environ_base["REMOTE_ADDR"]
    statuses = []
    for _ in range(3):
        household.delete_cookie(COOKIE_NAME)
        statuses.append(start_attempt(household, puzzle))
    assert [answer.status_code for answer in statuses] == [201, 201, 429]
    refused = statuses[-1]
    assert 0 < int(refused.headers["Retry-After"]) <= 24 * 3600
    assert COOKIE_NAME not in refused.headers.get("Set-Cookie", "")
    returning = client_of(app)
    returning.environ_base["REMOTE_ADDR"] = address
    other_game = todays_daily(store, "rallye-raser")
    assert start_attempt(returning, other_game).status_code == 201  # another daily
    assert start_attempt(client_of(app), puzzle).status_code == 201  # another address


def start_from(app: Flask, address: str, puzzle: PuzzleRecord) -> int:
    """The status of a new player's attempt start from address."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return start_attempt(client, puzzle).status_code


def test_the_attempt_limit_holds_while_redis_is_down(make_app, tmp_path, database_url: str):
    """Counted in the database in the transaction that starts each attempt: a Redis outage
    gives no address a fresh budget (each web process would count only what it saw)."""
    server = EmbeddedRedis(tmp_path / "r.sock", tmp_path / "redis")
    server.start()
    try:
        app = make_app(redis=server.url, database=database_url, RALLY_ATTEMPTS_PER_ADDRESS="2")
        puzzle = todays_daily(app.extensions["rally"].store, FINISHING_GAME)
        assert [start_from(app, "10.9.0.1", puzzle) for _ in range(2)] == [201, 201]
        server.stop()
        assert start_from(app, "10.9.0.1", puzzle) == 429
        later = make_app(redis=server.url, database=database_url, RALLY_ATTEMPTS_PER_ADDRESS="2")
        assert start_from(later, "10.9.0.1", puzzle) == 429  # a process started meanwhile
        assert start_from(later, "10.9.0.2", puzzle) == 201
    finally:
        server.stop()


def test_concurrent_starts_from_one_address_pass_the_limit_exactly(make_app, database_url: str):
    app = make_app(database=database_url, RALLY_ATTEMPTS_PER_ADDRESS="3")
    store = app.extensions["rally"].store
    puzzle = todays_daily(store, FINISHING_GAME)
    barrier = Barrier(8)

    def start(_: int) -> int:
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = "10.9.1.1"
        barrier.wait()
        return start_attempt(client, puzzle).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = sorted(pool.map(start, range(8)))
    assert statuses == [201] * 3 + [429] * 5


def test_the_database_keeps_a_keyed_hash_of_the_client_never_its_address(
    app: Flask, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    assert start_from(app, "203.0.113.77", puzzle) == 201
    assert start_from(app, "2001:db8:5:6::1", puzzle) == 201
    with api_store.database.engine.connect() as connection:
        clients = (
            connection.execute(sqlalchemy.select(Attempt.client).order_by(Attempt.created_at))
            .scalars()
            .all()
        )
        everything = json.dumps(
            [list(row) for row in connection.execute(sqlalchemy.select(Attempt.__table__))],
            default=str,
        )
    assert len(set(clients)) == 2 and all(re.fullmatch("[0-9a-f]{32}", c) for c in clients)
    for address in ("203.0.113.77", "2001:db8:5:6", "2001:db8:5:6::"):
        assert address not in everything


def test_new_player_ids_are_limited_per_address(make_app):
    app = make_app(RALLY_NEW_PLAYERS_PER_HOUR="2")
    puzzle = todays_daily(app.extensions["rally"].store, FINISHING_GAME)
    client = client_of(app)
    statuses = []
    for _ in range(3):
        client.delete_cookie(COOKIE_NAME)
        statuses.append(start_attempt(client, puzzle))
    assert [answer.status_code for answer in statuses] == [201, 201, 429]
    assert "Retry-After" in statuses[-1].headers
    assert app.extensions["rally"].store.players.count() == 2


# Names


REFUSED_NAMES = {
    "blank": "   ",
    "bidi override": "Ada\u202eevil",
    "zero-width space": "A\u200bda",
    "isolate": "Ada\u2066",
    "BOM": "\ufeffAda",
    "soft hyphen": "Ada\u00ad",
    "NEL": "Ad\u0085a",
    "Hangul filler": "\u3164",
    "Hangul choseong filler": "\u115f",
    "Hangul jungseong filler": "\u1160",
    "halfwidth Hangul filler": "\uffa0",
    "a filler beside a name": "Ada\u3164",
    "braille blank": "\u2800\u2800",
    "combining marks alone": "\u0301\u0308",
    "a mark on nothing": "\u0301Ada",
    "a mark on a space": " \u0301",
    "combining grapheme joiner": "Ad\u034fa",
    "line separator": "Ada\u2028Lovelace",
    "paragraph separator": "\u2029",
    "ideographic spaces": "\u3000\u3000",
    "no-break spaces": "\u00a0\u00a0\u00a0",
    "twenty variation selectors after a name": "Ada" + "\ufe0f" * 20,
    "twenty variation selectors": "\ufe0f" * 20,
    "two variation selectors after an emoji": "\u2764\ufe0f\ufe0f",
    "an emoji selector after a letter": "Ada\ufe0f",
    "a variation selector of an ideograph": "\u845b\U000e0100",
    "a Mongolian variation selector": "\u1820\u180b",
    "the musical null notehead": "\U0001d159",
    "a null notehead beside a name": "Ada\U0001d159",
}
ACCEPTED_NAMES = {
    "plain": "Ada",
    "accents": "Zoë Ångström",
    "Hangul": "한글",
    "emoji with a variation selector": "\u2764\ufe0f",
    "a keycap": "1\ufe0f\u20e3",
    "an emoji in text presentation": "\u2764\ufe0e Ada",
    "Devanagari": "देवनागरी",
    "a combining mark on a letter": "Zoe\u0308",
    "digits": "42",
}


@pytest.mark.parametrize("name", REFUSED_NAMES.values(), ids=REFUSED_NAMES.keys())
def test_names_with_invisible_or_reordering_characters_are_refused(
    name: str, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    answer = start_attempt(client, puzzle, name=name)
    assert answer.status_code == 400
    assert "name" in answer.get_json()["error"]
    assert api_store.players.count() == 0


@pytest.mark.parametrize("name", ACCEPTED_NAMES.values(), ids=ACCEPTED_NAMES.keys())
def test_names_in_any_script_are_accepted(name: str, client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    assert start_attempt(client, puzzle, name=name).status_code == 201


def test_a_name_is_stored_in_nfc_and_a_change_applies_to_later_runs_only(
    client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    over = play_attempt(
        client, puzzle, finished_run(get_game(puzzle.game), puzzle.seed), name="Zoe\u0308"
    )
    run = client.get(f"/api/v1/runs/{over['run']}").get_json()
    assert run["name"] == "Zo\u00eb"
    practice = api_store.puzzles.ensure(puzzle.game, "names", puzzle.rules_version)
    later = client.post(
        f"/api/v1/puzzles/{practice.game}/{practice.seed}/runs",
        json={"actions": over_run(get_game(practice.game), practice.seed), "name": "Ada"},
    ).get_json()
    assert later["name"] == "Ada"
    assert client.get(f"/api/v1/runs/{over['run']}").get_json()["name"] == "Zo\u00eb"
    board = client.get(f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/leaderboard")
    assert board.get_json()["entries"][0]["name"] == "Zo\u00eb"


def test_a_name_is_trimmed_and_its_spaces_folded(client: FlaskClient, api_store: Store):
    puzzle = todays_daily(api_store, FINISHING_GAME)
    start_attempt(client, puzzle, name="\u00a0 Ada\u2003\u00a0 Lovelace\u00a0\u00a0")
    assert client.get("/api/v1/me").get_json()["name"] == "Ada Lovelace"


def test_look_alike_names_on_one_board_are_told_apart_by_a_tag(app: Flask, api_store: Store):
    """An exact duplicate, a Cyrillic homoglyph and a name stored with trailing no-break
    spaces (before names were folded) all look like "Ada": each is marked with its own
    player's tag; a name like no other is not."""
    puzzle = todays_daily(api_store, FINISHING_GAME)
    game = get_game(puzzle.game)
    names = ["Ada", "Ada", "\u0410da", "Bo", "Legacy"]
    for variant, name in enumerate(names):
        play_attempt(client_of(app), puzzle, finished_run(game, puzzle.seed, variant), name=name)
    with api_store.database.engine.begin() as connection:  # a name stored before names were folded
        connection.execute(
            sqlalchemy.update(Run)
            .where(Run.display_name == "Legacy")
            .values(display_name="Ada\u00a0\u00a0")
        )
    board = client_of(app).get(f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/leaderboard")
    tags: dict[str, list[str | None]] = {}
    for entry in board.get_json()["entries"]:
        tags.setdefault(entry["name"], []).append(entry["tag"])
    assert tags["Bo"] == [None]
    marked = [*tags["Ada"], *tags["\u0410da"], *tags["Ada\u00a0\u00a0"]]
    assert len(marked) == 4 and len(set(marked)) == 4 and None not in marked
    assert all(re.fullmatch("[a-z2-7]{5}", tag) for tag in marked)
