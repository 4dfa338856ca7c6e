"""Bad input gets a JSON 4xx with a message, and changes nothing."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema_rs
import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puzzles import GAMES, get_game
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web.action_forms import action_schema
from service.web.json_body import _body_problem, _body_text, _lone_surrogate, _nesting_depth
from tests.api_support import (
    FINISHING_GAME,
    client_of,
    finished_run,
    over_run,
    start_attempt,
    todays_daily,
)

GAME_NAME = FINISHING_GAME
LONGEST = get_game(GAME_NAME).max_actions
START = b'{"type": "start"}'


def assert_json_error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.data
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert body["status"] == status
    assert isinstance(body["error"], str)
    assert body["error"]
    return body


def practice(store: Store) -> PuzzleRecord:
    return store.puzzles.ensure(GAME_NAME, "errors", GAMES[GAME_NAME].rules_version)


def snapshot(store: Store, puzzle: PuzzleRecord) -> tuple[Any, ...]:
    """What a refused request must leave unchanged."""
    return (
        store.players.count(),
        store.runs.player_count(puzzle.id),
        store.runs.leaderboard(puzzle.id),
        store.runs.score_histogram(puzzle.id),
        store.puzzles.by_id(puzzle.id),
    )


BAD_BODIES = {
    "malformed JSON": b'{"actions": [',
    "not UTF-8": b'{"actions": ["\xff"]}',
    "NaN is not JSON": b'{"actions": [NaN]}',
    "not an object": b"[1, 2]",
    "no actions": b"{}",
    "actions not a list": b'{"actions": "north"}',
    "a client's score": b'{"actions": [], "score": 99}',
    "name not a string": b'{"actions": [], "name": 7}',
    "empty name": b'{"actions": [], "name": ""}',
    "name too long": b'{"actions": [], "name": "' + b"n" * 41 + b'"}',
    "control characters in the name": b'{"actions": [], "name": "a\\u0007b"}',
    "a lone surrogate in the name": b'{"actions": [], "name": "a\\udc00"}',
    "a lone surrogate in a key": b'{"actions": [], "\\ud800": 1}',
    "a lone surrogate in an action": b'{"actions": [{"type": "apply", "card": "\\udfff"}]}',
    "a surrogate encoded in the bytes": b'{"actions": [], "name": "a\xed\xa0\x80"}',
    "a lone surrogate beside an escaped quote": b'{"actions": [], "name": "\\"\\ud800"}',
    "a fraction": b'{"actions": [1.5]}',
    "an integer written as a fraction": b'{"actions": [{"type": "start", "x": 2.0}]}',
    "an exponent": b'{"actions": [1e3]}',
    "too many actions": b'{"actions": [' + b",".join([START] * (LONGEST + 1)) + b"]}",
    "nested too deep": b'{"actions": [{"type": ' + b"[" * 20 + b"]" * 20 + b"}]}",
    "deep, with an escape": b'{"actions": ' + b"[" * 17 + b"]" * 17 + b', "name": "\\"]"}',
    "nested beyond any parser": b'{"actions": ' + b"[" * 5000 + b"]" * 5000 + b"}",
}


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_bad_run_body_is_a_400_and_stores_nothing(
    body: bytes, client: FlaskClient, api_store: Store
):
    puzzle = practice(api_store)
    before = snapshot(api_store, puzzle)
    response = client.post(
        f"/api/v1/puzzles/{GAME_NAME}/{puzzle.seed}/runs",
        data=body,
        content_type="application/json",
    )
    assert_json_error(response, 400)
    assert "Set-Cookie" not in response.headers
    assert snapshot(api_store, puzzle) == before


# Bodies that look near a refusal but are good: the checks read what the JSON says, not its
# characters.
GOOD_NAMES = {
    "brackets in a string": ("[" * 20, "[" * 20),
    "brackets after an escaped quote": ('\\"' + "{" * 20, '"' + "{" * 20),
    "a surrogate pair spelling one character": ("\\ud83c\\udfc1 Ada", "\U0001f3c1 Ada"),
    "an escaped backslash before u": ("\\\\ud800", "\\ud800"),
}


@pytest.mark.parametrize(("escaped", "name"), GOOD_NAMES.values(), ids=GOOD_NAMES.keys())
def test_a_good_body_near_a_refusal_is_taken(
    escaped: str, name: str, client: FlaskClient, api_store: Store
):
    puzzle = practice(api_store)
    actions = json.dumps(finished_run(GAMES[GAME_NAME], puzzle.seed))
    body = f'{{"actions": {actions}, "name": "{escaped}"}}'.encode()
    response = client.post(
        f"/api/v1/puzzles/{GAME_NAME}/{puzzle.seed}/runs",
        data=body,
        content_type="application/json",
    )
    assert response.status_code == 201, response.data
    assert response.get_json()["name"] == name


# An attempt refuses too many actions as the rules do: the first one past the end is a 422.
BAD_APPEND_BODIES = {name: body for name, body in BAD_BODIES.items() if name != "too many actions"}


@pytest.mark.parametrize("body", BAD_APPEND_BODIES.values(), ids=BAD_APPEND_BODIES.keys())
def test_a_bad_append_body_is_a_400_and_appends_nothing(
    body: bytes, client: FlaskClient, api_store: Store
):
    puzzle = todays_daily(api_store, GAME_NAME)
    attempt = start_attempt(client, puzzle).get_json()
    response = client.post(
        f"/api/v1/attempts/{attempt['attempt']}/actions",
        data=body.replace(b'{"actions"', b'{"played": 0, "actions"'),
        content_type="application/json",
    )
    assert_json_error(response, 400)
    assert api_store.attempts.get(attempt["attempt"]).played == 0


@pytest.mark.parametrize("body", BAD_BODIES.values(), ids=BAD_BODIES.keys())
def test_a_bad_play_body_is_a_400(body: bytes, client: FlaskClient):
    response = client.post(
        f"/api/v1/play/{GAME_NAME}/any-seed", data=body, content_type="application/json"
    )
    assert_json_error(response, 400)


def test_too_many_actions_names_the_limit(client: FlaskClient):
    actions = over_run(get_game(GAME_NAME), "limit")
    padded = actions + actions[:1] * (LONGEST + 1 - len(actions))
    response = client.post(f"/api/v1/play/{GAME_NAME}/limit", json={"actions": padded})
    assert str(LONGEST) in assert_json_error(response, 400)["error"]


def test_an_oversized_body_is_a_413_naming_the_limit(make_app):
    app = make_app(RALLY_MAX_BODY_BYTES="1000")
    client = client_of(app)
    store = app.extensions["rally"].store
    puzzle = practice(store)
    before = snapshot(store, puzzle)
    body = b'{"actions": [' + b",".join([b'"padding"'] * 200) + b"]}"
    assert len(body) > 1000
    response = client.post(
        f"/api/v1/puzzles/{GAME_NAME}/{puzzle.seed}/runs",
        data=body,
        content_type="application/json",
    )
    assert "1000" in assert_json_error(response, 413)["error"]
    assert snapshot(store, puzzle) == before


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/puzzles/no-such-game/seed", 404),
        ("/api/v1/puzzles/no-such-game/seed/leaderboard", 404),
        (f"/api/v1/puzzles/{GAME_NAME}/bad%20seed", 400),
        (f"/api/v1/puzzles/{GAME_NAME}/{'s' * 65}", 400),
        (f"/api/v1/puzzles/{GAME_NAME}/bad.seed/solution", 400),
        (f"/api/v1/puzzles/{GAME_NAME}/never-requested", 404),
        (f"/api/v1/puzzles/{GAME_NAME}/never-requested/leaderboard", 404),
        (f"/api/v1/puzzles/{GAME_NAME}/never-requested/solution", 404),
        ("/api/v1/runs/bad%20id", 404),
        ("/api/v1/no-such-endpoint", 404),
    ],
)
def test_unknown_or_invalid_names_are_json_4xx_and_record_nothing(
    path: str, status: int, client: FlaskClient, api_store: Store
):
    assert_json_error(client.get(path), status)
    assert api_store.puzzles.pending() == []


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/api/v1/puzzles/no-such-game/seed/runs", 404),
        ("POST", f"/api/v1/puzzles/{GAME_NAME}/bad%21seed/runs", 400),
        ("POST", "/api/v1/play/no-such-game/seed", 404),
        ("POST", f"/api/v1/play/{GAME_NAME}/{'s' * 65}", 400),
        ("DELETE", "/api/v1/daily", 405),
        ("PUT", f"/api/v1/puzzles/{GAME_NAME}/seed/runs", 405),
    ],
)
def test_writes_to_unknown_names_or_methods_are_json_4xx(
    method: str, path: str, status: int, client: FlaskClient
):
    response = client.open(path, method=method, json={"actions": []})
    assert_json_error(response, status)


def test_the_405_keeps_its_allow_header(client: FlaskClient):
    response = client.delete("/api/v1/daily")
    assert "GET" in response.headers["Allow"]


def test_an_unexpected_failure_is_a_json_500_without_details(app: Flask):
    def broken() -> str:
        raise RuntimeError("secret internals")

    app.add_url_rule("/broken", "broken", broken)
    app.config["PROPAGATE_EXCEPTIONS"] = False
    body = assert_json_error(client_of(app).get("/broken"), 500)
    assert "secret" not in body["error"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 99) | st.text(max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=6,
)


# Not an action at all: the document says an action is an object whose `type` is a string
# and whose other fields are integers, strings or null.
MALFORMED_ACTIONS = [
    None,
    5,
    "move",
    [],
    {},
    {"type": None},
    {"type": []},
    {"type": {}},
    {"type": "start", "card": {"nested": 1}},
    {"type": "start", "card": [1]},
    {"type": "start", "card": True},
]
# Of the form of an action, but none the rules know: theirs to refuse, naming the index.
UNKNOWN_ACTIONS = [{"type": "no-such-type"}, {"type": "start", "no-such-field": 1}]


@pytest.mark.parametrize(
    ("game_name", "action"),
    [(name, action) for name in sorted(GAMES) for action in MALFORMED_ACTIONS],
)
def test_a_malformed_action_is_a_400_naming_it(game_name: str, action: Any, client: FlaskClient):
    response = client.post(f"/api/v1/play/{game_name}/any-seed", json={"actions": [action]})
    assert assert_json_error(response, 400)["error"].startswith("actions/0")


@pytest.mark.parametrize(
    ("game_name", "action"),
    [(name, action) for name in sorted(GAMES) for action in UNKNOWN_ACTIONS],
)
def test_an_action_the_rules_do_not_know_is_a_422(game_name: str, action: Any, client: FlaskClient):
    response = client.post(f"/api/v1/play/{game_name}/any-seed", json={"actions": [action]})
    assert assert_json_error(response, 422)["index"] == 0


@pytest.mark.parametrize("game_name", sorted(GAMES))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_tampered_action_is_a_422_naming_it_never_a_server_error(
    game_name: str, client: FlaskClient, data: st.DataObject
):
    game = get_game(game_name)
    actions = over_run(game, "tampered")
    index = data.draw(st.integers(0, len(actions) - 1), label="index")
    original = actions[index]
    tampered: Any
    if isinstance(original, dict) and original:
        field = data.draw(st.sampled_from(sorted(original)) | st.text(max_size=6), label="field")
        tampered = {**original, field: data.draw(json_values, label="value")}
    else:
        tampered = data.draw(json_values, label="action")
    response = client.post(
        f"/api/v1/play/{game_name}/tampered",
        json={"actions": [*actions[:index], tampered]},
    )
    assert response.status_code in (200, 400, 422), response.data
    if response.status_code == 422:
        assert response.get_json()["index"] == index
    if response.status_code == 400:  # not of an action's JSON form, say true for an integer
        assert re.match(f"actions/{index}[/:]", response.get_json()["error"])


def integer_fields(game_name: str) -> list[tuple[list[Any], int, str]]:
    """(actions, index, field) for every integer field of every action type in a run."""
    actions = over_run(get_game(game_name), "forms")
    first_of_type = {action["type"]: index for index, action in reversed(list(enumerate(actions)))}
    return [
        (actions, index, field)
        for index in sorted(first_of_type.values())
        for field, form in GAMES[game_name].action_forms[actions[index]["type"]].items()
        if form == "integer"
    ]


@pytest.mark.parametrize("game_name", sorted(GAMES))
def test_every_action_of_a_game_has_its_documented_form(game_name: str):
    validator = jsonschema_rs.validator_for(action_schema())
    game = get_game(game_name)
    for seed in ("forms-1", "forms-2", "forms-3"):
        state = game.new_game(seed)
        for action in over_run(game, seed):
            assert set(action) - {"type"} == set(game.action_forms[action["type"]])
            for legal in game.legal_actions(state):
                assert validator.is_valid(legal), legal
            state = game.apply(state, action)


@pytest.mark.parametrize("form", ["true", "false", "{value}.0", "{value}e0", '"{value}"', "null"])
def test_an_integer_field_in_another_json_form_is_a_400_and_stores_nothing(
    form: str, client: FlaskClient, api_store: Store
):
    cases = integer_fields("rallye-raser")
    assert {field for _, _, field in cases} == {"gear", "die", "row", "step", "delta"}
    puzzle = api_store.puzzles.ensure("rallye-raser", "forms", GAMES["rallye-raser"].rules_version)
    todays = todays_daily(api_store, "rallye-raser")
    attempt = start_attempt(client, todays).get_json()
    before = snapshot(api_store, puzzle), snapshot(api_store, todays)
    for actions, index, field in cases:
        value = form.format(value=actions[index][field])
        prefix = json.dumps(actions[:index])[:-1] + (", " if index else "")
        sent = json.dumps({**actions[index], field: "FORM"}).replace('"FORM"', value)
        listed = prefix + sent + "]"
        for path, body in (
            (f"play/{puzzle.game}/{puzzle.seed}", '{"actions": ' + listed + "}"),
            (f"puzzles/{puzzle.game}/{puzzle.seed}/runs", '{"actions": ' + listed + "}"),
            (f"attempts/{attempt['attempt']}/actions", '{"played": 0, "actions": ' + listed + "}"),
        ):
            response = client.post(
                f"/api/v1/{path}", data=body.encode(), content_type="application/json"
            )
            error = assert_json_error(response, 400)["error"]
            assert f"actions/{index}/{field}" in error or "not an integer" in error, error
    assert (snapshot(api_store, puzzle), snapshot(api_store, todays)) == before
    assert api_store.attempts.get(attempt["attempt"]).played == 0


def nesting_of(value: Any) -> int:
    """How deep lists and objects nest in value, by walking it."""
    if isinstance(value, dict):
        return 1 + max(map(nesting_of, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting_of, value), default=0)
    return 0


# Text rich in what could mislead a reading of the JSON text: lone surrogates (high, low, and
# halves of a pair), which Python strings can hold and JSON escapes can spell, quotes,
# backslashes and brackets.
MISLEADING = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83c\udfc1", '"', "\\", "\\u", "[", "}"]
text_with_surrogates = st.lists(st.sampled_from(MISLEADING) | st.characters(), max_size=8).map(
    "".join
)
deep_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | text_with_surrogates,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(text_with_surrogates, children, max_size=3)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=deep_json_values, ascii_only=st.booleans(), indent=st.sampled_from([None, 1]))
def test_the_body_check_reads_off_the_text_what_a_walk_of_the_value_finds(
    value: Any, ascii_only: bool, indent: int | None
):
    """Brackets and quotes inside strings, escapes and whitespace never change the nesting
    counted on the text, and no lone surrogate gets past the check."""
    raw = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode("utf-8", "surrogatepass")
    try:
        text = _body_text(raw)
    except UnicodeDecodeError:
        return  # a raw surrogate in the bytes: refused before parsing
    body = json.loads(text)
    assert _nesting_depth(text) == nesting_of(body)
    problem = _body_problem(text, body, nesting_of(body))
    assert (problem is not None) == (_lone_surrogate(body) is not None)
