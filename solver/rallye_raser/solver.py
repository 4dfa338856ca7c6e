"""The exact optimum of a Rallye Raser seed, with hindsight.

A node is the state at the start of a round: (round, row, lane, gear, reserve,
upshift ban, timer, control); an arc is one round played, computed by the round
model of solver.rallye_raser.round. A node is dropped when another of the same
round, field and reserve has timer and control at least as high and every gear
at least as cheap to drive (`dominates`): the rules are monotone in all three.

The optimum is almost always 18 points, so the search asks first for the
earliest round of an 18-point finish. For a horizon h it builds the layers up to
round h, keeping only nodes that the relaxed game of solver.rallye_raser.bound
allows to finish with 18 by round h, and stops at the first round holding such
a finish. Any horizon at or past the earliest top finish finds it (its path
passes the filter, and the build stops at the first round holding a top
finish), so horizons start a few rounds past the start's bound and grow in
steps; the first that succeeds holds the earliest top finish. If none up to
the safety bound does, no run scores 18, and the same search asks for 17, then
16, and so on, pruned by the bound for that score. The relaxed game knows where
the cards begin, so it counts the gear checks a run still meets (RR-21: one per
card advance, not one per round); that keeps the filter for a score that is out
of reach tight, and a start that cannot reach 18 is no slower than one that can.
OR-Tools' min-cost flow then sends one unit from the start to a sink; a
finishing arc costs (18 - score) * BIG + its round, so the cheapest path is the
best (score, fewest rounds) and the flow proves it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

from ortools.graph.python import min_cost_flow

from puzzles.base import Action
from puzzles.rallye_raser.engine import MAX_GEAR, MAX_ROUNDS, TRACK_MAX, RallyeRaser
from puzzles.rallye_raser.states import State
from solver.kit import Optimum, SolverError
from solver.rallye_raser.bound import rounds_bound
from solver.rallye_raser.round import (
    How,
    Path,
    Track,
    gear_options,
    nearest_value,
    settle,
)

GAME = RallyeRaser()
TOP_SCORE = 3 * TRACK_MAX
BIG = MAX_ROUNDS + 1  # one point of score outweighs any number of rounds
Key = tuple[Any, ...]  # (round, row, lane, gear, reserve, no_upshift, timer, control)
NO_RESERVE = 0  # keys hold 0 for "no die reserved" so that they sort


def node_key(state: State) -> Key:
    car = state["car"]
    reserve = NO_RESERVE if state["reserve"] is None else state["reserve"]
    return (
        state["round"],
        car["row"],
        car["lane"],
        state["gear"],
        reserve,
        state["no_upshift"],
        state["timer"],
        state["control"],
    )


class Arc(NamedTuple):
    """One round played from tail: to head, or to the finish with a score."""

    tail: Key
    head: Key | None  # None: the run finishes in this round
    score: int | None
    how: How


def round_arcs(
    track: Track,
    family: Key,
    dials: list[tuple[int, int]],
    wanted: Callable[[Key], bool] = lambda head: True,
) -> Iterator[Arc]:
    """Every distinct way to play the round from each (timer, control) of one family:
    every finish, and every move to a next node that `wanted` accepts."""
    round_number = family[0]
    last_round = round_number >= MAX_ROUNDS
    choices = [
        (
            drive,
            spend,
            how,
            (round_number + 1, *drive.car, drive.gear, kept or NO_RESERVE, drive.damaged),
        )
        for (drive, kept), (spend, how) in track.choices(family).items()
    ]
    for timer, control in dials:
        tail = (*family, timer, control)
        for drive, spend, how, head_family in choices:
            settled = spend <= control and settle(drive, timer, control - spend, last_round)
            if not settled:
                continue
            kind, timer_after, control_after = settled
            if kind == "finish":
                yield Arc(tail, None, 2 * timer_after + control_after, how)
            else:
                head = (*head_family, timer_after, control_after)
                if wanted(head):
                    yield Arc(tail, head, None, how)


@cache
def _gear_costs(gear: int, no_upshift: bool) -> tuple[int, ...]:
    """What each gear 1..3 costs to drive in this round (TRACK_MAX + 1: not allowed)."""
    options = dict(gear_options(gear, TRACK_MAX, no_upshift))
    return tuple(options.get(chosen, TRACK_MAX + 1) for chosen in range(1, MAX_GEAR + 1))


def dominates(better: Key, worse: Key) -> bool:
    """Same round, field and reserve; timer, control and every gear at least as good.

    The gear and the upshift ban matter only through what each gear costs at
    step I, so a node whose gears all cost no more is at least as good.
    """
    costs_better, costs_worse = _gear_costs(better[3], better[5]), _gear_costs(worse[3], worse[5])
    return (
        better[-2] >= worse[-2]
        and better[-1] >= worse[-1]
        and all(b <= w for b, w in zip(costs_better, costs_worse, strict=True))
    )


def pareto_front(keys: Iterator[Key]) -> set[Key]:
    """Keep, per round, field and reserve, the nodes no other node dominates."""
    groups: dict[Key, list[Key]] = {}
    for key in keys:
        groups.setdefault((key[0], key[1], key[2], key[4]), []).append(key)
    kept: set[Key] = set()
    for members in groups.values():
        # Strongest first, so a node is only ever beaten by one already kept.
        members.sort(key=lambda k: (-k[-2] - k[-1], -k[-2], sum(_gear_costs(k[3], k[5])), k))
        front: list[Key] = []
        for key in members:
            if not any(dominates(other, key) for other in front):
                front.append(key)
        kept.update(front)
    return kept


def _families(layer: set[Key]) -> dict[Key, list[tuple[int, int]]]:
    grouped: dict[Key, list[tuple[int, int]]] = {}
    for key in sorted(layer):
        grouped.setdefault(key[:-2], []).append(key[-2:])
    return grouped


@dataclass
class RoundGraph:
    """The layered graph of round-start nodes, built until no better finish can come."""

    start: Key
    track: Track
    layers: list[set[Key]]
    # One arc into each node is enough: arcs between rounds cost nothing, so any
    # path to a node is as good as another.
    into: dict[Key, Arc] = field(default_factory=dict)
    finishes: dict[Key, Arc] = field(default_factory=dict)  # each node's best finishing arc

    @property
    def arcs(self) -> list[Arc]:
        return [*self.into.values(), *self.finishes.values()]

    def best_finish(self) -> int | None:
        return max((finish_score(arc) for arc in self.finishes.values()), default=None)


def build_graph(
    track: Track,
    horizon: int = MAX_ROUNDS,
    hope: bool = True,
    dominance: bool = True,
    target: int = TOP_SCORE,
) -> RoundGraph:
    """Every round from the start up to horizon. With hope, nodes that cannot finish
    with the top score by the horizon are dropped; with dominance, dominated ones."""
    start_state = track.state
    hopeful = _hope_filter(track, horizon, target) if hope else (lambda key: True)
    graph = RoundGraph(node_key(start_state), track, [{node_key(start_state)}])

    def new_and_hopeful(head: Key) -> bool:
        return head not in graph.into and hopeful(head)

    while graph.layers[-1]:
        heads: list[Key] = []
        for family, dials in _families(graph.layers[-1]).items():
            for arc in round_arcs(track, family, dials, new_and_hopeful):
                if arc.head is None:
                    known = graph.finishes.get(arc.tail)
                    if known is None or finish_score(arc) > finish_score(known):
                        graph.finishes[arc.tail] = arc
                else:
                    graph.into[arc.head] = arc
                    heads.append(arc.head)
        if (graph.best_finish() or 0) >= target:
            break  # every later finish takes more rounds, and no score is higher
        graph.layers.append(pareto_front(iter(heads)) if dominance else set(heads))
    return graph


def earliest_finish(track: Track, key: Key, target: int = TOP_SCORE) -> int:
    """A lower bound on the round in which a run from this node finishes with at
    least target points."""
    round_number, row, _, gear, _, no_upshift, timer, control = key
    bound = rounds_bound(target, tuple(track.state["card_starts"]))
    return int(round_number) - 1 + bound[(timer, control, gear, no_upshift, row)]


def _hope_filter(track: Track, horizon: int, target: int) -> Callable[[Key], bool]:
    """Whether a node can still finish with target points by round horizon."""
    bound = rounds_bound(target, tuple(track.state["card_starts"]))

    def hopeful(key: Key) -> bool:
        round_number, row, _, gear, _, no_upshift, timer, control = key
        return int(round_number) - 1 + bound[(timer, control, gear, no_upshift, row)] <= horizon

    return hopeful


def finish_score(arc: Arc) -> int:
    """The score of an arc into the finish (the only arcs that have one)."""
    assert arc.score is not None
    return arc.score


def _finish_cost(arc: Arc) -> int:
    return (TOP_SCORE - finish_score(arc)) * BIG + int(arc.tail[0])


def _best_path(graph: RoundGraph) -> list[Arc]:
    """The cheapest start-to-finish path by OR-Tools' min-cost flow (one unit of flow)."""
    # Sorted, so that ties between optimal paths break the same way in every process.
    index = {key: i for i, key in enumerate(key for layer in graph.layers for key in sorted(layer))}
    sink = len(index)
    usable = [arc for arc in graph.arcs if arc.head is None or arc.head in index]
    flow = min_cost_flow.SimpleMinCostFlow()
    for arc in usable:
        head = sink if arc.head is None else index[arc.head]
        cost = 0 if arc.head is not None else _finish_cost(arc)
        flow.add_arc_with_capacity_and_unit_cost(index[arc.tail], head, 1, cost)
    flow.set_node_supply(index[graph.start], 1)
    flow.set_node_supply(sink, -1)
    if flow.solve() != flow.OPTIMAL:
        raise SolverError(f"{graph.track.seed}: min-cost flow found no path to the finish")
    chosen = {usable[i].tail: usable[i] for i in range(flow.num_arcs()) if flow.flow(i) > 0}
    path = [chosen[graph.start]]
    while path[-1].head is not None:
        path.append(chosen[path[-1].head])
    return path


