"""The exact optimum of a Crazy Rally seed, proven by OR-Tools' min-cost flow.

With hindsight a run is a path through the compact state graph of
solver.crazy_rally.model (whose turns are resolved by the engine's own rule
function): one source arc per setup choice, one arc per turn, one arc per
finished state into a sink. Its longest path is the optimum. The graph is
generated forward turn by turn with sound reductions:

- states are merged by card kind (identical cards), and a state is dropped when
  another with the same draws, hand, speed and manoeuvrability has at least its
  body strength and distance (body strength only decides elimination);
- aiming at a target score, an arc is kept only if the distance along it plus
  an upper bound on what can still be gained (a relaxed race, solved once per
  car) reaches the target;
- what remains goes to OR-Tools' min-cost flow (one unit from source to sink,
  cost = minus the points), which finds the longest path exactly. A longest
  path that reaches the target is the optimum; otherwise the target is lowered.

The independent check, `independent_optimum`, is a best-first search over the
same states that does not use OR-Tools.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ortools.graph.python import min_cost_flow

from puzzles.base import Action
from puzzles.crazy_rally.cards import ADJUSTMENTS, EVENTS
from puzzles.crazy_rally.engine import CrazyRally
from solver.crazy_rally.model import (
    KIND_OF,
    Hand,
    Move,
    Node,
    Race,
    finish_bonus,
    races,
)
from solver.kit import Optimum, SolverError

GAME = CrazyRally()
TIEBREAK_WEIGHT = 64  # one point of score outweighs any final speed (at most 7 + 9 tyres)
SINGLE_STEPS = 12  # target margins below the upper bound tried one point at a time


# ----- the pruned state graph ----------------------------------------------------------------
@dataclass
class StateGraph:
    """Arcs of the pruned graph; node keys are (race index, state)."""

    arcs: list[tuple[object, object, int, object]] = field(default_factory=list)

    def add(self, tail: object, head: object, points: int, label: object) -> None:
        self.arcs.append((tail, head, points, label))


SOURCE, SINK = "source", "sink"


def keep_undominated(layer: dict[Node, int]) -> dict[Node, int]:
    """Drop a state when one with more or equal body strength has at least its distance."""
    groups: dict[tuple[int, int, Hand, int, int], list[tuple[int, int, Node]]] = {}
    for node, distance in layer.items():
        groups.setdefault(node[:5], []).append((node[5], distance, node))
    kept: dict[Node, int] = {}
    for members in groups.values():
        best = -1
        for _, distance, node in sorted(members, reverse=True):
            if distance > best:
                kept[node] = distance
                best = distance
    return kept


def expand(
    race: Race,
    arc_filter: Callable[[Node, int], bool],
    on_arc: Callable[[Node, Node, int, Move], None],
) -> dict[Node, int]:
    """Generate the race turn by turn, reporting every kept arc to on_arc.

    Returns the last layer: finished states and the best distance to each.
    """
    layer = {race.start(): 0}
    for _ in range(len(race.track)):
        reached: dict[Node, int] = {}
        arcs: list[tuple[Node, Node, int, Move]] = []
        for node, distance in layer.items():
            for move, child, gain in race.successors(node):
                if not arc_filter(child, distance + gain):
                    continue
                arcs.append((node, child, gain, move))
                if reached.get(child, -1) < distance + gain:
                    reached[child] = distance + gain
        layer = keep_undominated(reached)
        for node, child, gain, move in arcs:
            if child in layer:
                on_arc(node, child, gain, move)
    return layer


def build_graph(all_races: list[Race], target: int) -> StateGraph:
    """Every arc on a path that may score at least target (upper bounds decide)."""
    graph = StateGraph()
    for index, race in enumerate(all_races):
        start = race.start()
        if race.upper_bound(start) < target:
            continue
        graph.add(SOURCE, (index, start), 0, index)

        def reaches_target(child: Node, value: int, race: Race = race) -> bool:
            return value + race.upper_bound(child) >= target

        def add_arc(node: Node, child: Node, gain: int, move: Move, index: int = index) -> None:
            graph.add((index, node), (index, child), gain * TIEBREAK_WEIGHT, move)

        final = expand(race, reaches_target, add_arc)
        for node in final:
            graph.add((index, node), SINK, finish_bonus(node) * TIEBREAK_WEIGHT + node[3], None)
    return graph


# ----- OR-Tools: the longest path ----------------------------------------------------------
def longest_path(graph: StateGraph) -> tuple[int, list[tuple[object, object]]] | None:
    """The maximum total points from source to sink and the arc labels along it."""
    if not graph.arcs:
        return None
    ids: dict[object, int] = {SOURCE: 0, SINK: 1}
    flow = min_cost_flow.SimpleMinCostFlow()
    for tail, head, points, _ in graph.arcs:
        tail_id = ids.setdefault(tail, len(ids))
        head_id = ids.setdefault(head, len(ids))
        flow.add_arc_with_capacity_and_unit_cost(tail_id, head_id, 1, -points)
    flow.set_node_supply(0, 1)
    flow.set_node_supply(1, -1)
    status = flow.solve()
    if status == flow.INFEASIBLE:
        return None
    if status != flow.OPTIMAL:
        raise SolverError(f"crazy-rally: min-cost flow ended with status {status}")
    used = {graph.arcs[a][0]: graph.arcs[a] for a in range(flow.num_arcs()) if flow.flow(a)}
    labels = []
    node: object = SOURCE
    while node != SINK:
        _, head, _, label = used[node]
        labels.append((label, head))
        node = head
    return -flow.optimal_cost(), labels


# ----- from a path to engine actions ------------------------------------------------------------
def witness(seed: str, race: Race, moves: Iterable[Move]) -> list[Action]:
    """Engine actions that play the moves; any card of the chosen kind will do."""
    actions: list[Action] = [{"type": "apply", "card": card} for card in race.setup]
    actions.append({"type": "start"})
    state = GAME.replay(seed, actions)
    for kind, accelerate, event_kind in moves:
        card = next(c for c in state["hand"] if c in ADJUSTMENTS and KIND_OF[c] == kind)
        event = None
        if event_kind is not None:
            event = next(c for c in state["hand"] if c in EVENTS and KIND_OF[c] == event_kind)
        action = {
            "type": "drive",
            "card": card,
            "mode": "accelerate" if accelerate else "brake",
            "event": event,
        }
        actions.append(action)
        state = GAME.apply(state, action)
    return actions


def targets(highest: int) -> Iterable[int]:
    """Scores to aim at: the upper bound, then ever wider margins below it, then anything.

    The graph grows four to eight times with each point the target drops, so a
    target one point below the optimum costs more than every target above it
    together: the steps are single points for as long as optima lie below the
    bound (at most 7 points on quality-0..999), and only then widen.
    """
    margin = 0
    while highest - margin > 0:
        yield highest - margin
        margin = margin + 1 if margin < SINGLE_STEPS else margin * 3 // 2
    yield 0


@dataclass(frozen=True)
class BestRun:
    score: int
    tiebreak: int
    race: int  # index of the setup choice in the races list
    moves: list[Move]


def best_run(all_races: list[Race]) -> BestRun | None:
    """The best run over the given races, proven by min-cost flow; None if none finishes.

    Aiming at a target score T, the pruned graph holds every path scoring T or
    more, so a longest path scoring at least T is optimal; otherwise T is lowered.
    """
    highest = max(race.upper_bound(race.start()) for race in all_races)
    found = None
    for target in targets(highest):
        found = longest_path(build_graph(all_races, target))
        if found is not None and found[0] // TIEBREAK_WEIGHT >= target:
            break
    if found is None:
        return None
    total, labels = found
    score, tiebreak = divmod(total, TIEBREAK_WEIGHT)
    moves = [label for label, _ in labels[1:-1]]
    # The path's labels are typed object: the first is the race's index, the rest moves.
    return BestRun(score, tiebreak, labels[0][0], moves)  # type: ignore[arg-type]


def find_optimum(seed: str) -> Optimum:
    """The best (score, tie-break) of the seed with hindsight, and a witness run."""
    all_races = races(seed)
    found = best_run(all_races)
    if found is None:
        return Optimum(optimum=None, tiebreak=None, actions=[], proved=True)
    actions = witness(seed, all_races[found.race], found.moves)
    return Optimum(found.score, found.tiebreak, actions, proved=True)


# ----- the independent exact search (no OR-Tools) ----------------------------------------------
def independent_optimum(seed: str) -> tuple[int | None, int | None]:
    """The optimum by a best-first (A*) search over the states, without OR-Tools."""
    found = best_first(races(seed))
    return found if found is not None else (None, None)


def best_first(all_races: list[Race]) -> tuple[int, int] | None:
    """A*: states are expanded in order of an upper bound on their best finish.

    A finished run's entry carries its exact value, every other entry an upper
    bound, so the first finished run taken off the queue is optimal.
    """
    queue: list[tuple[int, int, int, Node | None, int]] = []
    best_distance: dict[tuple[int, Node], int] = {}
    order = itertools.count()

    def push(index: int, node: Node, distance: int) -> None:
        race = all_races[index]
        if node[0] == len(race.track):
            value = (distance + finish_bonus(node)) * TIEBREAK_WEIGHT + node[3]
            heapq.heappush(queue, (-value, next(order), index, None, value))
            return
        if best_distance.get((index, node), -1) >= distance:
            return
        best_distance[index, node] = distance
        bound = (distance + race.upper_bound(node) + 1) * TIEBREAK_WEIGHT - 1
        heapq.heappush(queue, (-bound, next(order), index, node, distance))

    for index, race in enumerate(all_races):
        push(index, race.start(), 0)
    while queue:
        _, _, index, node, distance = heapq.heappop(queue)
        if node is None:
            return divmod(distance, TIEBREAK_WEIGHT)
        if best_distance[index, node] > distance:
            continue  # a better path to this state was queued later
        for _, child, gain in all_races[index].successors(node):
            push(index, child, distance + gain)
    return None


__all__ = [
    "find_optimum",
    "independent_optimum",
]
