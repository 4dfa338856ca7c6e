"""Whether a grade agrees with a deeper look: the expert playing both choices on.

A grade says what a choice lost against the expert's, from what the player saw.
This bench takes graded decisions from varied runs (the greedy and heuristic
players', a careless player's, and the optimum's witness, which reaches the
optimum's points), where the player chose otherwise than the expert, and
measures each again: in F futures sampled to agree with the player's view (the
same futures for both choices), the expert itself plays on to the end after the
player's choice and after its own. The mean difference of the results, with its
95% error, is the deeper look. The grade agrees when the two differ by no more
than the sum of their stated errors.

It prints, per game, the decisions compared, how many agree, and the mean and
largest difference; each decision's figures go to stderr as a JSON line.

Usage: python -m bench.agreement [--game NAME] [--seeds N] [--per-run K]
                                 [--futures F] [--workers W]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import statistics
import sys
from copy import deepcopy
from typing import Any

from puzzles import get_game
from puzzles.base import Action, State
from puzzles.playout import Policy, play_out, seeded_chooser
from solver.core import solve
from solver.expert import PlayerView, analyse, choose, player_views
from solver.registry import KITS, kit_of

# The runs decisions are taken from.
RUNS = ("greedy", "heuristic", "careless", "optimum")
# A careless player plays as the expert, except at every third action, which it
# picks at random among the legal ones.
CARELESS_EVERY = 3
# The rng_seed of the deeper look's futures: not the grades' own (0).
DEEP_RNG_SEED = 7


def run_of(game_name: str, kind: str, seed: str) -> list[Action]:
    if kind == "optimum":
        return list(solve(game_name, seed).actions)
    if kind == "careless":
        return careless_run(game_name, seed)
    actions: list[Action] = getattr(kit_of(game_name), f"{kind}_actions")(seed)
    return actions


def careless_run(game_name: str, seed: str) -> list[Action]:
    game, watcher = get_game(game_name), PlayerView(game_name)
    random_index = seeded_chooser(seed, "careless")
    played = 0

    def policy(state: State, options: list[Action]) -> Action:
        nonlocal played
        watcher.see(game.view(state))
        played += 1
        careless = played % CARELESS_EVERY == 0
        action = (
            options[random_index(len(options))]
            if careless
            else choose(game_name, watcher.current())
        )
        watcher.act(action)
        return action

    return play_out(game, game.new_game(seed), policy)[1]


def expert_policy(game_name: str, view: dict[str, Any], action: Action) -> Policy[State]:
    """The expert playing on after action from a state that agrees with view: the base
    player itself when it is the expert (it reads only what the player sees), else the
    expert choosing from the player's view and memory."""
    parts, game = kit_of(game_name).expert, get_game(game_name)
    if parts.rollouts is None:
        return parts.base_action
    watcher = PlayerView(game_name)
    watcher.memory, watcher.pending = deepcopy(view["seen"]), action

    def policy(state: State, _options: list[Action]) -> Action:
        watcher.see(game.view(state))
        chosen = choose(game_name, watcher.current())
        watcher.act(chosen)
        return chosen

    return policy


def deeper_look(
    game_name: str, view: dict[str, Any], player: Action, expert: Action, futures: int
) -> tuple[float, float]:
    """The expert's result after its own choice less after the player's, over futures
    sampled to agree with view: (mean, 95% error), in points."""
    game, result = get_game(game_name), kit_of(game_name).expert.result
    differences = []
    for future in range(futures):
        name = json.dumps([DEEP_RNG_SEED, future])
        state = game.sample_state(view, view["seen"], name)
        ends = []
        for action in (expert, player):
            after = game.apply(state, action)
            ends.append(result(play_out(game, after, expert_policy(game_name, view, action))[0]))
        differences.append(float(ends[0][0] - ends[1][0]))
    spread = statistics.stdev(differences) if futures > 1 else math.inf
    return statistics.fmean(differences), 1.96 * spread / math.sqrt(futures)


def measure_run(job: tuple[str, str, str, int, int]) -> list[dict[str, Any]]:
    """The picked decisions of one run, each graded and looked at more deeply."""
    game_name, kind, seed, per_run, futures = job
    actions = run_of(game_name, kind, seed)
    graded = analyse(game_name, seed, actions, optimum=(None, None))
    differing = [d for d in graded["decisions"] if d["action"] != d["expert"]]
    picked = [differing[(2 * k + 1) * len(differing) // (2 * per_run)] for k in range(per_run)]
    views = list(player_views(game_name, seed, actions))
    rows = []
    for decision in picked if differing else []:
        view = views[decision["index"]]
        deep, deep_error = deeper_look(
            game_name, view, decision["action"], decision["expert"], futures
        )
        loss = decision["loss"]
        rows.append(
            {
                "seed": seed,
                "run": kind,
                "index": decision["index"],
                "grade": loss["points"],
                "grade_error": loss["points_error"],
                "deep": deep,
                "deep_error": deep_error,
                "agrees": abs(loss["points"] - deep) <= loss["points_error"] + deep_error,
            }
        )
    return rows


def report(game_name: str, rows: list[dict[str, Any]], futures: int) -> None:
    differences = [abs(row["grade"] - row["deep"]) for row in rows]
    agree = sum(row["agrees"] for row in rows)
    print(
        f"\n== {game_name}: {len(rows)} decisions, {futures} futures each: "
        f"{agree} agree ({100 * agree / max(1, len(rows)):.0f}%); |grade - deeper look| "
        f"mean {_mean(differences):.2f}, max {max(differences, default=0):.2f}; deeper "
        f"look's error median {_median([row['deep_error'] for row in rows]):.2f}"
    )


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", choices=sorted(KITS), action="append")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--per-run", type=int, default=3)
    parser.add_argument("--futures", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    for game_name in args.game or sorted(KITS):
        jobs = [
            (game_name, kind, f"agreement-{n}", args.per_run, args.futures)
            for n in range(args.seeds)
            for kind in RUNS
        ]
        rows = []
        with context.Pool(args.workers, maxtasksperchild=1) as pool:
            for found in pool.imap(measure_run, jobs):
                for row in found:
                    print(json.dumps(row), file=sys.stderr, flush=True)
                rows.extend(found)
        report(game_name, rows, args.futures)


if __name__ == "__main__":
    main()
