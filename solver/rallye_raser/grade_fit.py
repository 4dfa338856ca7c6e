"""Fits the odds a grade reads a round's end by (`Leaf.graded_odds` in leaf.json).

A grade is the difference between the points the race can be expected to end with
after the par's choice and after the player's, the par playing on. Within a round both
are exact over the dice; beyond the round they rest on the value of its end. The odds
the search plays by are chosen for play (leaf_fit.py): they price control high, so that
the search keeps it, and so read a round's end with little control left as worth less
than the next round's search, played out, finds it. Every round a weaker player ends
short of control then looks like bad play followed by good luck, and the grades of a
run add up to more than it lost.

Fitted temporal differences: on training seeds (never the seeds grades are measured
on) the par's and the reference players' runs are replayed. At every round's end that
is not the race's, the end's value as the round's search read it is set beside what the
next round's search, playing as it chooses, expects of that round: an average over the
round's possible ends, whose chances depend on the play alone, not on the odds that
read them. The odds chosen make those differences add up to nothing in each group of
round ends (one per player and control left), weighing each group by its size.

Run: python -m solver.rallye_raser.grade_fit [--seeds 21] [--prefix fit] [--workers 2]
(writes graded_odds into solver/rallye_raser/leaf.json, with the seeds and figures).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import pathlib
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import NamedTuple

from puzzles.base import Action
from puzzles.playout import play_out
from puzzles.rallye_raser.engine import RallyeRaser
from puzzles.rallye_raser.states import State
from solver.rallye_raser.leaf_fit import ODDS_GRID
from solver.rallye_raser.lookahead import (
    LEAF_FILE,
    SAFE_ROUNDS,
    Ahead,
    DialOdds,
    Leaf,
    LookaheadPlayer,
)
from solver.rallye_raser.players import greedy_actions, heuristic_actions

GAME = RallyeRaser()
PLAYERS = ("par", "greedy", "heuristic")


class RoundStep(NamedTuple):
    """One round's end on a run: who played it, the control it left, the end as its
    round's search read it, and the ends of the next round with their chances."""

    player: str
    control: int
    ended: Ahead
    next_ends: dict[Ahead, float]


def runs(seed: str, leaf: Leaf) -> dict[str, list[Action]]:
    """The par's and the reference players' runs on seed."""
    par = play_out(GAME, GAME.new_game(seed), LookaheadPlayer(leaf).choose)[1]
    return {"par": par, "greedy": greedy_actions(seed), "heuristic": heuristic_actions(seed)}


def round_steps(seed: str, player: str, actions: list[Action], leaf: Leaf) -> list[RoundStep]:
    """Every round's end of a run that another round follows, as RoundStep."""
    search = LookaheadPlayer(leaf)
    state, steps = GAME.new_game(seed), []
    for action in actions:
        after = GAME.apply(state, action)
        if action["type"] == "move" and not GAME.is_over(after):
            drive = search.search(state, state["gear"], state["control"])
            ended = drive.drive_as_is(*_route(state))
            gear = search.best_gear(after)
            following = search.gear_searches(after, every=True)[gear]
            next_ends = following.start_ends(after["reserve"])
            steps.append(RoundStep(player, after["control"], ended, next_ends))
        state = after
    return steps


def _route(state: State) -> tuple[tuple[tuple[int, str], ...], tuple[int, ...], int | None]:
    route = state["route"]
    path = tuple((die["row"], die["lane"]) for die in route)
    return path, tuple(die["value"] for die in route), state["reserve"]


def seed_steps(job: tuple[str, Leaf]) -> list[RoundStep]:
    seed, leaf = job
    return [
        step
        for player, actions in runs(seed, leaf).items()
        for step in round_steps(seed, player, actions, leaf)
    ]


def groups(steps: Iterable[RoundStep]) -> dict[tuple[str, int], dict[Ahead, float]]:
    """Each group's round ends with their weights: what the next rounds expect, plus,
    and the ends as read, minus. A group's difference under some odds is the sum of its
    ends' points by those odds, weighted so."""
    weights: dict[tuple[str, int], dict[Ahead, float]] = defaultdict(lambda: defaultdict(float))
    for step in steps:
        group = weights[(step.player, step.control)]
        group[_as_read(step.ended)] -= 1.0
        for ahead, chance in step.next_ends.items():
            group[_as_read(ahead)] += chance
    return weights


def _as_read(ahead: Ahead) -> Ahead:
    """The end with what its points do not read left out: the rounds below the safety
    bound's reach (Ahead.points), so that ends alike are summed once."""
    return ahead._replace(rounds=max(ahead.rounds, SAFE_ROUNDS))


def differences(
    weighted: dict[tuple[str, int], dict[Ahead, float]], points: Callable[[Ahead], float]
) -> dict[tuple[str, int], float]:
    return {
        group: sum(weight * points(ahead) for ahead, weight in ends.items())
        for group, ends in weighted.items()
    }


def fit(steps: list[RoundStep], leaf: Leaf, candidates: list[DialOdds] = ODDS_GRID) -> DialOdds:
    """The candidate odds whose round ends' differences are least, group by group."""
    weighted = groups(steps)  # once: every candidate reads the same ends
    sizes: dict[tuple[str, int], int] = defaultdict(int)
    for step in steps:
        sizes[(step.player, step.control)] += 1

    def error(odds: DialOdds) -> float:
        found = differences(weighted, lambda ahead: ahead.points(leaf, odds))
        return sum(total * total / sizes[group] for group, total in found.items())

    return min(candidates, key=error)


def per_run(steps: list[RoundStep], leaf: Leaf, odds: DialOdds, seeds: int) -> dict[str, float]:
    """Per player, the mean per run of the differences at round ends under odds: what
    the grades of a run count beyond what it lost, from the value of round ends."""
    found = differences(groups(steps), lambda ahead: ahead.points(leaf, odds))
    return {
        player: round(sum(v for (who, _), v in found.items() if who == player) / seeds, 3)
        for player in PLAYERS
    }


def collect(seeds: list[str], leaf: Leaf, workers: int) -> list[RoundStep]:
    jobs = [(seed, leaf) for seed in seeds]
    if workers <= 1:
        return [step for job in jobs for step in seed_steps(job)]
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, maxtasksperchild=4) as pool:
        return [step for steps in pool.imap(seed_steps, jobs) for step in steps]


def record(out: pathlib.Path, steps: list[RoundStep], seeds: int, prefix: str) -> DialOdds:
    """Fits the graded odds to steps and writes them to out, with where they came from."""
    document = json.loads(out.read_text())
    leaf = Leaf.load(out)
    odds = fit(steps, leaf)
    document["graded"] = {
        "generator": f"python -m solver.rallye_raser.grade_fit --seeds {seeds} --prefix {prefix}",
        "training_seeds": f"{prefix}-0..{seeds - 1}",
        "round_ends": len(steps),
        "per_run_with_play_odds": per_run(steps, leaf, leaf.odds, seeds),
        "per_run_with_graded_odds": per_run(steps, leaf, odds, seeds),
    }
    document["leaf"]["graded_odds"] = odds._asdict()
    out.write_text(json.dumps(document, indent=2) + "\n")
    return odds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=21)
    parser.add_argument("--prefix", default="fit")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=pathlib.Path, default=LEAF_FILE)
    args = parser.parse_args()
    seeds = [f"{args.prefix}-{i}" for i in range(args.seeds)]
    steps = collect(seeds, Leaf.load(args.out), args.workers)
    print(record(args.out, steps, args.seeds, args.prefix), file=sys.stderr)


if __name__ == "__main__":
    main()