def _spot(spot: tuple[int, str]) -> dict[str, Any]:
    return {"row": spot[0], "lane": spot[1]}


def control_to(step: int, start: int, target: int) -> list[Action]:
    delta = 1 if target > start else -1
    return [{"type": "control", "step": step, "delta": delta}] * abs(target - start)


class RoundPlayer:
    """Turns a round's plan into engine actions, applying each through the engine."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.actions: list[Action] = []

    def do(self, *actions: Action) -> None:
        for action in actions:
            self.state = GAME.apply(self.state, action)
            self.actions.append(action)

    def play(self, how: How) -> None:
        chosen, path, plan = how
        if chosen != self.state["gear"]:
            self.do({"type": "gear", "gear": chosen})
        self.do({"type": "roll"})
        for step in plan.end.recipe:
            self._recipe_step(step, path)
        for index, die in enumerate(self.state["route"]):
            if plan.first_miss is not None and index > plan.first_miss:
                break
            target = nearest_value(die["value"], die["lane"], index != plan.first_miss)
            self.do(*control_to(index, die["value"], target))
        self.do({"type": "move"})

    def _recipe_step(self, step: tuple[Any, ...], path: Path) -> None:
        kind, pool = step[0], self.state["pool"]
        if kind == "place":
            target = path[len(self.state["route"])]
            self.do({"type": "place", "die": pool.index(step[1]), **_spot(target)})
        elif kind == "reserve":
            self.do({"type": "reserve", "die": pool.index(step[1])})
        elif kind == "place_reserve":
            self.do({"type": "place_reserve", **_spot(path[len(self.state["route"])])})
        elif kind == "modify":
            _, index, sign, shift = step
            value = self.state["route"][index]["value"]
            self.do(*control_to(index, value, value + shift))
            self.do({"type": "modify", "step": index, "delta": sign})
        else:
            self.do({"type": "reroll"})


def actions_for(start: State, plans: list[How]) -> list[Action]:
    """The engine actions that play the given round plans in order from start."""
    player = RoundPlayer(start)
    for how in plans:
        player.play(how)
    return player.actions


# The relaxed bound undershoots: on quality-0..49 it gives round 14 from the start
# and the earliest top finish lies in rounds 17 to 23. A build costs about in
# proportion to its horizon, and one that fails is wasted, so horizons start at
# the bound + 4 and then grow by 2, 4, 8, ... rounds: few attempts when 18 is
# late or out of reach (each failure up to round 40 used to cost a build), and on
# quality-20..39 a lower total than growing by 1 or by 2.
HORIZON_SLACK = 4
FIRST_HORIZON_STEP = 2


def _horizons(first: int) -> Iterator[int]:
    """The horizons to try, the safety bound last; first: the start's lower bound."""
    horizon, step = min(first + HORIZON_SLACK, MAX_ROUNDS), FIRST_HORIZON_STEP
    while horizon < MAX_ROUNDS:
        yield horizon
        horizon, step = min(horizon + step, MAX_ROUNDS), 2 * step
    yield MAX_ROUNDS


