"""Whether the graded decisions add up: calibration, precision and cost of grading.

On N seeds (`calibration-K` ...), the expert's par and the reference players' runs
(greedy, the blind greedy where the game has one, heuristic); each run graded
(`analyse`). If the grades are calibrated, what a
player's decisions lost in all ("lost by decisions") is, on average over seeds,
what the player scored below par: the dice and the draw even out. Per player:

- calibration: the mean of "lost by decisions" beside the mean of (par - result),
  and the mean of their difference with its 95% interval over the seeds (it
  agrees when the interval holds 0);
- the luck after the run's rerolls: what the grade expected of each reroll, against
  what it expected of the decision the dice then set. For a player who rerolls
  without seeing the dice to come it is nothing on average; Rallye Raser's greedy
  player plans a round seeing its rerolls, and it shows there (its blind greedy
  player aims the same way without that sight);
- precision: the stated 95% errors of each decision's loss and of each run's
  total, median and max, and how many are within the issue's bounds;
- cost: CPU seconds to grade a run, median and max, and the peak memory of a
  grading process.

An unfinished run counts 0 points, as everywhere.

Usage: python -m bench.calibration [--game NAME] [--seeds N] [--start K] [--workers W]
(each seed's figures go to stderr as a JSON line as they come)
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.expert import result
from puzzles.base import Action
from solver.expert import analyse, par
from solver.kit import AnyKit
from solver.registry import KITS, kit_of

# The precision the grades must reach, in points: (each decision, a run's total).
BOUNDS = {"rallye-raser": (0.5, 1.5), "crazy-rally": (1.5, 3.0)}


def measure_seed(job: tuple[str, str]) -> dict[str, Any]:
    game_name, seed = job
    expert = par(game_name, seed)
    row: dict[str, Any] = {"seed": seed, "par": expert["par"] or 0, "players": {}}
    for name, play in reference_players(kit_of(game_name)).items():
        actions = play(seed)
        started = time.process_time()
        graded = analyse(game_name, seed, actions, optimum=(None, None))
        row["players"][name] = {
            "result": result(game_name, seed, actions)[0],
            "lost": graded["decision_loss"]["points"],
            "lost_error": graded["decision_loss"]["points_error"],
            "reroll_luck": luck_after_rerolls(graded),
            "decision_errors": [d["loss"]["points_error"] for d in graded["decisions"]],
            "cpu": time.process_time() - started,
        }
    row["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def reference_players(kit: AnyKit) -> dict[str, Callable[[str], list[Action]]]:
    """The players whose runs are graded: a run's actions from its seed."""
    blind = {"blind greedy": kit.blind_greedy_actions} if kit.blind_greedy_actions else {}
    return {"greedy": kit.greedy_actions, **blind, "heuristic": kit.heuristic_actions}


def luck_after_rerolls(graded: dict[str, Any]) -> float:
    """The points the dice of the run's rerolls brought beyond what the grade expected:
    at each reroll directly followed by a decision, that decision's value (the
    expert's) less the reroll's."""
    decisions = graded["decisions"]
    return sum(
        after["expected"]["expert"]["points"] - before["expected"]["player"]["points"]
        for before, after in itertools.pairwise(decisions)
        if before["action"]["type"] == "reroll" and after["index"] == before["index"] + 1
    )


def interval(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval."""
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return statistics.fmean(values), 1.96 * spread / math.sqrt(len(values))


def report(game_name: str, rows: list[dict[str, Any]]) -> None:
    decision_bound, total_bound = BOUNDS.get(game_name, (math.inf, math.inf))
    print(f"\n== {game_name}: calibration on {len(rows)} seeds, mean par {_par(rows):.2f}")
    names = list(rows[0]["players"])
    for name in names:
        runs = [row["players"][name] for row in rows]
        below_par = [row["par"] - run["result"] for row, run in zip(rows, runs, strict=True)]
        differences = [run["lost"] - gap for run, gap in zip(runs, below_par, strict=True)]
        mean, error = interval(differences)
        print(
            f"{name:12s}  lost by decisions {statistics.fmean(r['lost'] for r in runs):6.2f}  "
            f"par - result {statistics.fmean(below_par):6.2f}  difference {mean:+.2f} ± "
            f"{error:.2f} ({'agrees' if abs(mean) <= error else 'does not agree'})"
        )
        luck, luck_error = interval([run["reroll_luck"] for run in runs])
        print(f"{'':12s}  luck after rerolls, a run: {luck:+.2f} ± {luck_error:.2f}")
        each = [e for run in runs for e in run["decision_errors"]]
        totals = [run["lost_error"] for run in runs]
        print(
            f"{'':12s}  decision errors: median {statistics.median(each):.2f}  max "
            f"{max(each):.2f}, {sum(e <= decision_bound for e in each)}/{len(each)} within "
            f"{decision_bound}; run totals: median {statistics.median(totals):.2f}  max "
            f"{max(totals):.2f}, {sum(e <= total_bound for e in totals)}/{len(totals)} within "
            f"{total_bound}"
        )
    cpu = [row["players"][name]["cpu"] for row in rows for name in names]
    print(
        f"grading a run, CPU seconds: median {statistics.median(cpu):.2f}  max {max(cpu):.2f};"
        f" peak memory of a grading process {max(row['peak_mib'] for row in rows):.0f} MiB"
    )


def _par(rows: list[dict[str, Any]]) -> float:
    return statistics.fmean(row["par"] for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", choices=sorted(KITS), action="append")
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds = [f"calibration-{n}" for n in range(args.start, args.start + args.seeds)]
    context = multiprocessing.get_context("spawn")
    for game_name in args.game or sorted(KITS):
        rows = []
        with context.Pool(args.workers, maxtasksperchild=1) as pool:
            for row in pool.imap(measure_seed, [(game_name, seed) for seed in seeds]):
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
        report(game_name, rows)


if __name__ == "__main__":
    main()
