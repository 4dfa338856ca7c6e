"""Helpers of the API tests: settings, clients of their own, runs to play, dailies to play.

Rate limits count in the test process's own Redis database (see
fixtures/servers.py); each client has its own remote address, so that tests never
share a rate-limit window.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from puzzles import GAMES, Game
from puzzles.playout import random_playout, seeded_chooser
from service.config import Config
from service.domain import daily
from service.storage.puzzles import PuzzleRecord

# Keys of this test run: random, as no key printed in the repository is accepted.
from service.storage.store import Store

# Keys of this test run: random, as no key printed in the repository is accepted.
DAILY_KEY = secrets.token_urlsafe(32)
SECRET_KEY = secrets.token_urlsafe(32)
# Random playouts of this game often reach the finish, so finished runs are cheap to find.
FINISHING_GAME = "crazy-rally"
_addresses = itertools.count(1)

AppFactory = Callable[..., Flask]


def api_config(instance_path: Path, database_url: str, redis_url: str, **settings: str) -> Config:
    env = {
        "RALLY_INSTANCE_PATH": str(instance_path),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "RALLY_SECRET_KEY": SECRET_KEY,
        "RALLY_DAILY_KEY": DAILY_KEY,
        **settings,
    }
    return Config.from_env(env)


def client_of(app: Flask) -> FlaskClient:
    """A test client with a remote address no other client has."""
    number = next(_addresses)
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = (
        f"10.{number // 65536 % 256}.{number // 256 % 256}.{number % 256}"
    )
    return client


def over_run(game: Game, seed: str) -> list[Any]:
    """The actions of a random run of seed played until no action is legal."""
    return random_playout(game, seed, seeded_chooser(seed, "over"))[1]


def finished_run(game: Game, seed: str, variant: int = 0) -> list[Any]:
    """The actions of a run of seed that reaches the finish, from seeded random playouts.

    Each variant draws its own playouts, so variants are (most likely) different runs.
    """
    for attempt in range(500):
        chooser = seeded_chooser(seed, f"finish/{variant}/{attempt}")
        final, actions = random_playout(game, seed, chooser)
        if game.is_finished(final):
            return actions
    raise AssertionError(f"no random playout of {game.name}/{seed} finished in 500 tries")


def unfinished_run(game: Game, seed: str) -> list[Any]:
    """The actions of a run of seed that ends without finishing (eliminated), from seeded
    random playouts."""
    for attempt in range(500):
        final, actions = random_playout(game, seed, seeded_chooser(seed, f"dnf/{attempt}"))
        if not game.is_finished(final):
            return actions
    raise AssertionError(f"every random playout of {game.name}/{seed} finished in 500 tries")


def todays_daily(store: Store, game_name: str, day: date | None = None) -> PuzzleRecord:
    """The daily puzzle of game for day (today by default), recorded as pending."""
    day = day or daily.today()
    return store.puzzles.ensure(
        game_name,
        daily.daily_seed(DAILY_KEY, game_name, day),
        GAMES[game_name].rules_version,
        daily_date=day,
        number=daily.puzzle_number(day),
    )


def start_attempt(client: FlaskClient, puzzle: PuzzleRecord, **body: Any) -> Any:
    """The answer to starting (or getting back) the client's attempt of today's daily."""
    assert puzzle.daily_date is not None
    return client.post(f"/api/v1/daily/{puzzle.daily_date}/{puzzle.game}/attempt", json=body)


def attempt_batches(puzzle: PuzzleRecord, actions: list[Any], played: int = 0) -> list[Any]:
    """actions[played:] cut as an attempt takes them: each batch ends at the first action
    that reveals something (puzzles.base.Game.batches)."""
    game = GAMES[puzzle.game]
    return game.batches(game.replay(puzzle.seed, actions[:played]), actions[played:])


def play_attempt(
    client: FlaskClient, puzzle: PuzzleRecord, actions: list[Any], **body: Any
) -> dict[str, Any]:
    """Start (or continue) the client's attempt and append what of actions is not played
    yet (append_line); the attempt as answered last."""
    started = start_attempt(client, puzzle)
    assert started.status_code in (200, 201), started.get_json()
    attempt = started.get_json()
    assert attempt["actions"] == actions[: attempt["played"]]
    return append_line(client, puzzle, attempt, actions, **body)


def append_line(
    client: FlaskClient,
    puzzle: PuzzleRecord,
    attempt: dict[str, Any],
    actions: list[Any],
    **body: Any,
) -> dict[str, Any]:
    """Append what of actions the attempt has not played yet, one batch a request as the
    attempt takes them (the body's other fields, a name, go with the last); the attempt as
    answered last."""
    played = attempt["played"]
    batches = attempt_batches(puzzle, actions, played)
    for number, batch in enumerate(batches, start=1):
        answer = client.post(
            f"/api/v1/attempts/{attempt['attempt']}/actions",
            json={"played": played, "actions": batch, **(body if number == len(batches) else {})},
        )
        assert answer.status_code == 200, answer.get_json()
        attempt, played = answer.get_json(), played + len(batch)
    return attempt
