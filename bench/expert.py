"""The expert's strength, cost and consistency, per game (solver.expert).

Strength: on N seeds (`quality-K` ...), the expert's par, the greedy and the
heuristic players' results beside the hindsight optimum: mean and median gap to
it in points and tie-break (an unfinished run counts 0 points), mean result and
how often each finishes, how often each reaches the optimum's points and its
tie-break there; par CPU seconds median, p95 and max.

Cost of grading: the heuristic player's runs of the first G seeds graded
(`analyse`, the optimum given, as the service passes the stored one): seconds
median and max, peak memory of the grading process.

Consistency: D decisions of those runs graded with rng_seed 0 and 1: how often
the expert's choice is the same, and how often the two losses agree within the
sum of their stated errors.

Usage: python -m bench.expert [--seeds N] [--start K] [--game NAME] [--grade G]
                              [--decisions D] [--workers W] [--no-strength]
       python -m bench.expert --game NAME --from-log FILE
(each seed's strength figures go to stderr as a JSON line as they come; --from-log
reports the strength of the seeds such a log holds, for a sweep cut short;
--grade 0 leaves out grading and consistency, --no-strength the strength sweep)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import sys
import time
from typing import Any

from puzzles import get_game
from solver import solve
from solver.expert import analyse, grade, par, player_views
from solver.registry import KITS, kit_of

PLAYERS = ("expert", "greedy", "heuristic")


def result(game_name: str, seed: str, actions: list[Any]) -> tuple[int, int | None]:
    """(points, tie-break) of a run: 0 points and no tie-break when unfinished."""
    game = get_game(game_name)
    final = game.replay(seed, actions)
    if not game.is_finished(final):
        return 0, None
    return game.score(final) or 0, game.tiebreak(final)


def measure_seed(game_name: str, seed: str) -> dict[str, Any]:
    players = kit_of(game_name)
    optimum = solve(game_name, seed)
    started = time.process_time()
    expert = par(game_name, seed)
    cpu = time.process_time() - started
    runs = {
        "expert": expert["actions"],
        "greedy": players.greedy_actions(seed),
        "heuristic": players.heuristic_actions(seed),
    }
    return {
        "seed": seed,
        "optimum": (optimum.optimum or 0, optimum.tiebreak),
        "results": {name: result(game_name, seed, run) for name, run in runs.items()},
        "par_cpu": cpu,
    }


def measure_seed_of(job: tuple[str, str]) -> dict[str, Any]:
    return measure_seed(*job)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report_strength(game_name: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n== {game_name}: strength on {len(rows)} seeds")
    print(
        "player     mean pts  mean gap  median gap  finished  gap when finished  "
        "tie-break gap when finished"
    )
    for name in PLAYERS:
        points = [row["results"][name][0] for row in rows]
        gaps = [row["optimum"][0] - row["results"][name][0] for row in rows]
        done = [row for row in rows if row["results"][name][1] is not None]
        done_gap = [row["optimum"][0] - row["results"][name][0] for row in done]
        tie_gap = [row["optimum"][1] - row["results"][name][1] for row in done]
        print(
            f"{name:9s}  {statistics.fmean(points):8.2f}  {statistics.fmean(gaps):8.2f}  "
            f"{statistics.median(gaps):10.1f}  {len(done):4d}/{len(rows):<4d}  "
            f"{_mean(done_gap):17.2f}  {_mean(tie_gap):27.2f}"
        )
    for name in PLAYERS:
        report_at_optimum(name, rows)
    optimum_ties = [row["optimum"][1] for row in rows if row["optimum"][1] is not None]
    print(f"optimum: mean points {statistics.fmean(r['optimum'][0] for r in rows):.2f}", end="")
    print(f", mean tie-break {statistics.fmean(optimum_ties):.2f}" if optimum_ties else "")
    cpu = [row["par_cpu"] for row in rows]
    slowest = max(rows, key=lambda row: row["par_cpu"])
    print(
        f"par CPU seconds: median {statistics.median(cpu):.2f}  p95 {percentile(cpu, 0.95):.2f}"
        f"  max {max(cpu):.2f} ({slowest['seed']})"
    )


def report_at_optimum(name: str, rows: list[dict[str, Any]]) -> None:
    """How often a player reaches the optimum's points, its tie-break there (Rallye
    Raser: minus the rounds), and how many of its runs did not finish."""
    there = [row for row in rows if row["results"][name][0] == row["optimum"][0]]
    unfinished = sum(row["results"][name][1] is None for row in rows)
    ties = [row["results"][name][1] for row in there if row["results"][name][1] is not None]
    print(
        f"{name:9s}  at the optimum's points {len(there)}/{len(rows)} "
        f"({100 * len(there) / len(rows):.0f}%), mean tie-break there {_mean(ties):.2f}; "
        f"unfinished {unfinished}"
    )


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def measure_grading(game_name: str, seeds: list[str], decisions: int, out: Any) -> None:
    """Grade the heuristic player's runs; time each, then check consistency."""
    players = kit_of(game_name)
    seconds, graded_runs = [], []
    for seed in seeds:
        actions = players.heuristic_actions(seed)
        optimum = solve(game_name, seed)
        started = time.process_time()
        graded = analyse(game_name, seed, actions, optimum=(optimum.optimum, optimum.tiebreak))
        seconds.append(time.process_time() - started)
        graded_runs.append((seed, actions, graded))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.put((seconds, peak, consistency(game_name, graded_runs, decisions)))


