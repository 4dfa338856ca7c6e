"""How Crazy Rally's optimal runs use the event cards (the solo bonus of rule CR-20).

For each seed: the event effects played by the optimal run the solver returns,
and the optimum when the +1 and -1 speed events may never be played. A speed
event played in a returned optimal run while the ban leaves the optimum
unchanged was played on a tie: holding it scores the same. With --any-run, also
the best run that plays at least one speed event (an exact best-first search),
which tells on how many seeds some optimal run plays one.

Usage: python -m bench.crazy_rally_events [--seeds N] [--start K] [--any-run]
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from puzzles.crazy_rally.cards import EVENTS
from puzzles.crazy_rally.engine import EVENT_BONUS
from solver.crazy_rally.model import Move, Node, Race, effect_of, races
from solver.crazy_rally.solver import best_first, best_run, find_optimum

SPEED_EFFECTS = ("speed_up", "slow_down")


def plays_speed_event(move: Move) -> bool:
    return effect_of(move[2]) in SPEED_EFFECTS


class WithoutSpeedEvents(Race):
    """The race in which the +1 and -1 events are never played."""

    def successors(self, node: Node) -> Iterator[tuple[Move, Node, int]]:
        for move, child, gain in super().successors(node):
            if not plays_speed_event(move):
                yield move, child, gain


class SpeedEventPlayed(Race):
    """The race whose states also say whether a speed event was played; only such runs end.

    Its nodes are Race's with one more field, which the type of Race's nodes does not
    allow: the ignores below are for that field."""

    def start(self) -> Node:
        return (*super().start(), False)  # type: ignore[return-value]

    def successors(self, node: Node) -> Iterator[tuple[Move, Node, int]]:
        played = node[6]  # type: ignore[misc]
        for move, child, gain in super().successors(node[:6]):
            now_played = played or plays_speed_event(move)
            if child[0] < len(self.track) or now_played:
                yield move, (*child, now_played), gain  # type: ignore[misc]

    def upper_bound(self, node: Node) -> int:
        return super().upper_bound(node[:6])


def as_race(cls: type[Race], race: Race) -> Race:
    return cls(**{f.name: getattr(race, f.name) for f in fields(race) if f.init})


@dataclass
class EventFigures:
    optima: list[int] = field(default_factory=list)
    plays: Counter = field(default_factory=Counter)
    runs_with_speed_event: int = 0
    runs_with_draw_two: int = 0
    ban_lowers_score: int = 0
    ban_lowers_result: int = 0
    some_optimal_run_plays: int = 0


def measure_seed(figures: EventFigures, seed: str, any_run: bool) -> None:
    found = find_optimum(seed)
    if found.optimum is None:
        return
    figures.optima.append(found.optimum)
    effects = [EVENTS[a["event"]].effect for a in found.actions if a.get("event")]
    figures.plays.update(effects)
    figures.runs_with_speed_event += any(e in SPEED_EFFECTS for e in effects)
    figures.runs_with_draw_two += "draw_two" in effects
    best = (found.optimum, found.tiebreak)
    banned = best_run([as_race(WithoutSpeedEvents, race) for race in races(seed)])
    banned_result = (banned.score, banned.tiebreak) if banned else None
    figures.ban_lowers_result += banned_result != best
    figures.ban_lowers_score += banned_result is None or banned_result[0] < found.optimum
    if any_run:
        forced = best_first([as_race(SpeedEventPlayed, race) for race in races(seed)])
        figures.some_optimal_run_plays += forced == best


def report(figures: EventFigures, seeds: int, any_run: bool) -> None:
    def share(count: int) -> str:
        return f"{count} of {seeds} ({count / seeds:.1%})"

    print(f"crazy-rally, {seeds} seeds, {EVENT_BONUS} point(s) per unused event")
    optima = figures.optima
    print(
        f"optimum: min {min(optima)}  median {statistics.median(optima)}  max {max(optima)}; "
        f"seeds with no finishing run: {seeds - len(optima)}"
    )
    print(f"event plays in the returned optimal runs: {dict(sorted(figures.plays.items()))}")
    print(f"returned optimal runs playing a +1/-1 event: {share(figures.runs_with_speed_event)}")
    print(f"returned optimal runs playing draw-two: {share(figures.runs_with_draw_two)}")
    print(f"banning the +1/-1 events lowers the optimum: {share(figures.ban_lowers_score)}")
    print(f"... lowers the optimum or its tie-break: {share(figures.ban_lowers_result)}")
    if any_run:
        print(f"some optimal run plays a +1/-1 event: {share(figures.some_optimal_run_plays)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=120)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--any-run", action="store_true")
    args = parser.parse_args()
    figures = EventFigures()
    for number in range(args.start, args.start + args.seeds):
        measure_seed(figures, f"quality-{number}", args.any_run)
    report(figures, args.seeds, args.any_run)


if __name__ == "__main__":
    main()
