"""`rally par` and `rally analyse`: the expert's run of a seed, and a run's graded decisions."""

from __future__ import annotations

import json
from typing import Any

import click

from puzzles.cli import load_game_and_seed, read_actions, replay_or_fail, run_file_command
from solver import expert


@click.command()
@click.argument("game")
@click.argument("seed")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def par(game: str, seed: str, as_json: bool) -> None:
    """The expert's own run of SEED, played without foresight."""
    load_game_and_seed(game, seed, as_json)
    result = expert.par(game, seed)
    if as_json:
        click.echo(json.dumps(result))
    else:
        click.echo(f"{game} {seed}: par {result['par']} tie-break {result['par_tiebreak']}")
        click.echo(f"seconds: {result['seconds']}  actions: {len(result['actions'])}")


def _loss_text(loss: dict[str, float]) -> str:
    return (
        f"{loss['points']:.2f} ± {loss['points_error']:.2f} points, "
        f"{loss['tiebreak']:.2f} ± {loss['tiebreak_error']:.2f} tie-break"
    )


@run_file_command
def analyse(game: str, seed: str, file: Any, as_json: bool) -> None:
    """Grade every decision of the run in FILE (a JSON list, '-' for stdin) against the expert."""
    engine = load_game_and_seed(game, seed, as_json)
    actions = read_actions(file, as_json)
    replay_or_fail(engine, seed, actions, as_json)
    result = expert.analyse(game, seed, actions)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"result {result['result']}  optimum {result['optimum']}")
    click.echo(f"lost by decisions: {_loss_text(result['decision_loss'])}")
    click.echo(f"the rest (luck):   {_loss_text(result['luck'])}")
    decisions = result["decisions"]
    costliest = sorted(decisions, key=lambda d: (d["loss"]["points"], d["loss"]["tiebreak"]))
    costliest.reverse()
    for decision in costliest[:5]:
        click.echo(
            f"action {decision['index']}: {json.dumps(decision['action'])} "
            f"(expert: {json.dumps(decision['expert'])}) costs {_loss_text(decision['loss'])}"
        )
