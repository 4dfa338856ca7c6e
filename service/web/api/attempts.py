"""Attempts: today's daily played on the server, once per player.

The player starts their attempt (a second start returns the same one) and
sends actions in batches: `{"played": n, "actions": [...]}` is appended only
when n actions are played, so a retried request never applies an action twice
and two tabs cannot both extend the same position. Each acknowledged batch is
committed before the answer; when the game is over the attempt becomes the
player's run, official (ranked) when it finished on the daily's own day. There
is no undo and no restart.

A refusal tells nothing that was not paid for. A batch may end with an action
that reveals something (the engine says which: `Game.reveals`, a roll, a drawn
card), never go on after one: otherwise the index or the reason of a refusal
further on would depend on what that action revealed, and a player could read
the daily's future in refused requests, none of them committed. The batch is
checked in order and refused at the first action past a revealing one, or at
the first illegal one before that, so every refusal is a function of the
attempt as committed and the request alone: the actions checked before it
reveal nothing, and the legality and reasons of an action depend only on what
the player has been shown (tests/test_hidden_information.py). No revealing
action is applied in a refused batch, not even to be checked, unless it is the
batch's last.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from puzzles import GAMES, IllegalAction, State
from puzzles.base import AnyGame
from service.domain import daily
from service.storage.attempts import (
    AttemptMoved,
    AttemptRecord,
    ClientLimit,
    Extension,
    RunResult,
    TooManyAttempts,
)
from service.storage.puzzles import PuzzleRecord
from service.web import players
from service.web.api.common import (
    DISPLAY_NAME,
    ENGINE_STATE_PROPERTIES,
    LONGEST_RUN,
    PUZZLE,
    TOKEN_ID,
    actions_of,
    api,
    engine_answer,
    illegal,
    published_day,
    puzzle_by_id,
    puzzle_json,
    services,
)
from service.web.api.dailies import daily_of
from service.web.errors import ApiError
from service.web.openapi import Answer, Link, PathParam
from service.web.ratelimit import keyed_client_key

api.path_param(
    PathParam(
        "attempt_id",
        TOKEN_ID,
        "An attempt's id",
        invalid_status=404,
        invalid_message="no attempt {value!r}",
    )
)

ATTEMPT = api.schema(
    "Attempt",
    {
        "type": "object",
        "required": ["attempt", "played", *ENGINE_STATE_PROPERTIES, "run", "puzzle"],
        "properties": {
            "attempt": {**TOKEN_ID, "description": "The attempt's id"},
            "played": {"type": "integer", "minimum": 0, "description": "Actions played so far"},
            **ENGINE_STATE_PROPERTIES,
            "run": {
                "anyOf": [TOKEN_ID, {"type": "null"}],
                "description": "The run's id once the game is over, else null",
            },
            "actions": {
                "type": "array",
                "description": "The actions played so far: in the answers that start or read "
                "an attempt and in a 409, not after an append (the client sent them)",
            },
            "puzzle": PUZZLE,
        },
    },
)
# Where a started attempt leads: reading it, and playing it.
ATTEMPT_LINKS = {
    "GetAttempt": Link("get_attempt", {"attempt_id": "$response.body#/attempt"}),
    "AppendActions": Link("append_actions", {"attempt_id": "$response.body#/attempt"}),
}
START_BODY = {
    "type": "object",
    "properties": {"name": DISPLAY_NAME},
    "additionalProperties": False,
}
APPEND_BODY = {
    "type": "object",
    "required": ["played", "actions"],
    "properties": {
        "played": {
            "type": "integer",
            "minimum": 0,
            "description": "How many actions the client believes are played already",
        },
        "actions": actions_of(
            LONGEST_RUN,
            "The actions to append, in order: at most the longest run of any game (an "
            "action past the end of the attempt's game is illegal, a 422). They may end "
            "with an action that reveals something (a roll, a reroll, a drive that draws a "
            "card, a start, a setup card), never go on after one (a 422)",
        ),
        "name": DISPLAY_NAME,
    },
    "additionalProperties": False,
}


def attempt_json(
    attempt: AttemptRecord, puzzle: PuzzleRecord, with_actions: bool = False
) -> dict[str, Any]:
    """The attempt as answered; with its actions where a client resumes from it."""
    shown = {
        "attempt": attempt.id,
        "played": attempt.played,
        **engine_answer(GAMES[puzzle.game], attempt.state),
        "run": attempt.run_id,
        "puzzle": puzzle_json(puzzle),
    }
    if with_actions:
        shown["actions"] = services().store.attempts.actions(attempt.id)
    return shown


def _own_attempt(attempt_id: str) -> tuple[AttemptRecord, PuzzleRecord]:
    """The caller's attempt and its puzzle; 404 to anyone else, as if it did not exist."""
    attempt = services().store.attempts.get(attempt_id)
    if attempt is None or attempt.player_id != players.current_player_id():
        raise _not_yours(attempt_id)
    return attempt, puzzle_by_id(attempt.puzzle_id)


