"""Replay speed of each engine: complete runs replayed per second.

The server replays every submitted run, so this is the cost of verifying one.
Two kinds of complete run per game: random legal play (often short: it tends to
end early) and the heuristic player's finished runs, which are as long as a real
player's submission.
Usage: python -m bench.engine [--runs N]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

from puzzles import GAMES, Game
from puzzles.playout import random_playout, seeded_chooser
from solver.registry import kit_of

RunMaker = Callable[[str], list[Any]]


def random_run_maker(game: Game) -> RunMaker:
    return lambda seed: random_playout(game, seed, seeded_chooser(seed, "bench"))[1]


def heuristic_run_maker(game: Game) -> RunMaker:
    return kit_of(game.name).heuristic_actions


def replay_times(game: Game, make_run: RunMaker, runs: int) -> tuple[list[float], list[int]]:
    """Seconds to replay each of `runs` complete runs, and their lengths."""
    times, lengths = [], []
    for number in range(runs):
        seed = f"bench-{number}"
        actions = make_run(seed)
        started = time.perf_counter()
        game.replay(seed, actions)
        times.append(time.perf_counter() - started)
        lengths.append(len(actions))
    return times, lengths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {args.runs} runs each")
    print(
        f"{'game':<14}{'runs':<11}{'runs/s':>9}{'median ms':>11}{'p95 ms':>9}"
        f"{'max ms':>9}{'actions':>9}"
    )
    for name, game in GAMES.items():
        for kind, maker in (("random", random_run_maker), ("heuristic", heuristic_run_maker)):
            times, lengths = replay_times(game, maker(game), args.runs)
            p95 = statistics.quantiles(times, n=20)[-1]
            print(
                f"{name:<14}{kind:<11}{len(times) / sum(times):>9.0f}"
                f"{statistics.median(times) * 1e3:>11.3f}{p95 * 1e3:>9.3f}"
                f"{max(times) * 1e3:>9.3f}{statistics.median(lengths):>9.0f}"
            )


if __name__ == "__main__":
    main()
