"""The Rallye Raser expert's round search: the exact expectation over the round's dice.

A round's dice are three dice and two rerolls (RR-7, RR-8), with a reserve die to
place, keep or spend (RR-12 to RR-14): a few thousand outcomes, so the expert weighs
every one of them exactly rather than sampling them. At each decision it searches
the rest of the round: every die placed on every field the rules allow (RR-9 to
RR-11), a reservation, a reroll, or the drive; before the drive, the reserve spent
on a die (RR-14) and control spent to make the dice fit their lanes or to end the
route on purpose (RR-15). A drive is resolved on the cards in view (RR-16 to RR-21,
RR-23, RR-24) and the round start it leads to is valued by solver.rallye_raser.values.

Modifying a die with the reserve is searched only just before the drive: spending
it earlier changes nothing the round can still do, save a second reservation.
The search reads the cards in view only, never the dice to come or the cards to
draw, so it decides from what the player has seen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement
from math import factorial, inf
from typing import NamedTuple

from puzzles.base import Action
from puzzles.rallye_raser.engine import DICE_COUNT, MAX_REROLLS, MAX_ROUNDS
from puzzles.rallye_raser.states import State
from solver.rallye_raser.round import (
    Drive,
    Path,
    Spot,
    Track,
    gear_options,
    nearest_value,
    plan_costs,
    settle,
)
from solver.rallye_raser.solver import control_to
from solver.rallye_raser.values import LOST as LOST_RUN
from solver.rallye_raser.values import STALL_PRICE, Horizon, Start, finished, horizon, value


class Step(NamedTuple):
    """A step of the search: "place" (die, spot), "reserve" (die), "place_reserve"
    (spot), "reroll", or "move" with the reserve spent on a die first (modify: route
    index and sign) and the values the route's dice are driven with (targets)."""

    kind: str
    die: int = 0
    spot: Spot = (0, "M")
    modify: tuple[int, int] | None = None
    targets: tuple[int, ...] = ()


# A node of the dice phase: (rolls made, pool sorted, route path, route values,
# reserve, a die of the latest roll placed, a reservation made this round).
Node = tuple[int, tuple[int, ...], Path, tuple[int, ...], int | None, bool, bool]


