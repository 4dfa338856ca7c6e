"""Fits the value of a round's end (`Leaf` in lookahead.py) to the search's own play.

Fitted value iteration by Monte Carlo: the search plays whole races on training seeds
(never the seeds the par is measured on), every round's end is recorded with what the
leaf sees of it, and the points and rounds the race ended with; the leaf's figures
are then chosen to predict those, and the search may play again with them. One
iteration is shipped: a second one oscillates (the first fit's careful play loses
control so rarely that the next fit finds no mishap, and plays carelessly again;
docs/puzzle-quality.md).

- points: the chances of `DialOdds` on a grid by least squares over every round's end,
  or held at figures given with --odds; then the worth of a held reserve die, as the
  mean error of round ends with one less that of round ends without;
- rounds: the rounds still to drive, by linear least squares on the rows left, the
  gears below 3 and engine damage.

Least squares does not choose the chances that play best: the points of round ends
hardly tell a control point spent now from one spent later, and a fit that prices
control low plays as though it were free. The shipped chances were chosen by measuring
the par on whole races (docs/puzzle-quality.md) and are given with --odds.

Run: python -m solver.rallye_raser.leaf_fit --seeds 60 --iterations 1 --odds M,C,T,K
(writes solver/rallye_raser/leaf.json, with the seeds and the fit's figures).
"""

from __future__ import annotations

import argparse
import itertools
import json
import pathlib
import sys
from statistics import fmean
from typing import NamedTuple

from puzzles.base import Action
from puzzles.playout import play_out
from puzzles.rallye_raser.engine import MAX_ROUNDS, RallyeRaser
from puzzles.rallye_raser.states import State
from puzzles.rallye_raser.track import card_index
from solver.rallye_raser.lookahead import (
    LEAF_FILE,
    DialOdds,
    Leaf,
    LookaheadPlayer,
    Outlook,
    dial_points,
    outlook_of,
)

GAME = RallyeRaser()
# The figures the search was built with by hand: where the iteration starts.
FIRST_GUESS = Leaf(DialOdds(0.3, 0.8, 0.8, 0.0), 0.3, 1.8, 1.0, 0.5, 0.0)
MISHAPS = [step / 20 for step in range(13)]  # 0 to 0.6
CLEAN_FINISHES = [step / 20 for step in range(10, 21)]  # 0.5 to 1
TOP_GEAR_CHECKS = [step / 20 for step in range(8, 21)]  # 0.4 to 1
TOP_GEAR_CONTROLS = [step / 4 for step in range(5)]  # 0 to 1
ODDS_GRID = list(
    itertools.starmap(
        DialOdds, itertools.product(MISHAPS, CLEAN_FINISHES, TOP_GEAR_CHECKS, TOP_GEAR_CONTROLS)
    )
)


class RoundEnd(NamedTuple):
    """What the leaf sees of a round's end, and how the race it belongs to ended."""

    timer: int
    control: int
    checks: int  # gear checks left (RR-21)
    top_cost: int | None  # control a shift to gear 3 costs (Outlook.top_gear_cost)
    reserve: bool
    gear: int
    damaged: bool
    rows_left: float  # as the round's start saw it: rows in view, the rest expected
    rounds_left: float  # rounds the race drove after this one (MAX_ROUNDS if unfinished)
    points: float  # the race's final points (0 if unfinished, RR-22, RR-26)
    then_cost: int = 0  # control gear 3 costs after a check in gear 1 (Outlook.then_gear_cost)


def round_end(outlook: Outlook, after: State, points: int, rounds: int) -> RoundEnd:
    """The round end reached from outlook's round, seen as the leaf saw it then."""
    car, starts = (after["car"]["row"], after["car"]["lane"]), after["card_starts"]
    return RoundEnd(
        after["timer"],
        after["control"],
        outlook.card_count - 1 - card_index(starts, car[0]),
        outlook.top_gear_cost(car, after["gear"], after["no_upshift"], starts),
        after["reserve"] is not None,
        after["gear"],
        after["no_upshift"],
        outlook.rows_left(car[0]),
        rounds - outlook.round_number,
        points,
        outlook.then_gear_cost(car, starts),
    )


def race(seed: str, leaf: Leaf) -> tuple[int, list[RoundEnd]]:
    """The search's race on seed with leaf: its points, and every round's end that is
    not the finish."""
    player = LookaheadPlayer(leaf)
    starts: list[tuple[Outlook, State]] = []

    def policy(state: State, options: list[Action]) -> Action:
        if state["phase"] == "shift" and (
            not starts or starts[-1][0].round_number != state["round"]
        ):
            starts.append((outlook_of(state, leaf), state))
        return player.choose(state, options)

    final, _ = play_out(GAME, GAME.new_game(seed), policy)
    score = GAME.score(final)
    points, rounds = (0, MAX_ROUNDS) if score is None else (score, -GAME.tiebreak(final))
    return points, [
        round_end(outlook, after, points, rounds)
        for (outlook, _), (_, after) in itertools.pairwise(starts)
    ]


