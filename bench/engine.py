"""Replay speed of each engine: complete random runs replayed per second.

The server replays every submitted run, so this is the cost of verifying one.
Usage: python -m bench.engine [--runs N]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

from puzzles import GAMES, Game
from puzzles.playout import random_playout, seeded_chooser


def replay_times(game: Game, runs: int) -> tuple[list[float], list[int]]:
    """Seconds to replay each of `runs` complete random runs, and their lengths."""
    times, lengths = [], []
    for number in range(runs):
        seed = f"bench-{number}"
        _, actions = random_playout(game, seed, seeded_chooser(seed, "bench"))
        started = time.perf_counter()
        game.replay(seed, actions)
        times.append(time.perf_counter() - started)
        lengths.append(len(actions))
    return times, lengths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=500)
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {args.runs} runs per game")
    print(f"{'game':<14}{'runs/s':>9}{'median ms':>11}{'p95 ms':>9}{'max ms':>9}{'actions':>9}")
    for name, game in GAMES.items():
        times, lengths = replay_times(game, args.runs)
        p95 = statistics.quantiles(times, n=20)[-1]
        print(
            f"{name:<14}{len(times) / sum(times):>9.0f}{statistics.median(times) * 1e3:>11.3f}"
            f"{p95 * 1e3:>9.3f}{max(times) * 1e3:>9.3f}{statistics.median(lengths):>9.0f}"
        )


if __name__ == "__main__":
    main()