def _not_yours(attempt_id: str) -> ApiError:
    return ApiError(404, f"no attempt {attempt_id!r} of yours")


@api.route(
    "/daily/<day>/<game>/attempt",
    "POST",
    summary="Start today's attempt of a daily, or get it back",
    body=START_BODY,
    responses={
        200: Answer("The caller's attempt, started before", ATTEMPT, links=ATTEMPT_LINKS),
        201: Answer("The caller's attempt, started now", ATTEMPT, links=ATTEMPT_LINKS),
    },
    errors=[404, 409, 429],
)
def start_attempt(day: str, game: str, body: dict[str, Any]) -> tuple[Response, int]:
    """Start the caller's one attempt of today's daily, or return the one they have (there
    is no restart). A future date is a 404, a past one a 409 (practise it with POST
    /daily/{day}/{game}/play). Starting attempts is limited per client address and daily,
    counted in the database (so while Redis is down too)."""
    wanted = published_day(day)
    if wanted != daily.today():
        raise ApiError(
            409,
            f"the daily of {wanted} is over: practise it with POST "
            f"/api/v1/daily/{wanted}/{game}/play",
        )
    puzzle = daily_of(wanted, game)
    name = players.clean_display_name(body.get("name"))
    store = services().store
    player = players.current_player_id()
    existing = None if player is None else store.attempts.find(puzzle.id, player)
    if existing is not None:
        if name is not None:
            store.players.upsert(existing.player_id, name)
        return jsonify(attempt_json(existing, puzzle, with_actions=True)), 200
    config = services().config
    limit = ClientLimit(keyed_client_key(config.secret_key), config.attempts_per_address)
    try:
        attempt, created = store.attempts.start(
            puzzle.id,
            players.player_id_for_write(),
            GAMES[game].new_game(puzzle.seed),
            limit,
            display_name=name,
        )
    except TooManyAttempts as refused:
        raise ApiError.retry_later(
            429,
            f"too many attempts started on this daily from your address: at most "
            f"{refused.limit}; the next daily starts at 00:00 UTC",
            daily.seconds_until_revealed(wanted),
        ) from None
    return jsonify(attempt_json(attempt, puzzle, with_actions=True)), 201 if created else 200


@api.route(
    "/attempts/<attempt_id>",
    "GET",
    summary="One of the caller's attempts",
    responses={200: Answer("The attempt as it stands", ATTEMPT)},
    errors=[404],
)
def get_attempt(attempt_id: str) -> Response:
    """The caller's attempt: what they see and may play next. Another player's attempt is
    a 404."""
    return jsonify(attempt_json(*_own_attempt(attempt_id), with_actions=True))


def _already_applied(attempt: AttemptRecord, played: int, actions: list[Any]) -> bool:
    """True when these actions were appended at played before (a retried request)."""
    if not actions or played + len(actions) > attempt.played:
        return False
    stored = services().store.attempts.actions(attempt.id, played, played + len(actions))
    return stored == actions


