"""Solver speed and puzzle quality, per game.

Solves N seeds of each game and prints: the distribution of optima, how many
seeds have no finishing run, solve time median / p95 / max, the OR-Tools solve
time beside the independent exact search's time on the same seeds, peak memory,
and how a simple greedy player and a heuristic player fare against the optimum.
Each game runs in its own process so its peak memory is its own.

For Rallye Raser it also prints the spread of the optimal round count, the
share of seeds that the most common optimal (score, rounds) pair covers, and how
many gear checks (one per card advance, rule RR-21) the optimal runs meet.

Usage: python -m bench.solver [--seeds N] [--game NAME] [--start K]
                              [--solve-only | --no-independent]
(--solve-only: only the OR-Tools solve, for long timing sweeps; --no-independent:
everything but the independent exact search, the slowest part, for quality sweeps)
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from puzzles import get_game
from solver import solve
from solver.registry import KITS, kit_of


@dataclass
class GameFigures:
    game: str
    optima: Counter = field(default_factory=Counter)
    gear_checks: Counter = field(default_factory=Counter)  # Rallye Raser: checks per optimal run
    solve_seconds: list[float] = field(default_factory=list)
    solve_cpu_seconds: list[float] = field(default_factory=list)  # CPU time: the machine is shared
    seeds: list[str] = field(default_factory=list)
    independent_seconds: list[float] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    greedy_gaps: list[int] = field(default_factory=list)
    greedy_reached: int = 0
    greedy_finished: int = 0
    heuristic_finished: int = 0
    peak_mib: float = 0.0


def gear_checks(seed: str, actions: list) -> int:
    """The gear checks a Rallye Raser run meets: one per round whose cards advance."""
    game = get_game("rallye-raser")
    state, checks = game.new_game(seed), 0
    for action in actions:
        state = game.apply(state, action)
        if action["type"] == "move":
            checks += any(event["type"] == "gear_check" for event in state["last_round"])
    return checks


def run_result(game_name: str, seed: str, actions: list) -> tuple[int | None, int]:
    game = get_game(game_name)
    final = game.replay(seed, actions)
    return game.score(final), game.tiebreak(final)


def measure_seed(
    figures: GameFigures, seed: str, solve_only: bool = False, independent: bool = True
) -> None:
    kit = kit_of(figures.game)
    cpu_started = time.process_time()
    result = solve(figures.game, seed)
    figures.solve_cpu_seconds.append(time.process_time() - cpu_started)
    figures.seeds.append(seed)
    figures.optima[(result.optimum, result.tiebreak)] += 1
    figures.solve_seconds.append(result.seconds)
    if figures.game == "rallye-raser":
        figures.gear_checks[gear_checks(seed, result.actions)] += 1
    if solve_only:
        # A long sweep says how far it got, so that a partial run still tells something.
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{seed} {result.optimum} {result.tiebreak} {result.seconds:.2f}s "
            f"cpu {figures.solve_cpu_seconds[-1]:.2f}s peak {rss:.0f} MiB",
            file=sys.stderr,
            flush=True,
        )
        return
    if independent and kit.independent_optimum is not None:
        started = time.perf_counter()
        exact = kit.independent_optimum(seed)
        figures.independent_seconds.append(time.perf_counter() - started)
        if exact != (result.optimum, result.tiebreak):
            figures.disagreements.append(seed)
    greedy = run_result(figures.game, seed, kit.greedy_actions(seed))
    if greedy[0] is not None:
        figures.greedy_finished += 1
        figures.greedy_gaps.append((result.optimum or 0) - greedy[0])
    figures.greedy_reached += greedy == (result.optimum, result.tiebreak)
    heuristic = run_result(figures.game, seed, kit.heuristic_actions(seed))
    figures.heuristic_finished += heuristic[0] is not None


def measure_game(
    game_name: str,
    seeds: list[str],
    out: multiprocessing.Queue,
    solve_only: bool,
    independent: bool,
) -> None:
    figures = GameFigures(game_name)
    for seed in seeds:
        measure_seed(figures, seed, solve_only, independent)
    figures.peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.put(figures)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def rallye_raser_spread(figures: GameFigures) -> None:
    """The optimal round count's spread and the most common pair's share of seeds."""
    count = sum(figures.optima.values())
    rounds: Counter[int | None] = Counter()
    for (_, tiebreak), seeds in figures.optima.items():
        rounds[None if tiebreak is None else -tiebreak] += seeds
    spread = "  ".join(f"{n}: {seeds}" for n, seeds in sorted(rounds.items(), key=str))
    print(f"optimal rounds (rounds: seeds): {spread}")
    pair, seeds = figures.optima.most_common(1)[0]
    print(f"most common optimal pair {pair}: {seeds}/{count} = {seeds / count:.0%} of seeds")
    checks = "  ".join(f"{n}: {seeds}" for n, seeds in sorted(figures.gear_checks.items()))
    print(f"gear checks along the optimal run (checks: seeds): {checks}")


def report(figures: GameFigures, solve_only: bool) -> None:
    count = len(figures.solve_seconds)
    print(f"\n== {figures.game}: {count} seeds")
    print("optimum distribution (score, tiebreak): seeds")
    for pair, seeds in sorted(figures.optima.items(), key=str):
        print(f"  {pair}: {seeds}")
    no_finish = sum(n for (score, _), n in figures.optima.items() if score is None)
    print(f"seeds with no finishing run: {no_finish}")
    if figures.game == "rallye-raser":
        rallye_raser_spread(figures)
    solve_s, indep_s = figures.solve_seconds, figures.independent_seconds
    cpu_s = figures.solve_cpu_seconds
    for label, times in (("solve seconds", solve_s), ("solve CPU seconds", cpu_s)):
        slowest = max(range(count), key=times.__getitem__)
        print(
            f"{label}: median {statistics.median(times):.3f}  p95 "
            f"{percentile(times, 0.95):.3f}  max {times[slowest]:.3f} ({figures.seeds[slowest]})"
        )
    if solve_only:
        print(f"peak memory: {figures.peak_mib:.0f} MiB")
        return
    if indep_s:
        ratio = statistics.median(indep_s) / max(statistics.median(solve_s), 1e-9)
        print(
            f"independent search seconds: median {statistics.median(indep_s):.3f}  "
            f"max {max(indep_s):.3f}  (median ratio independent/OR-Tools {ratio:.2f})"
        )
        print(f"disagreements with the independent search: {figures.disagreements or 'none'}")
    print(f"peak memory: {figures.peak_mib:.0f} MiB")
    gap = statistics.mean(figures.greedy_gaps) if figures.greedy_gaps else float("nan")
    print(
        f"greedy: finished {figures.greedy_finished}/{count}, reached the optimum "
        f"{figures.greedy_reached}/{count}, mean score gap when finished {gap:.2f}"
    )
    print(f"heuristic: finished {figures.heuristic_finished}/{count}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--game", choices=sorted(KITS), action="append")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--solve-only", action="store_true")
    modes.add_argument("--no-independent", action="store_true")
    args = parser.parse_args()
    seeds = [f"quality-{n}" for n in range(args.start, args.start + args.seeds)]
    context = multiprocessing.get_context("spawn")
    for game_name in args.game or sorted(KITS):
        out = context.Queue()
        worker = context.Process(
            target=measure_game,
            args=(game_name, seeds, out, args.solve_only, not args.no_independent),
        )
        worker.start()
        figures = out.get()
        worker.join()
        report(figures, args.solve_only)


if __name__ == "__main__":
    main()
