"""Crazy Rally: solver speed and puzzle quality over a range of seeds.

Usage: python bench/crazy_rally_quality.py [SEEDS] [--independent]

Prints, for seeds daily-0 .. daily-(SEEDS-1): the optimum, solve time (OR-Tools
path and, with --independent, the best-first search), how far the greedy and
heuristic players stay from it, which events the optimal witnesses play, and
the peak memory of the process.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections import Counter

from puzzles import get_game
from puzzles.crazy_rally_cards import EVENTS
from solver.crazy_rally import (
    find_optimum,
    greedy_actions,
    heuristic_actions,
    independent_optimum,
)

GAME = get_game("crazy-rally")


def timed(function, *args):
    started = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - started


def quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return f"median {statistics.median(ordered):.3f} s, p95 {p95:.3f} s, max {ordered[-1]:.3f} s"


def score_of(seed: str, actions: list) -> int | None:
    return GAME.score(GAME.replay(seed, actions))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("seeds", nargs="?", type=int, default=50)
    parser.add_argument("--independent", action="store_true")
    args = parser.parse_args()
    rows = []
    for index in range(args.seeds):
        seed = f"daily-{index}"
        best, seconds = timed(find_optimum, seed)
        row = {"seed": seed, "best": best, "seconds": seconds}
        if args.independent:
            row["independent"], row["independent_seconds"] = timed(independent_optimum, seed)
            assert row["independent"] == (best.optimum, best.tiebreak), seed
        row["greedy"] = score_of(seed, greedy_actions(seed))
        row["heuristic"] = score_of(seed, heuristic_actions(seed))
        row["events"] = [
            EVENTS[a["event"]].effect for a in best.actions if a.get("event") is not None
        ]
        print(seed, (best.optimum, best.tiebreak), f"{seconds:.3f} s", flush=True)
        rows.append(row)
    report(rows, args.independent)


def report(rows: list[dict], independent: bool) -> None:
    finished = [r for r in rows if r["best"].optimum is not None]
    print(f"seeds {len(rows)}, no finishing run {len(rows) - len(finished)}")
    print("OR-Tools path:", quantiles([r["seconds"] for r in rows]))
    if independent:
        print("best-first search:", quantiles([r["independent_seconds"] for r in rows]))
    optima = Counter(r["best"].optimum for r in finished)
    pairs = Counter((r["best"].optimum, r["best"].tiebreak) for r in finished)
    print("optima:", sorted(optima.items()))
    print(f"distinct (score, tie-break) pairs {len(pairs)}, most common {pairs.most_common(3)}")
    greedy = [r for r in finished if r["greedy"] is not None]
    print(
        f"greedy: finished {len(greedy)}/{len(rows)}, reached the optimum "
        f"{sum(r['greedy'] == r['best'].optimum for r in greedy)}, mean gap when finished "
        f"{statistics.mean(r['best'].optimum - r['greedy'] for r in greedy):.1f}"
    )
    heuristic = [r for r in finished if r["heuristic"] is not None]
    print(
        f"heuristic: finished {len(heuristic)}/{len(rows)}, mean gap "
        f"{statistics.mean(r['best'].optimum - r['heuristic'] for r in heuristic):.1f}"
    )
    print("events played by optimal witnesses:", Counter(e for r in rows for e in r["events"]))
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