def consistency(game_name: str, graded_runs: list, decisions: int) -> tuple[int, int, int]:
    """(decisions compared, same expert choice, losses within the stated errors)."""
    picked = [
        (seed, actions, graded["decisions"][part * len(graded["decisions"]) // 3]["index"])
        for seed, actions, graded in graded_runs
        for part in range(3)
        if graded["decisions"]
    ][:decisions]
    same = agree = 0
    for seed, actions, index in picked:
        view = list(player_views(game_name, seed, actions[:index]))[-1]
        first, second = (grade(game_name, view, actions[index], rng) for rng in (0, 1))
        assert first is not None and second is not None
        same += first["expert"] == second["expert"]
        difference = abs(first["loss"]["points"] - second["loss"]["points"])
        errors = first["loss"]["points_error"] + second["loss"]["points_error"]
        tie_difference = abs(first["loss"]["tiebreak"] - second["loss"]["tiebreak"])
        tie_errors = first["loss"]["tiebreak_error"] + second["loss"]["tiebreak_error"]
        agree += difference <= errors + 1e-9 and tie_difference <= tie_errors + 1e-9
    return len(picked), same, agree


def report_grading(game_name: str, seconds: list[float], peak: float, agreed: tuple) -> None:
    print(
        f"grading a heuristic run ({len(seconds)} runs), CPU seconds: median "
        f"{statistics.median(seconds):.2f}  max {max(seconds):.2f}; peak memory {peak:.0f} MiB"
    )
    compared, same, agree = agreed
    print(
        f"consistency on {compared} decisions, rng_seed 0 and 1: same choice {same}, "
        f"losses within the stated errors {agree}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--game", choices=sorted(KITS), action="append")
    parser.add_argument("--grade", type=int, default=10)
    parser.add_argument("--decisions", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-strength", action="store_true")
    parser.add_argument("--from-log", type=argparse.FileType("r"))
    args = parser.parse_args()
    seeds = [f"quality-{n}" for n in range(args.start, args.start + args.seeds)]
    if args.from_log:
        # A sweep stopped by a signal ends its log with a traceback: only JSON lines count.
        lines = [line for line in args.from_log if line.startswith("{")]
        report_strength(args.game[0], [json.loads(line) for line in lines])
        return
    context = multiprocessing.get_context("spawn")
    for game_name in args.game or sorted(KITS):
        if not args.no_strength:
            strength(context, game_name, seeds, args.workers)
        if args.grade:
            grading(context, game_name, seeds[: args.grade], args.decisions)


def strength(context: Any, game_name: str, seeds: list[str], workers: int) -> None:
    rows = []
    with context.Pool(workers) as pool:
        for row in pool.imap(measure_seed_of, [(game_name, seed) for seed in seeds]):
            # A long sweep says how far it got, so that a partial run still tells something.
            print(json.dumps(row), file=sys.stderr, flush=True)
            rows.append(row)
    report_strength(game_name, rows)


def grading(context: Any, game_name: str, seeds: list[str], decisions: int) -> None:
    out = context.Queue()
    worker = context.Process(target=measure_grading, args=(game_name, seeds, decisions, out))
    worker.start()
    report_grading(game_name, *out.get())
    worker.join()


if __name__ == "__main__":
    main()
