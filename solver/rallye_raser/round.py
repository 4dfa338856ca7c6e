"""One Rallye Raser round as a compact model, for the exact solver.

Replaying every dice action through the engine for thousands of states per
round is far too slow, so a round is computed in three independent parts and
joined:

- the dice: which route values (in route order) and which reserve the dice of
  the round can leave, and at what control cost for bringing a reserve
  modification into 1..6 (depends only on round, gear and reserve held);
- the route: every field path the engine's own `target_problem` allows from the
  car (depends only on the car's field and card A);
- the control plan: whether each die should match its lane (all do, or die j is
  the first that does not) and what the cheapest control spending for that is.

Moving along a path with a given first mismatch, and step IV, are then
simulated once per (field, path, mismatch, gear). This is a second encoding of
rules RR-5 to RR-26; tests/test_solver_rallye_raser.py checks it round by round
against exhaustive play through the engine, and every witness is replayed
through the engine by solver.core.solve.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

from puzzles.rallye_raser.engine import (
    DICE_COUNT,
    GEAR_CHECK,
    MAX_GEAR,
    MAX_REROLLS,
    TRACK_MAX,
    target_problem,
)
from puzzles.rallye_raser.states import RouteDie, State
from puzzles.rallye_raser.track import LANES, card_index, lane_fits, limit_of
from puzzles.rallye_raser.track import field as field_kind
from puzzles.rng import dice

Spot = tuple[int, str]  # (row, lane)
Path = tuple[Spot, ...]
# A recipe step of the dice phase: ("place", value) | ("reserve", value) |
# ("place_reserve",) | ("modify", step, sign, shift) | ("reroll",)
Recipe = tuple[tuple[Any, ...], ...]


@cache
def control_cost(value: int, lane: str, match: bool) -> int:
    """Control points that make a die of this value match (or miss) its lane."""
    return min(abs(w - value) for w in range(1, 7) if lane_fits(lane, w) == match)


@cache
def nearest_value(value: int, lane: str, match: bool) -> int:
    return min(
        (w for w in range(1, 7) if lane_fits(lane, w) == match), key=lambda w: abs(w - value)
    )


@dataclass(frozen=True)
class DiceEnd:
    """A way the dice phase can end: route values, reserve left, control spent."""

    values: tuple[int, ...]
    reserve: int | None
    cost: int
    recipe: Recipe


# A dice-phase node: (rolls made - 1, pool, route values, reserve, a die of the
# latest roll placed, a reservation made this round).
DiceNode = tuple[int, tuple[int, ...], tuple[int, ...], int | None, bool, bool]


def _roll_used(node: DiceNode, length: int, closed: bool) -> bool:
    """RR-8 for driving (and for reserving a roll's last die) on a route of `length`
    dice: a die of the latest roll is placed, or none can be (no pool die left, or
    the route is full or at a dead end: `closed`). A reroll has no such lapse."""
    _, pool, values, _, placed, _ = node
    can_place = bool(pool) and (len(values) < length or not closed)
    return placed or not can_place


def _dice_moves(
    node: DiceNode, length: int, closed: bool, rolls: list[tuple[int, ...]]
) -> Iterator[tuple[tuple[Any, ...], int, DiceNode]]:
    """The dice-phase steps from node towards a route of `length` dice."""
    roll, pool, values, reserve, placed, reserved = node
    used = _roll_used(node, length, closed)
    may_reserve = reserve is None and not reserved and (used or len(pool) > 1)
    for value in sorted(set(pool)):
        rest = list(pool)
        rest.remove(value)
        rest_t = tuple(rest)
        if len(values) < length:
            yield ("place", value), 0, (roll, rest_t, (*values, value), reserve, True, reserved)
        if may_reserve:
            yield ("reserve", value), 0, (roll, rest_t, values, value, placed, True)
    if reserve is not None:
        if len(values) < length:
            yield ("place_reserve",), 0, (roll, pool, (*values, reserve), None, placed, reserved)
        for step, value in enumerate(values):
            for sign in (1, -1):
                result = value + sign * reserve
                shift = min(max(result, 1), 6) - result
                if 1 <= value + shift <= 6:
                    changed = (*values[:step], result + shift, *values[step + 1 :])
                    move = ("modify", step, sign, shift)
                    yield move, abs(shift), (roll, pool, changed, None, placed, reserved)
    if roll < MAX_REROLLS and placed and pool:
        fresh = tuple(sorted(rolls[roll + 1][: len(pool)]))
        yield ("reroll",), 0, (roll + 1, fresh, values, reserve, False, reserved)


def dice_ends(
    seed: str, round_number: int, reserve: int | None, length: int, closed: bool
) -> list[DiceEnd]:
    """Every (values, reserve) with which the round's dice can drive a route of `length`
    dice, at its least control cost; closed: no die can be placed beyond that route."""
    rolls = [dice(seed, round_number, k) for k in range(MAX_REROLLS + 1)]
    thrown = DICE_COUNT - (reserve is not None)
    start: DiceNode = (0, tuple(sorted(rolls[0][:thrown])), (), reserve, False, False)
    best: dict[tuple[tuple[int, ...], int | None], tuple[int, Recipe]] = {}
    seen: dict[DiceNode, int] = {}
    stack: list[tuple[DiceNode, int, Recipe]] = [(start, 0, ())]
    while stack:
        node, cost, recipe = stack.pop()
        if seen.get(node, TRACK_MAX + 1) <= cost:
            continue
        seen[node] = cost
        end = (node[2], node[3])
        ended = len(node[2]) == length and _roll_used(node, length, closed)
        if ended and cost < best.get(end, (TRACK_MAX + 1, ()))[0]:
            best[end] = (cost, recipe)
        for move, extra, following in _dice_moves(node, length, closed, rolls):
            if cost + extra <= TRACK_MAX:
                stack.append((following, cost + extra, (*recipe, move)))
    return [DiceEnd(values, kept, cost, recipe) for (values, kept), (cost, recipe) in best.items()]


def plan_costs(values: tuple[int, ...], lanes: tuple[str, ...]) -> Iterator[tuple[int | None, int]]:
    """(first_miss, control) for every way the route can resolve: dice before
    first_miss match their lanes and die first_miss misses its own (None: all match)."""
    matched = 0
    for index, (value, lane) in enumerate(zip(values, lanes, strict=True)):
        yield index, matched + control_cost(value, lane, False)
        matched += control_cost(value, lane, True)
    yield None, matched


@dataclass(frozen=True)
class Plan:
    """The cheapest dice end that drives these lanes with this first mismatch."""

    first_miss: int | None
    cost: int
    end: DiceEnd


def cheapest_plans(ends: list[DiceEnd], lanes: tuple[str, ...]) -> list[Plan]:
    """For each first mismatch (None: all match) and reserve left, the cheapest end."""
    best: dict[tuple[int | None, int | None], Plan] = {}
    for end in ends:
        for first_miss, control in plan_costs(end.values, lanes):
            cost = end.cost + control
            key = (first_miss, end.reserve)
            if cost <= TRACK_MAX and (key not in best or cost < best[key].cost):
                best[key] = Plan(first_miss, cost, end)
    return list(best.values())


class Drive(NamedTuple):
    """The effect of moving along a path with a given first mismatch, and of step IV.

    perfect is only set for a finish, where it is all that counts; advanced: the car
    ends on card B, so the cards advance and the gear check runs.
    """

    car: Spot
    gear: int
    loss: bool
    finished: bool
    perfect: bool
    damaged: bool
    advanced: bool


How = tuple[int, Path, Plan]  # gear chosen, route, dice plan
# A round start without its dials: (round, row, lane, gear, reserve or 0, no_upshift).
Family = tuple[int, int, str, int, int, bool]
Effect = tuple[Drive, int | None]  # a round's drive and the reserve it keeps
Choices = dict[Effect, tuple[int, How]]  # each effect's least control cost, and how
# A route: its path, its lanes, whether it is closed, its drive by first mismatch.
Route = tuple[Path, tuple[str, ...], bool, dict[int | None, Drive]]


@dataclass
class Track:
    """The seed's track, with the caches that depend only on it."""

    seed: str
    state: State  # any state of the seed: track, card_starts and deck
    paths_cache: dict[tuple[Spot, int], list[Path]] = field(default_factory=dict)
    routes_cache: dict[tuple[Spot, int, int], list[Route]] = field(default_factory=dict)
    ends_cache: dict[tuple[int, int | None, int, bool], list[DiceEnd]] = field(default_factory=dict)
    choices_cache: dict[Family, Choices] = field(default_factory=dict)
    plans_cache: dict[tuple[int, int | None, tuple[str, ...], bool], list[Plan]] = field(
        default_factory=dict
    )

    def plans(
        self, round_number: int, reserve: int | None, lanes: tuple[str, ...], closed: bool
    ) -> list[Plan]:
        """The cheapest ways the round's dice can drive a route over these lanes;
        closed: no die can be placed beyond the route."""
        key = (round_number, reserve, lanes, closed)
        if key not in self.plans_cache:
            ends_key = (round_number, reserve, len(lanes), closed)
            if ends_key not in self.ends_cache:
                self.ends_cache[ends_key] = dice_ends(self.seed, *ends_key)
            self.plans_cache[key] = cheapest_plans(self.ends_cache[ends_key], lanes)
        return self.plans_cache[key]

    def choices(self, family: Family) -> Choices:
        """Per distinct round effect (drive, reserve kept): its least control cost, and how.

        family is (round, row, lane, gear, reserve or 0, no_upshift); how is
        (gear chosen, path, plan).
        """
        if family not in self.choices_cache:
            self.choices_cache[family] = self._choices(*family)
        return self.choices_cache[family]

    def _choices(
        self,
        round_number: int,
        row: int,
        lane: str,
        gear: int,
        reserve_key: int,
        no_upshift: bool,
    ) -> Choices:
        reserve = reserve_key or None
        car = (row, lane)
        card_a = card_index(self.state["card_starts"], row)
        cheapest: Choices = {}
        for chosen, shift_cost in gear_options(gear, TRACK_MAX, no_upshift):
            for path, lanes, closed, drives in self.routes(car, card_a, chosen):
                for plan in self.plans(round_number, reserve, lanes, closed):
                    effect = (drives[plan.first_miss], plan.end.reserve)
                    spend = shift_cost + plan.cost
                    known = cheapest.get(effect)
                    if known is None or spend < known[0]:
                        cheapest[effect] = (spend, (chosen, path, plan))
        return _without_needless_losses(cheapest)

    def routes(self, car: Spot, card_a: int, gear: int) -> list[Route]:
        """(path, its lanes, closed, drive by first mismatch) of every route for this
        gear; closed: the route is full or no field is left to extend it (RR-8)."""
        key = (car, card_a, gear)
        if key not in self.routes_cache:
            paths = self.paths(car, card_a)
            extended = {path[:-1] for path in paths if path}
            self.routes_cache[key] = [
                (
                    path,
                    tuple(lane for _, lane in path),
                    len(path) == gear or path not in extended,
                    {
                        first_miss: self.drive(car, path, first_miss, gear)
                        for first_miss in [None, *range(len(path))]
                    },
                )
                for path in paths
                if len(path) <= gear
            ]
        return self.routes_cache[key]

    def paths(self, car: Spot, card_a: int) -> list[Path]:
        """Every route the engine accepts from car, the empty one included."""
        key = (car, card_a)
        if key not in self.paths_cache:
            self.paths_cache[key] = self._grow([()], car, card_a)
        return self.paths_cache[key]

    def _grow(self, found: list[Path], car: Spot, card_a: int) -> list[Path]:
        frontier = list(found)
        for _ in range(MAX_GEAR):
            longer = []
            for path in frontier:
                probe = self._probe(car, card_a, path)
                tip = path[-1] if path else car
                index = LANES.index(tip[1])
                for row, lane_index in (
                    (tip[0] + 1, index),
                    (tip[0], index - 1),
                    (tip[0], index + 1),
                ):
                    if 0 <= lane_index < len(LANES):
                        spot = (row, LANES[lane_index])
                        if target_problem(probe, *spot) is None:
                            longer.append((*path, spot))
            found.extend(longer)
            frontier = longer
        return found

    def _probe(self, car: Spot, card_a: int, path: Path) -> State:
        """A state holding just what the engine's target check reads: where the car and
        the route's dice are, not their values."""
        return {
            **self.state,
            "card_a": card_a,
            "car": {"row": car[0], "lane": car[1]},
            "route": [probe_die(row, lane) for row, lane in path],
        }

    def drive(self, car: Spot, path: Path, first_miss: int | None, gear: int) -> Drive:
        """Moving along path in gear with a first mismatch (RR-16 to RR-19, RR-23, RR-24)."""
        track, starts = self.state["track"], self.state["card_starts"]
        here, now_gear, loss = car, gear, False
        for step, spot in enumerate(path):
            limit = limit_of(field_kind(track, *here))
            if limit is not None and now_gear > limit:
                now_gear = limit  # Gasfuss
                break
            here = spot
            if step == first_miss:
                loss = True
                break
            if here[0] >= starts[-1]:
                break
        finished = here[0] >= starts[-1]
        # RR-24: every die fits its lane (no first mismatch) and lies in the car's lane.
        perfect = (
            finished
            and first_miss is None
            and len(path) == gear
            and all(lane == car[1] for _, lane in path)
        )
        damaged = len(path) < now_gear and not finished  # RR-19: the gear after a Gasfuss
        if damaged:
            now_gear = 1
        advanced = not finished and card_index(starts, here[0]) > card_index(starts, car[0])
        return Drive(here, now_gear, loss, finished, perfect, damaged, advanced)


@cache
def _without_loss(drive: Drive) -> Drive:
    return drive._replace(loss=False)


def _without_needless_losses(cheapest: Choices) -> Choices:
    """Drop a loss of control that costs no less than the same drive without it."""
    kept: Choices = {}
    for (drive, reserve), (spend, how) in cheapest.items():
        if drive.loss:
            twin = cheapest.get((_without_loss(drive), reserve))
            if twin is not None and twin[0] <= spend:
                continue
        kept[(drive, reserve)] = (spend, how)
    return kept


def probe_die(row: int, lane: str) -> RouteDie:
    """A route die for the engine's target check, which reads where it lies, never its
    value."""
    return RouteDie(row=row, lane=lane, value=0, source="white")


def cap(value: int) -> int:
    return max(0, min(TRACK_MAX, value))


@cache
def settle(drive: Drive, timer: int, control: int, last_round: bool) -> tuple[str, int, int] | None:
    """Timer and control after moving and step IV; None when the run ends unfinished.

    control is what is left after the round's spending; last_round: the round is
    the last the safety bound allows.
    """
    timer -= drive.loss
    if timer <= 0:
        return None
    if drive.finished:
        timer = cap(timer + (1 if drive.perfect else -1))
        return ("finish", timer, control) if timer > 0 else None
    if drive.advanced:
        timer_change, control_change = GEAR_CHECK[drive.gear]
        timer, control = cap(timer + timer_change), cap(control + control_change)
    if timer == 0 or last_round:
        return None
    return ("run", timer, control)


def gear_options(gear: int, control: int, no_upshift: bool) -> list[tuple[int, int]]:
    """(gear, control cost) of every gear the round may be driven in (RR-5, RR-6)."""
    options = []
    for chosen in range(1, MAX_GEAR + 1):
        cost = max(0, abs(chosen - gear) - 1)
        if cost <= control and not (no_upshift and chosen > gear):
            options.append((chosen, cost))
    return options
