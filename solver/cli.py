"""`rally solve`: the proven optimum of one seed, or of many in batch mode."""

from __future__ import annotations

import json
import statistics
from collections import Counter

import click
from tqdm import tqdm

from puzzles.cli import fail, load_game_and_seed
from solver.core import SolveResult
from solver.core import solve as solve_seed
from solver.kit import SolverError


def batch_summary(results: list[SolveResult]) -> str:
    """A table of the optimum distribution and solve-time median and max."""
    optima = Counter((r.optimum, r.tiebreak) for r in results)
    times = [r.seconds for r in results]
    lines = ["optimum  tiebreak  seeds"]
    for (optimum, tiebreak), count in sorted(optima.items(), key=str):
        lines.append(f"{optimum!s:>7}  {tiebreak!s:>8}  {count:5d}")
    unproved = sum(not r.proved for r in results)
    lines.append(f"seeds: {len(results)}  unproved: {unproved}")
    lines.append(f"solve seconds: median {statistics.median(times):.3f}  max {max(times):.3f}")
    return "\n".join(lines)


def solve_one(game: str, seed: str, as_json: bool) -> None:
    load_game_and_seed(game, seed, as_json)
    try:
        result = solve_seed(game, seed)
    except (KeyError, SolverError) as error:
        fail(str(error), as_json)
    if as_json:
        click.echo(json.dumps(result.to_json()))
    else:
        click.echo(f"{game} {seed}: optimum {result.optimum} tie-break {result.tiebreak}")
        click.echo(f"proved: {result.proved}  seconds: {result.seconds}")
        click.echo(f"witness: {len(result.actions)} actions")


def solve_batch(game: str, count: int, start: int) -> None:
    load_game_and_seed(game, str(start), as_json=False)
    results = [
        solve_seed(game, str(number))
        for number in tqdm(range(start, start + count), desc=f"solving {game}", unit="seed")
    ]
    click.echo(batch_summary(results))


@click.command()
@click.argument("game")
@click.argument("seed", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--count", type=click.IntRange(min=1), help="Batch mode: solve this many seeds.")
@click.option(
    "--start",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Batch mode: the first seed number.",
)
def solve(game: str, seed: str | None, as_json: bool, count: int | None, start: int) -> None:
    """Prove the optimum of SEED, or with --count of seeds START..START+COUNT-1."""
    if (seed is None) == (count is None):
        fail("give either SEED or --count", as_json)
    if count is not None:
        solve_batch(game, count, start)
    else:
        solve_one(game, str(seed), as_json)