@cache
def throws(count: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every sorted outcome of throwing count dice, with its probability."""
    outcomes = []
    for values in combinations_with_replacement(range(1, 7), count):
        ways = factorial(count)
        for repeats in Counter(values).values():
            ways //= factorial(repeats)
        outcomes.append((values, ways / 6**count))
    return tuple(outcomes)


@dataclass(frozen=True)
class Round:
    """What a round's search holds fixed: the car, the gear driven, the dials (control
    as left after the gear shift and any control already spent) and the round."""

    car: Spot
    gear: int
    timer: int
    control: int
    card_a: int
    round_number: int
    rounds_played: int


class RoundSearch:
    """The best expected value of every position of one round's dice phase."""

    def __init__(self, track: Track, sight: Horizon, fixed: Round) -> None:
        self.track, self.sight, self.fixed = track, sight, fixed
        paths = track.paths(fixed.car, fixed.card_a)
        self.next_spots: dict[Path, list[Spot]] = {}
        for path in paths:
            if path and len(path) <= fixed.gear:
                self.next_spots.setdefault(path[:-1], []).append(path[-1])
        self.memo: dict[Node, tuple[float, Step]] = {}
        self.drives: dict[tuple[Path, int | None], Drive] = {}

    def thrown(self, node_after: Node, count: int) -> float:
        """The expected value of throwing count dice into the pool of node_after."""
        rolls, _, path, values, reserve, _, reserved = node_after
        return sum(
            chance * self.best((rolls, pool, path, values, reserve, False, reserved))[0]
            for pool, chance in throws(count)
        )

    def opening(self, reserve: int | None) -> float:
        """The expected value of the round from its roll (RR-7)."""
        count = DICE_COUNT - (reserve is not None)
        return self.thrown((1, (), (), (), reserve, False, False), count)

    def best(self, node: Node) -> tuple[float, Step]:
        """The best expected value from node, and the step that reaches it."""
        if node not in self.memo:
            self.memo[node] = max(self._options(node), key=lambda option: option[0])
        return self.memo[node]

    def _options(self, node: Node) -> Iterator[tuple[float, Step]]:
        rolls, pool, path, values, reserve, placed, reserved = node
        spots = self.next_spots.get(path, []) if len(path) < self.fixed.gear else []
        roll_used = placed or not (pool and spots)  # RR-8
        for die in sorted(set(pool)):
            rest = _without(pool, die)
            for spot in spots:
                after = (rolls, rest, (*path, spot), (*values, die), reserve, True, reserved)
                yield self.best(after)[0], Step("place", die=die, spot=spot)
            if reserve is None and not reserved and (roll_used or len(pool) > 1):
                kept = (rolls, rest, path, values, die, placed, True)
                yield self.best(kept)[0], Step("reserve", die=die)
        if reserve is not None:
            for spot in spots:
                after = (rolls, pool, (*path, spot), (*values, reserve), None, placed, reserved)
                yield self.best(after)[0], Step("place_reserve", spot=spot)
        if rolls <= MAX_REROLLS and pool and placed:
            rethrown = (rolls + 1, (), path, values, reserve, False, reserved)
            yield self.thrown(rethrown, len(pool)), Step("reroll")
        if roll_used:
            yield self.drive_value(path, values, reserve)

    def drive_value(
        self, path: Path, values: tuple[int, ...], reserve: int | None
    ) -> tuple[float, Step]:
        """The best drive of the route: the reserve kept or spent on a die (RR-14), and
        control spent so that the dice fit up to a chosen first miss (RR-15)."""
        best: tuple[float, Step] = (-inf, Step("move", targets=values))
        for driven, kept, modify in _with_reserve(values, reserve):
            lanes = tuple(lane for _, lane in path)
            for first_miss, cost in plan_costs(driven, lanes):
                if cost <= self.fixed.control:
                    worth = self._after(self._drive(path, first_miss), cost, kept)
                    if worth > best[0]:
                        targets = _targets(driven, lanes, first_miss)
                        best = (worth, Step("move", modify=modify, targets=targets))
        return best

    def _drive(self, path: Path, first_miss: int | None) -> Drive:
        key = (path, first_miss)
        if key not in self.drives:
            fixed = self.fixed
            self.drives[key] = self.track._drive(fixed.car, path, first_miss, fixed.gear)
        return self.drives[key]

    def _after(self, drive: Drive, spent: int, reserve: int | None) -> float:
        """The worth of the round start a drive leads to (RR-19 to RR-24)."""
        fixed = self.fixed
        last = fixed.round_number >= MAX_ROUNDS
        settled = settle(drive, fixed.timer, fixed.control - spent, last)
        if settled is None:
            return LOST_RUN
        kind, timer, control = settled
        rounds = fixed.rounds_played + 1
        if kind == "finish":
            return finished(timer, control, rounds)
        start = Start(
            row=drive.car[0],
            lane=drive.car[1],
            gear=drive.gear,
            no_upshift=drive.damaged,
            timer=timer,
            control=control,
            reserve=reserve,
            card_a=fixed.card_a + drive.advanced,
            rounds_played=rounds,
        )
        stalled = not drive.advanced and self._steps(drive.car) >= self._steps(fixed.car)
        return value(self.sight, start) - (STALL_PRICE if stalled else 0.0)

    def _steps(self, spot: Spot) -> float:
        return self.sight.steps_left(*spot)


def _without(pool: tuple[int, ...], die: int) -> tuple[int, ...]:
    index = pool.index(die)
    return pool[:index] + pool[index + 1 :]


def _with_reserve(
    values: tuple[int, ...], reserve: int | None
) -> Iterator[tuple[tuple[int, ...], int | None, tuple[int, int] | None]]:
    """The route's values with the reserve kept, or spent on one die (RR-14)."""
    yield values, reserve, None
    if reserve is None:
        return
    for step, die in enumerate(values):
        for sign in (1, -1):
            changed = die + sign * reserve
            if 1 <= changed <= 6:
                yield (*values[:step], changed, *values[step + 1 :]), None, (step, sign)