def _conflict(attempt: AttemptRecord, puzzle: PuzzleRecord, played: int) -> ApiError:
    return ApiError(
        409,
        f"the attempt has {attempt.played} actions played, not {played}: "
        "continue from the state in this answer",
        **attempt_json(attempt, puzzle, with_actions=True),
    )


BATCH_REASON = (
    "a request's actions end with the first one that reveals something (a die rolled, "
    "a card drawn or dealt): send the actions after it in the next request"
)


def _past_a_revealing_action(index: int) -> ApiError:
    return ApiError(
        422,
        f"action {index} comes after action {index - 1}, which reveals something: {BATCH_REASON}",
        index=index,
        reason=BATCH_REASON,
    )


def _apply_batch(engine: AnyGame, state: State, actions: list[Any]) -> State:
    """The state after actions; 422 naming the index (in this request) of the first action
    refused: an illegal one, or one after an action that reveals something (which is
    then never applied)."""
    last = len(actions) - 1
    for index, action in enumerate(actions):
        if index < last and engine.reveals(state, action):
            raise _past_a_revealing_action(index + 1)
        try:
            state = engine.apply(state, action)
        except IllegalAction as error:
            raise illegal(error, index) from None
    return state


def _extension(
    attempt: AttemptRecord, puzzle: PuzzleRecord, played: int, actions: list[Any]
) -> Extension | None:
    """What to append to the attempt for this request; None for nothing (no actions, or a
    retry of actions appended before); ApiError 409 or 422 to refuse it."""
    engine = GAMES[puzzle.game]
    if puzzle.rules_version != engine.rules_version:
        raise ApiError(
            409,
            f"this attempt was played under rules {puzzle.rules_version}; "
            f"the game now plays {engine.rules_version}",
        )
    if played != attempt.played:
        if _already_applied(attempt, played, actions):
            return None
        raise _conflict(attempt, puzzle, played)
    if not actions:
        return None
    # No length check: past the game's longest run the engine refuses the next action anyway.
    state = _apply_batch(engine, attempt.state, actions)
    if not engine.is_over(state):
        return Extension(actions, state)
    result = RunResult(engine.score(state), engine.tiebreak(state), engine.is_finished(state))
    # A finished run on the daily's own day is ranked; an attempt that crashed out is over
    # (no restart) but has no score to rank.
    official = result.finished and puzzle.daily_date == daily.today()
    return Extension(actions, state, result, official)


@api.route(
    "/attempts/<attempt_id>/actions",
    "POST",
    summary="Append actions to the caller's attempt",
    body=APPEND_BODY,
    responses={200: Answer("The attempt after the actions", ATTEMPT)},
    errors=[404, 409, 422],
)
def append_actions(attempt_id: str, body: dict[str, Any]) -> Response:
    """Append the actions when `played` equals the number of actions already played. A
    retry of a batch already appended answers the attempt as it is; any other mismatch is a
    409 carrying the current attempt. The actions may end with one that reveals something
    (a roll, a drawn card) but not go on after it. An illegal action, or one after a
    revealing action, is a 422 naming its index in this request and the rule, and nothing
    is appended. Once over, `run` names the player's run."""
    played, actions = body["played"], body["actions"]
    name = players.clean_display_name(body.get("name"))
    player = players.current_player_id()

    def extend(attempt: AttemptRecord | None) -> Extension | None:
        if attempt is None or attempt.player_id != player:
            raise _not_yours(attempt_id)
        return _extension(attempt, puzzle_by_id(attempt.puzzle_id), played, actions)

    try:
        attempt = services().store.attempts.extend(
            attempt_id, extend, display_name=name, played=played, player_id=player
        )
    except AttemptMoved:  # another request appended first
        attempt, puzzle = _own_attempt(attempt_id)
        if not _already_applied(attempt, played, actions):
            raise _conflict(attempt, puzzle, played) from None
    return jsonify(attempt_json(attempt, puzzle_by_id(attempt.puzzle_id)))