def target_graph(track: Track, target: int, dominance: bool = True) -> RoundGraph | None:
    """The graph of the first horizon at which some run finishes with target points
    or more, if any, when no run scores more than target.

    That graph stops at the earliest such finish, whichever horizon found it; the
    round model's caches serve every attempt.
    """
    first = earliest_finish(track, node_key(track.state), target)
    if first > MAX_ROUNDS:
        return None
    for horizon in _horizons(first):
        graph = build_graph(track, horizon, dominance=dominance, target=target)
        if (graph.best_finish() or 0) >= target:
            return graph
    return None


def best_graph(track: Track, dominance: bool = True) -> RoundGraph:
    """The graph that holds the best finish: the earliest 18 if any, else the earliest
    17, and so on. Each target that fails has tried the safety bound as horizon,
    with nothing pruned that could reach it, so no run scores that much. A graph
    without any finish means that no run finishes.
    """
    for target in range(TOP_SCORE, 0, -1):
        graph = target_graph(track, target, dominance)
        if graph is not None:
            return graph
    start = node_key(track.state)
    return RoundGraph(start, track, [{start}])


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector during a search.

    The search keeps millions of small tuples alive in its caches and forms no
    reference cycles, so every full collection rescans them all for nothing: it
    took about a third of the solve time. Reference counting still frees
    everything; the previous collector state is restored afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def find_optimum(seed: str) -> Optimum:
    """The best (score, tie-break) of the seed, proven by OR-Tools' min-cost flow."""
    return optimum_from(GAME.new_game(seed))


@collector_paused()
def optimum_from(start: State) -> Optimum:
    """The best (score, tie-break) reachable from a round-start state (tie-break: -round)."""
    track = Track(start["seed"], start)
    graph = best_graph(track)
    if not graph.finishes:
        return Optimum(None, None, [], True)
    path = _best_path(graph)
    last = path[-1]
    return Optimum(last.score, -last.tail[0], actions_for(start, [arc.how for arc in path]), True)


@collector_paused()
def independent_optimum(seed: str, start: State | None = None) -> tuple[int | None, int | None]:
    """The same optimum without OR-Tools and without dominance pruning (from start, if
    given): the best finishing arc of the unpruned layers, by plain comparison."""
    start = start or GAME.new_game(seed)
    track = Track(seed, start)
    graph = best_graph(track, dominance=False)
    finishes = [(arc.score, -arc.tail[0]) for arc in graph.finishes.values()]
    return max(finishes) if finishes else (None, None)