def _targets(
    values: tuple[int, ...], lanes: tuple[str, ...], first_miss: int | None
) -> tuple[int, ...]:
    """The values to drive with: each die before first_miss at its nearest fitting
    value, die first_miss at its nearest missing one, the rest as they are."""
    targets = list(values)
    for index, (die, lane) in enumerate(zip(values, lanes, strict=True)):
        if first_miss is not None and index > first_miss:
            break
        targets[index] = nearest_value(die, lane, index != first_miss)
    return tuple(targets)


# ----- from a state to the search and back ------------------------------------------------
_TRACKS: dict[tuple[object, ...], Track] = {}
_SEARCHES: dict[tuple[object, ...], RoundSearch] = {}
KEEP_SEARCHES = 8  # a round's searches are reused by its later decisions


def _in_view(state: State) -> tuple[object, ...]:
    """The cards in view, as a key: what the search may read of the track."""
    sight = horizon(state)
    return (sight, tuple(state["track"][: sight.starts[-1]]))


def _track(state: State) -> Track:
    key = _in_view(state)
    if key not in _TRACKS:
        if len(_TRACKS) > KEEP_SEARCHES:
            _TRACKS.clear()
        _TRACKS[key] = Track(state["seed"], state)
    return _TRACKS[key]


def search(state: State, gear: int, control: int) -> RoundSearch:
    """The round search of state's round driven in gear with control left."""
    car = state["car"]
    fixed = Round(
        car=(car["row"], car["lane"]),
        gear=gear,
        timer=state["timer"],
        control=control,
        card_a=state["card_a"],
        round_number=state["round"],
        rounds_played=state["rounds_played"],
    )
    key = (_in_view(state), fixed)
    if key not in _SEARCHES:
        if len(_SEARCHES) > KEEP_SEARCHES:
            _SEARCHES.clear()
        _SEARCHES[key] = RoundSearch(_track(state), horizon(state), fixed)
    return _SEARCHES[key]


def best_gear(state: State) -> int:
    """The gear whose round is worth most, its shift paid (RR-5, RR-6)."""
    if state["shifted"]:
        return int(state["gear"])
    options = gear_options(state["gear"], state["control"], state["no_upshift"])
    return max(
        options,
        key=lambda option: search(state, option[0], state["control"] - option[1]).opening(
            state["reserve"]
        ),
    )[0]


def _node(state: State) -> Node:
    route = state["route"]
    return (
        state["rolls"],
        tuple(sorted(state["pool"])),
        tuple((die["row"], die["lane"]) for die in route),
        tuple(die["value"] for die in route),
        state["reserve"],
        state["placed_since_roll"],
        state["reserved_this_round"],
    )


def _action(state: State, step: Step) -> Action:
    """The engine action that takes step in state."""
    row, lane = step.spot
    if step.kind == "place":
        return {"type": "place", "die": state["pool"].index(step.die), "row": row, "lane": lane}
    if step.kind == "reserve":
        return {"type": "reserve", "die": state["pool"].index(step.die)}
    if step.kind == "place_reserve":
        return {"type": "place_reserve", "row": row, "lane": lane}
    if step.kind == "reroll":
        return {"type": "reroll"}
    return _drive_action(state, step)


def _drive_action(state: State, step: Step) -> Action:
    """The next action of a drive: the reserve spent, then control, then the move."""
    if step.modify is not None:
        index, sign = step.modify
        return {"type": "modify", "step": index, "delta": sign}
    for index, (die, target) in enumerate(zip(state["route"], step.targets, strict=True)):
        if die["value"] != target:
            return control_to(index, die["value"], target)[0]
    return {"type": "move"}


def planned_action(state: State) -> Action:
    """The expert's action in state, which agrees with the player's view: a gear, then
    the round's dice as the search finds best."""
    if state["phase"] == "shift":
        gear = best_gear(state)
        return {"type": "roll"} if gear == state["gear"] else {"type": "gear", "gear": gear}
    searched = search(state, state["gear"], state["control"])
    return _action(state, searched.best(_node(state))[1])
