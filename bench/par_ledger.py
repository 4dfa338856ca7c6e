"""Rallye Raser's par on many seeds, and where its dials went.

On N seeds (`quality-K` ...), the expert's own run (`solver.expert.par`, as the
service computes a daily's par), replayed through the engine; every change of the
dials is put down to its cause. Per run: control spent fitting dice (RR-15), control
spent on two-step shifts (RR-5), gear checks by gear (RR-21), checks in gear 3 with
the timer already 6 (their timer point lost), losses of control (RR-17) and engine
damage (RR-19); and the final dials. It prints the par's strength against the
issue's aims (mean points, how often 18, rounds when at 18, every run finished),
its CPU per game, and the ledger for runs at 18 and below, side by side.

Cheaper than `bench.expert`, which also solves each seed's optimum and plays the
reference players: this is the bench to tune the par with.

Usage: python -m bench.par_ledger [--seeds N] [--start K] [--workers W]
(each seed's figures go to stderr as a JSON line as they come)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from collections import Counter
from typing import Any

from puzzles.base import Action
from puzzles.rallye_raser.engine import RallyeRaser
from puzzles.rallye_raser.states import State
from solver.expert import par

GAME = RallyeRaser()
CAUSES = ("fit_dice", "two_step_shifts", "gear_3_at_full_timer", "losses", "damage")


def causes(before: State, action: Action, after: State) -> Counter[str]:
    """What one action did to the dials, by cause."""
    found: Counter[str] = Counter()
    if action["type"] == "control":
        found["fit_dice"] += 1
    elif action["type"] == "gear":
        found["two_step_shifts"] += before["control"] - after["control"]
    elif action["type"] == "move":
        if after["card_a"] != before["card_a"]:
            found[f"checks_in_gear_{after['gear']}"] += 1
            found["gear_3_at_full_timer"] += after["gear"] == 3 and before["timer"] == 6
        elif after["timer"] < before["timer"] and after["status"] == "running":
            found["losses"] += 1
        if after["no_upshift"]:
            found["damage"] += 1
    return found


def measure_seed(seed: str) -> dict[str, Any]:
    started = time.process_time()
    run = par(GAME.name, seed)
    cpu = time.process_time() - started
    state, ledger = GAME.new_game(seed), Counter[str]()
    for action in run["actions"]:
        after = GAME.apply(state, action)
        ledger += causes(state, action, after)
        state = after
    return {
        "seed": seed,
        "points": run["par"],
        "rounds": state["round"],
        "final": [state["timer"], state["control"]],
        "ledger": dict(ledger),
        "cpu": round(cpu, 3),
    }


def strength(rows: list[dict[str, Any]]) -> dict[str, Any]:
    at_18 = [row for row in rows if row["points"] == 18]
    return {
        "seeds": len(rows),
        "mean_points": round(statistics.fmean(row["points"] or 0 for row in rows), 2),
        "at_18": f"{len(at_18)} of {len(rows)} ({100 * len(at_18) / len(rows):.0f}%)",
        "rounds_at_18": round(statistics.fmean(row["rounds"] for row in at_18), 1)
        if at_18
        else None,
        "mean_rounds": round(statistics.fmean(row["rounds"] for row in rows), 1),
        "runs_of_33_rounds_or_more": sum(row["rounds"] >= 33 for row in rows),
        "unfinished": sum(row["points"] is None for row in rows),
        "cpu_median_s": round(statistics.median(row["cpu"] for row in rows), 2),
        "cpu_max_s": round(max(row["cpu"] for row in rows), 2),
    }


def ledger_per_run(rows: list[dict[str, Any]]) -> dict[str, float]:
    total: Counter[str] = Counter()
    for row in rows:
        total.update(row["ledger"])
    kinds = [*CAUSES, *sorted(k for k in total if k.startswith("checks_"))]
    per_run = {kind: round(total[kind] / len(rows), 2) for kind in kinds}
    per_run["final_control"] = round(statistics.fmean(row["final"][1] for row in rows), 2)
    return per_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seeds = [f"quality-{i}" for i in range(args.start, args.start + args.seeds)]
    rows = []
    with multiprocessing.Pool(args.workers) as pool:
        for row in pool.imap(measure_seed, seeds):
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    print(json.dumps({"strength": strength(rows)}, indent=2))
    for name, chosen in (
        ("at 18", [row for row in rows if row["points"] == 18]),
        ("below 18", [row for row in rows if row["points"] != 18]),
    ):
        if chosen:
            print(json.dumps({"ledger per run, " + name: ledger_per_run(chosen)}))


if __name__ == "__main__":
    main()
