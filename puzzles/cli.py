"""Command-line access to the engines: `rally legal`, `rally replay`, `rally play`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from puzzles import GAMES, IllegalAction, get_game
from puzzles.base import AnyGame, Game, S, State
from puzzles.playout import play_out

EXIT_BAD_INPUT = 2


def fail(message: str, as_json: bool, **fields: Any) -> NoReturn:
    """Report an error (as JSON on stdout when asked) and exit with status 2."""
    if as_json:
        click.echo(json.dumps({"error": message, **fields}))
    else:
        click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def load_game_and_seed(game_name: str, seed: str, as_json: bool) -> AnyGame:
    try:
        game = get_game(game_name)
        game.new_game(seed)
    except KeyError as error:
        fail(error.args[0], as_json)
    except ValueError as error:
        fail(str(error), as_json)
    return game


def read_actions(stream: Any, as_json: bool) -> list[Any]:
    try:
        actions = json.load(stream)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        fail(f"FILE is not valid JSON: {error}", as_json)
    if not isinstance(actions, list):
        fail("FILE must hold a JSON list of actions", as_json)
    return actions


def replay_or_fail(game: Game[S, Any, Any], seed: str, actions: list[Any], as_json: bool) -> S:
    try:
        return game.replay(seed, actions)
    except IllegalAction as error:
        fail("illegal action", as_json, index=error.index, reason=error.reason)


def replay_summary(game: Game[S, Any, Any], state: S) -> dict[str, Any]:
    return {
        "score": game.score(state),
        "tiebreak": game.tiebreak(state),
        "finished": game.is_finished(state),
        "over": game.is_over(state),
    }


def run_file_command(function: Callable[..., None]) -> click.Command:
    """A command taking GAME SEED FILE [--json], as `replay` and `legal` both do."""
    for decorate in reversed(
        (
            click.argument("game"),
            click.argument("seed"),
            click.argument("file", type=click.File("r")),
            click.option("--json", "as_json", is_flag=True, help="Print JSON."),
        )
    ):
        function = decorate(function)
    return click.command()(function)


@run_file_command
def replay(game: str, seed: str, file: Any, as_json: bool) -> None:
    """Replay the actions in FILE (a JSON list, '-' for stdin) and print the result."""
    engine = load_game_and_seed(game, seed, as_json)
    actions = read_actions(file, as_json)
    summary = replay_summary(engine, replay_or_fail(engine, seed, actions, as_json))
    if as_json:
        click.echo(json.dumps(summary))
    else:
        for key, value in summary.items():
            click.echo(f"{key}: {value}")


@run_file_command
def legal(game: str, seed: str, file: Any, as_json: bool) -> None:
    """Print the legal actions after replaying FILE (a JSON list, '-' for stdin)."""
    engine = load_game_and_seed(game, seed, as_json)
    actions = read_actions(file, as_json)
    options = engine.legal_actions(replay_or_fail(engine, seed, actions, as_json))
    if as_json:
        click.echo(json.dumps(options))
    else:
        for number, action in enumerate(options):
            click.echo(f"{number:3d}  {json.dumps(action)}")


class GameName(click.ParamType[str]):
    """A registered game's name, checked against the registry when the command runs (so
    a game registered after this module was imported is one)."""

    name = "game"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if value in GAMES:
            return str(value)
        known = ", ".join(repr(name) for name in sorted(GAMES))
        self.fail(f"{value!r} is not one of {known}.", param, ctx)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "[" + "|".join(sorted(GAMES)) + "]"


def show_position(view: dict[str, Any]) -> None:
    for key, value in view.items():
        click.echo(f"  {key}: {json.dumps(value)}")


def choose_action(options: list[Any]) -> Any:
    for number, action in enumerate(options):
        click.echo(f"  [{number}] {json.dumps(action)}")
    picked = click.prompt("action", type=click.IntRange(0, len(options) - 1))
    return options[picked]


@click.command()
@click.argument("game", required=False, type=GameName())
@click.argument("seed", required=False)
def play(game: str | None, seed: str | None) -> None:
    """Play GAME with SEED in the terminal, choosing among the legal actions."""
    game = game or click.prompt("game", type=click.Choice(sorted(GAMES)))
    seed = seed or click.prompt("seed", default="practice")
    engine = load_game_and_seed(game, seed, as_json=False)

    def ask(state: State, options: list[Any]) -> Any:
        click.echo("")
        show_position(engine.view(state))
        return choose_action(options)

    state = play_out(engine, engine.new_game(seed), ask)[0]
    click.echo("")
    show_position(engine.view(state))
    click.echo(f"score: {engine.score(state)} (tie-break {engine.tiebreak(state)})")