def fit_points(ends: list[RoundEnd], candidates: list[DialOdds]) -> tuple[DialOdds, float]:
    """The candidate odds closest to the final points, and the worth of a held reserve
    die."""
    best: tuple[float, DialOdds, float] | None = None
    for odds in candidates:
        residuals = [
            e.points - dial_points(e.timer, e.control, e.checks, odds, e.top_cost, e.then_cost)
            for e in ends
        ]
        reserve = reserve_worth(residuals, [e.reserve for e in ends])
        error = sum((r - reserve * e.reserve) ** 2 for r, e in zip(residuals, ends, strict=True))
        if best is None or error < best[0]:
            best = (error, odds, reserve)
    assert best is not None
    return best[1], round(best[2], 2)


def reserve_worth(residuals: list[float], held: list[bool]) -> float:
    """What round ends with a reserve die ended above the odds' points, beyond what
    those without one did: the odds may miss the level of the play as a whole."""
    with_die = [r for r, h in zip(residuals, held, strict=True) if h]
    without = [r for r, h in zip(residuals, held, strict=True) if not h]
    if not with_die:
        return 0.0
    return fmean(with_die) - (fmean(without) if without else 0.0)


def fit_rounds(ends: list[RoundEnd]) -> tuple[float, float, float, float]:
    """(rows per round, rounds per gear below 3, rounds per damage, base rounds)."""
    terms = [[e.rows_left, 3.0 - e.gear, float(e.damaged), 1.0] for e in ends]
    per_row, slow, damage, base = least_squares(terms, [float(e.rounds_left) for e in ends])
    return round(1 / per_row, 3), round(slow, 2), round(damage, 2), round(base, 2)


def least_squares(terms: list[list[float]], target: list[float]) -> list[float]:
    """The coefficients of terms closest to target: the normal equations, solved by
    Gauss-Jordan elimination with partial pivoting."""
    size = len(terms[0])
    rows = [
        [sum(t[i] * t[j] for t in terms) for j in range(size)]
        + [sum(t[i] * y for t, y in zip(terms, target, strict=True))]
        for i in range(size)
    ]
    for column in range(size):
        pivot = max(range(column, size), key=lambda row: abs(rows[row][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        for row in range(size):
            if row != column:
                factor = rows[row][column] / rows[column][column]
                rows[row] = [a - factor * b for a, b in zip(rows[row], rows[column], strict=True)]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def fit(ends: list[RoundEnd], candidates: list[DialOdds] = ODDS_GRID) -> Leaf:
    odds, reserve = fit_points(ends, candidates)
    return Leaf(odds, reserve, *fit_rounds(ends))


def calibration(leaf: Leaf, ends: list[RoundEnd]) -> dict[str, float]:
    """Mean predicted and final points and rounds left over the round ends."""
    points = [
        dial_points(e.timer, e.control, e.checks, leaf.odds, e.top_cost, e.then_cost)
        + leaf.reserve_points * e.reserve
        for e in ends
    ]
    rounds = [
        leaf.base_rounds
        + e.rows_left / leaf.rows_per_round
        + (3 - e.gear) * leaf.slow_gear_rounds
        + e.damaged * leaf.damage_rounds
        for e in ends
    ]
    return {
        "predicted_points": round(fmean(points), 3),
        "final_points": round(fmean([e.points for e in ends]), 3),
        "predicted_rounds_left": round(fmean(rounds), 3),
        "rounds_left": round(fmean([e.rounds_left for e in ends]), 3),
    }


def iterate(
    seeds: list[str], leaf: Leaf, iterations: int, candidates: list[DialOdds] = ODDS_GRID
) -> tuple[Leaf, list[dict[str, object]]]:
    """Play the seeds with leaf and fit a new one, iterations times; each entry of the
    history holds the mean points played and the new leaf's calibration."""
    history: list[dict[str, object]] = []
    for _ in range(iterations):
        races = [race(seed, leaf) for seed in seeds]
        ends = [end for _, race_ends in races for end in race_ends]
        played = fmean([points for points, _ in races])
        leaf = fit(ends, candidates)
        history.append({"mean_points": round(played, 3), **calibration(leaf, ends)})
        print(json.dumps(history[-1]), file=sys.stderr, flush=True)
    return leaf, history


def odds_given(text: str) -> DialOdds:
    """--odds: the dials' chances as mishap,clean_finish,top_gear_check,top_gear_control."""
    figures = [float(figure) for figure in text.split(",")]
    if len(figures) != len(DialOdds._fields) or not all(0 <= f <= 1 for f in figures):
        raise argparse.ArgumentTypeError(f"four chances between 0 and 1, not {text!r}")
    return DialOdds(*figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=60)
    parser.add_argument("--prefix", default="fit")
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--out", type=pathlib.Path, default=LEAF_FILE)
    parser.add_argument(
        "--odds",
        type=odds_given,
        help="hold the dials' chances at mishap,clean_finish,top_gear_check,top_gear_control",
    )
    args = parser.parse_args()
    seeds = [f"{args.prefix}-{i}" for i in range(args.seeds)]
    candidates = [args.odds] if args.odds else ODDS_GRID
    leaf, history = iterate(seeds, FIRST_GUESS, args.iterations, candidates)
    held = f" --odds {','.join(map(str, args.odds))}" if args.odds else ""
    document = {
        "generator": "python -m solver.rallye_raser.leaf_fit "
        f"--seeds {args.seeds} --prefix {args.prefix} --iterations {args.iterations}{held}",
        "training_seeds": f"{args.prefix}-0..{args.seeds - 1}",
        "iterations": history,
        "leaf": leaf.as_json(),
    }
    args.out.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
