"""Rallye Raser's expert: one round by exact expectimax, round ends by a value table.

Within a round every die still to come is summed over exactly (a roll of n dice has
at most 56 distinct outcomes), and every choice the rules allow after it is tried:
where each die goes, the reserve taken, placed or spent (RR-12 to RR-14), a reroll
(RR-8) and the drive. Control (RR-15) is spent last, just before the drive, in the
cheapest way that makes each die fit its lane (or lets one miss it, RR-17); since
control changes only values, spending it at the end loses no choice.

Where the round ends, the rest of the race is valued without foresight by `Outlook`:
the points the dials can still reach through the gear checks left (RR-21) and the
finish (RR-24), less a small price per round still to drive (RR-25's tie-break, and
the safety bound of RR-26). Its figures (`Leaf`, in leaf.json) are fitted to the
search's own races on training seeds by leaf_fit.py. The search weighs a round's end
by odds chosen for play; the points it reports for a grade read that end by odds
fitted so that each round's end is worth what the next round's search expects of it
(grade_fit.py): a grade is then the points the par's play can be expected to end with.
Nothing here reads a die not rolled or a card not drawn: the search takes a state that
agrees with the player's view, and reads only the cards in view and the pool.
"""

from __future__ import annotations

import itertools
import json
import math
import pathlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple

from puzzles.base import Action
from puzzles.rallye_raser.engine import DICE_COUNT, GEAR_CHECK, MAX_REROLLS, MAX_ROUNDS, TRACK_MAX
from puzzles.rallye_raser.states import State
from puzzles.rallye_raser.track import CARDS, LANES, card_index, card_sections, limit_of
from puzzles.rallye_raser.track import field as field_kind
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

# The price of one round still to drive, in points. RR-25 counts a point above any
# number of rounds, but every round the rules force dice onto the road (RR-8), so a
# round spent waiting is not free, and a player who waits for ever never finishes
# (RR-26). This figure was chosen by measuring the player over seeds
# (docs/puzzle-quality.md): cheaper prices made the car wait on a card's last row
# until the leaf stopped counting on gear-3 checks it cannot reach there.
ROUND_PRICE = 0.2
SAFE_ROUNDS = 36  # beyond this many rounds in all, the safety bound looms (RR-26)
LEAF_FILE = pathlib.Path(__file__).with_name("leaf.json")


class DialOdds(NamedTuple):
    """The chances that shape the points the dials can still reach."""

    mishap: float  # a control point lost on the way to a gear check (RR-8, RR-17)
    clean_finish: float  # a finish is perfect (RR-24)
    top_gear_check: float  # a check meant for gear 3 runs in it (RR-9, RR-21)
    # the chance that a check in gear 3 costs a control point beforehand, for the dice
    # of its full route made to fit (RR-15, RR-16)
    top_gear_control: float


@dataclass(frozen=True)
class Leaf:
    """The figures of a round end's value, fitted to the search's own play
    (solver/rallye_raser/leaf_fit.py writes them to leaf.json)."""

    odds: DialOdds
    reserve_points: float  # a die held in reserve (RR-12 to RR-14)
    rows_per_round: float  # rows a round drives, on average
    slow_gear_rounds: float  # rounds lost per gear below 3 at a round's end (RR-5)
    damage_rounds: float  # rounds lost to a round in which the gear may not rise (RR-6)
    base_rounds: float  # rounds, the finishing one included, beyond the rows' share
    # The odds a grade reads a round's end by (grade_fit.py); None: the play's own.
    graded_odds: DialOdds | None = None

    @classmethod
    def load(cls, path: pathlib.Path = LEAF_FILE) -> Leaf:
        figures = json.loads(path.read_text())["leaf"]
        graded = figures.pop("graded_odds", None)
        odds = DialOdds(**figures.pop("odds"))
        return cls(odds, **figures, graded_odds=None if graded is None else DialOdds(**graded))

    def as_json(self) -> dict[str, object]:
        odds = {"odds": self.odds._asdict()}
        if self.graded_odds is not None:
            odds["graded_odds"] = self.graded_odds._asdict()
        rest = {k: v for k, v in vars(self).items() if k not in ("odds", "graded_odds")}
        return {**odds, **rest}

    @property
    def grade_odds(self) -> DialOdds:
        return self.odds if self.graded_odds is None else self.graded_odds


LEAF = Leaf.load()


@cache
def dial_points(
    timer: int,
    control: int,
    checks: int,
    odds: DialOdds,
    top_cost: int | None = 0,
    then_cost: int = 0,
) -> float:
    """The points dials can be expected to end with through `checks` gear checks, each in
    the gear that serves best (RR-21), and the finish (RR-24, RR-25), when on the way to
    each a control point is lost with probability odds.mishap (to a misfit the rules
    force, RR-8; with no control left, a timer point, RR-17). top_cost: the control a
    shift to gear 3 costs before the next check (RR-5), None when out of reach;
    then_cost: what it costs before the check after, when the next runs in gear 1."""
    if timer <= 0:
        return 0.0
    hurt = (timer, control - 1) if control else (timer - 1, 0)
    return (1 - odds.mishap) * _next_stop(
        timer, control, checks, odds, top_cost, then_cost
    ) + odds.mishap * _next_stop(*hurt, checks, odds, top_cost, then_cost)


def _next_stop(
    timer: int, control: int, checks: int, odds: DialOdds, top_cost: int | None, then_cost: int
) -> float:
    """The points after the next gear check, in the gear that serves best, or after the
    finish (clean with probability odds.clean_finish). A check in gear 3 needs a full
    route of three dice that fit (RR-9, RR-16) and comes off with probability
    odds.top_gear_check; else the route falls short and the check runs in gear 1 (RR-19).
    With probability odds.top_gear_control it costs a control point beforehand, spent to
    make that route's dice fit (RR-15): without it a control point seems nearly free
    while the timer is full, and the search spends control it later lacks."""
    if timer <= 0:
        return 0.0
    if checks <= 0:
        clean = 2 * min(TRACK_MAX, timer + 1) + control
        unclean = 2 * (timer - 1) + control if timer > 1 else 0
        return odds.clean_finish * clean + (1 - odds.clean_finish) * unclean
    low = max(
        _after_check(timer, control, checks, odds, 1, then_cost),
        _after_check(timer, control, checks, odds, 2),
    )
    if top_cost is None or top_cost > control:
        return low
    paid = control - top_cost
    dear = max(_top_gear_check(timer, paid - 1, checks, odds, then_cost), low) if paid else low
    cheap = _top_gear_check(timer, paid, checks, odds, then_cost)
    return max((1 - odds.top_gear_control) * cheap + odds.top_gear_control * dear, low)


def _top_gear_check(timer: int, control: int, checks: int, odds: DialOdds, then_cost: int) -> float:
    """The points after trying the next check in gear 3 with control left: it runs in
    gear 3 with probability odds.top_gear_check, else the route falls short and it runs
    in gear 1 (RR-19)."""
    return odds.top_gear_check * _after_check(timer, control, checks, odds, 3) + (
        1 - odds.top_gear_check
    ) * _after_check(timer, control, checks, odds, 1, then_cost)


def _after_check(
    timer: int, control: int, checks: int, odds: DialOdds, gear: int, then_cost: int = 0
) -> float:
    """The points after a gear check in gear (RR-21), dials kept within 0..6 (RR-1); a
    check in gear 1 leaves the car in gear 1, from which the next gear 3 costs then_cost."""
    timer_change, control_change = GEAR_CHECK[gear]
    return dial_points(
        min(TRACK_MAX, max(0, timer + timer_change)),
        min(TRACK_MAX, max(0, control + control_change)),
        checks - 1,
        odds,
        then_cost if gear == 1 else 0,
    )


@cache
def roll_outcomes(count: int) -> tuple[tuple[tuple[int, ...], float], ...]:
    """Every sorted roll of count dice with its probability."""
    tally = Counter(tuple(sorted(faces)) for faces in itertools.product(range(1, 7), repeat=count))
    total = 6**count
    return tuple((faces, times / total) for faces, times in sorted(tally.items()))


def unseen_sections(cards_seen: list[str]) -> float:
    """The mean length of a card not dealt face up yet (RR-3: nine of the pool's cards)."""
    unseen = [card for card in CARDS if card not in cards_seen]
    return sum(len(card_sections({"id": card, "rotated": False})) for card in unseen) / len(unseen)


class Ahead(NamedTuple):
    """A round's end as the value of the race beyond it reads it (Outlook.ahead)."""

    timer: int
    control: int
    checks: int  # gear checks left (RR-21)
    top_cost: int | None  # see Outlook.top_gear_cost
    then_cost: int  # see Outlook.then_gear_cost
    rounds: float  # the rounds the race can be expected to take in all
    held: bool  # a die held in reserve (RR-12)
    over: float | None = None  # the points of a race this round ended (RR-22, RR-24)

    def points(self, leaf: Leaf, odds: DialOdds) -> float:
        """The points the race can be expected to end with, the dials read by odds."""
        if self.over is not None:
            return self.over
        late = max(0.0, self.rounds - SAFE_ROUNDS)  # the risk of RR-26's bound, in points
        dials = dial_points(
            self.timer, self.control, self.checks, odds, self.top_cost, self.then_cost
        )
        return dials - late * late + (leaf.reserve_points if self.held else 0.0)


UNFINISHED = Ahead(0, 0, 0, None, 0, float(MAX_ROUNDS), False, 0.0)  # no score: RR-22, RR-26


@dataclass(frozen=True)
class Outlook:
    """What a round's end is worth: the race as the player sees it at the round's start."""

    card_count: int  # cards in the race (RR-3)
    visible_end: int  # the first row beyond card B (or the finish zone's start)
    rows_unseen: float  # the expected rows of the cards still to draw
    round_number: int  # the round being played
    leaf: Leaf = LEAF
    limits: frozenset[Spot] = frozenset()  # the speed-limit fields of the cards in view

    def rows_left(self, row: int) -> float:
        return self.visible_end - row + self.rows_unseen

    def ahead(
        self,
        drive: Drive,
        settled: tuple[str, int, int] | None,
        reserve: int | None,
        starts: list[int],
    ) -> Ahead:
        """What the rest of the race holds after a round that ended so."""
        if settled is None:
            return UNFINISHED
        kind, timer, control = settled
        if kind == "finish":
            return Ahead(
                timer, control, 0, None, 0, float(self.round_number), False, 2.0 * timer + control
            )
        leaf = self.leaf
        rounds = (
            self.round_number
            + leaf.base_rounds
            + self.rows_left(drive.car[0]) / leaf.rows_per_round
            + (3 - drive.gear) * leaf.slow_gear_rounds
            + drive.damaged * leaf.damage_rounds
        )
        return Ahead(
            timer,
            control,
            self.card_count - 1 - card_index(starts, drive.car[0]),
            self.top_gear_cost(drive.car, drive.gear, drive.damaged, starts),
            self.then_gear_cost(drive.car, starts),
            rounds,
            reserve is not None,
        )

    def value(self, ahead: Ahead) -> tuple[float, Parts]:
        """What the search weighs a round's end at (the points by the play's odds, less
        the price of the rounds), and the (points, rounds) a grade reports of it (the
        points by the grade's odds)."""
        play = ahead.points(self.leaf, self.leaf.odds) - ROUND_PRICE * ahead.rounds
        return play, (ahead.points(self.leaf, self.leaf.grade_odds), ahead.rounds)

    def then_gear_cost(self, car: Spot, starts: list[int]) -> int:
        """The control gear 3 costs at the check after the next, when the next runs in
        gear 1: a car that crosses in gear 1 onto a card of one row is on that card's
        last row in gear 1, and two steps in one round cost a control point (RR-5). Known
        only while that card was in view at the round's start; else counted free, as
        every check beyond."""
        following = card_index(starts, car[0]) + 1
        if following + 1 >= len(starts) or starts[following + 1] > self.visible_end:
            return 0
        return int(starts[following + 1] - starts[following] == 1)

    def top_gear_cost(self, car: Spot, gear: int, damaged: bool, starts: list[int]) -> int | None:
        """The control a shift to gear 3 for the next gear check costs, None when out of
        reach. From a card's last row the next round crosses, in a gear the shift reaches
        from this one (RR-5, RR-6) that may leave the field (RR-18): a car that waits
        there would otherwise count on a check in gear 3 it cannot have."""
        if car[0] + 1 != starts[card_index(starts, car[0]) + 1]:
            return 0
        if car in self.limits or (damaged and gear < 3):
            return None
        return max(0, 2 - gear)


# A dice-phase node: (rolls made, pool, route, values, reserve, placed since the roll,
# reserved this round).
Node = tuple[int, tuple[int, ...], Path, tuple[int, ...], int | None, bool, bool]
# (expected points, expected rounds in all) of the race: see Outlook.parts.
Parts = tuple[float, float]


class DriveEnd(NamedTuple):
    """The best way to drive a route: its value, the die that should miss its lane (None
    when all fit), what the race holds after it and the parts a grade reports."""

    worth: float
    first_miss: int | None
    ahead: Ahead
    parts: Parts


class Choice(NamedTuple):
    """A choice of the dice phase: its kind (place, place_reserve, reserve, modify,
    reroll, move), the die's value it uses, the field, and a modification's step and
    sign."""

    kind: str
    value: int = 0
    spot: Spot | None = None
    step: int = 0
    sign: int = 0


@dataclass
class RoundSearch:
    """The expectimax of one round's dice phase in one gear, with the control left."""

    track: Track
    outlook: Outlook
    car: Spot
    card_a: int
    gear: int
    timer: int
    control: int
    memo: dict[Node, float] = field(default_factory=dict)
    parts_memo: dict[Node, Parts] = field(default_factory=dict)
    ends_memo: dict[Node, dict[Ahead, float]] = field(default_factory=dict)
    ends: dict[tuple[Path, tuple[int, ...], int | None], DriveEnd] = field(default_factory=dict)
    _children: dict[Path, list[Spot]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for path in self.track.paths(self.car, self.card_a):
            if path:
                self._children.setdefault(path[:-1], []).append(path[-1])

    def next_spots(self, path: Path) -> list[Spot]:
        return self._children.get(path, []) if len(path) < self.gear else []

    def start_value(self, reserve: int | None) -> float:
        """The round's expected value before the roll (RR-7)."""
        count = DICE_COUNT - (reserve is not None)
        return self._chance(_rolled(1, (), (), reserve, False), count)

    def start_parts(self, reserve: int | None) -> Parts:
        """The (points, rounds) the race can be expected to end with when the round is
        played as the search chooses, before the roll."""
        count = DICE_COUNT - (reserve is not None)
        return self._chance_parts(_rolled(1, (), (), reserve, False), count)

    def _chance(self, rolled: Callable[[tuple[int, ...]], Node], count: int) -> float:
        return sum(chance * self.value(rolled(faces)) for faces, chance in roll_outcomes(count))

    def _chance_parts(self, rolled: Callable[[tuple[int, ...]], Node], count: int) -> Parts:
        points = rounds = 0.0
        for faces, chance in roll_outcomes(count):
            after = self.parts(rolled(faces))
            points, rounds = points + chance * after[0], rounds + chance * after[1]
        return points, rounds

    def best_choice(self, node: Node) -> Choice:
        return max(self.choices(node), key=lambda choice: self.choice_value(node, choice))

    def parts(self, node: Node) -> Parts:
        """The (points, rounds) expected from node, the search choosing: what its value
        weighs, told apart so that a grade can say what a choice costs in each."""
        known = self.parts_memo.get(node)
        if known is None:
            known = self.choice_parts(node, self.best_choice(node))
            self.parts_memo[node] = known
        return known

    def choice_parts(self, node: Node, choice: Choice) -> Parts:
        rolls, pool, path, values, reserve, _, reserved = node
        if choice.kind == "move":
            return self.drive_end(path, values, reserve).parts
        if choice.kind == "reroll":
            return self._chance_parts(
                _rolled(rolls + 1, path, values, reserve, reserved), len(pool)
            )
        return self.parts(_after(node, choice))

    def value(self, node: Node) -> float:
        known = self.memo.get(node)
        if known is None:
            known = max(self.choice_value(node, choice) for choice in self.choices(node))
            self.memo[node] = known
        return known

    def choices(self, node: Node) -> Iterator[Choice]:
        """The choices the rules allow at node (RR-8, RR-9, RR-12 to RR-14, RR-16)."""
        rolls, pool, path, values, reserve, placed, reserved = node
        spots = self.next_spots(path)
        used = placed or not (pool and spots)
        may_reserve = reserve is None and not reserved and (used or len(pool) > 1)
        for value in sorted(set(pool)):
            yield from (Choice("place", value, spot) for spot in spots)
            if may_reserve:
                yield Choice("reserve", value)
        if reserve is not None:
            yield from (Choice("place_reserve", reserve, spot) for spot in spots)
            yield from _modifications(values, reserve)
        if rolls <= MAX_REROLLS and pool and placed:
            yield Choice("reroll")
        if used:
            yield Choice("move")

    def choice_value(self, node: Node, choice: Choice) -> float:
        rolls, pool, path, values, reserve, _, reserved = node
        if choice.kind == "move":
            return self.drive_end(path, values, reserve).worth
        if choice.kind == "reroll":
            return self._chance(_rolled(rolls + 1, path, values, reserve, reserved), len(pool))
        return self.value(_after(node, choice))

    def drive_end(self, path: Path, values: tuple[int, ...], reserve: int | None) -> DriveEnd:
        """The best way to drive the route, control spent as that needs (RR-15 to RR-24)."""
        key = (path, values, reserve)
        known = self.ends.get(key)
        if known is None:
            lanes = tuple(lane for _, lane in path)
            known = DriveEnd(-math.inf, None, UNFINISHED, (0.0, float(MAX_ROUNDS)))
            for first_miss, cost in plan_costs(values, lanes):
                if cost <= self.control:
                    ahead = self.ending(path, first_miss, cost, reserve)
                    worth, parts = self.outlook.value(ahead)
                    if worth > known.worth:
                        known = DriveEnd(worth, first_miss, ahead, parts)
            self.ends[key] = known
        return known

    def ending(self, path: Path, first_miss: int | None, cost: int, reserve: int | None) -> Ahead:
        """What the race holds after driving path with first_miss, cost control spent."""
        drive = self.track.drive(self.car, path, first_miss, self.gear)
        last_round = self.outlook.round_number >= MAX_ROUNDS
        settled = settle(drive, self.timer, self.control - cost, last_round)
        return self.outlook.ahead(drive, settled, reserve, self.track.state["card_starts"])

    def drive_as_is(self, path: Path, values: tuple[int, ...], reserve: int | None) -> Ahead:
        """What the race holds after driving the route with no more control spent: its
        first die that misses its lane, if any, is where the car loses control (RR-17)."""
        lanes = tuple(lane for _, lane in path)
        first_miss = next(miss for miss, cost in plan_costs(values, lanes) if cost == 0)
        return self.ending(path, first_miss, 0, reserve)

    def start_ends(self, reserve: int | None) -> dict[Ahead, float]:
        """How likely each end of the round is, played as the search chooses, before the
        roll: what start_parts averages, whatever odds the ends are read by."""
        count = DICE_COUNT - (reserve is not None)
        return self._chance_ends(_rolled(1, (), (), reserve, False), count)

    def _chance_ends(
        self, rolled: Callable[[tuple[int, ...]], Node], count: int
    ) -> dict[Ahead, float]:
        ends: dict[Ahead, float] = {}
        for faces, chance in roll_outcomes(count):
            for ahead, likely in self.ends_from(rolled(faces)).items():
                ends[ahead] = ends.get(ahead, 0.0) + chance * likely
        return ends

    def ends_from(self, node: Node) -> dict[Ahead, float]:
        """How likely each end of the round is from node, the search choosing."""
        known = self.ends_memo.get(node)
        if known is None:
            choice = self.best_choice(node)
            rolls, pool, path, values, reserve, _, reserved = node
            if choice.kind == "move":
                known = {self.drive_end(path, values, reserve).ahead: 1.0}
            elif choice.kind == "reroll":
                rolled = _rolled(rolls + 1, path, values, reserve, reserved)
                known = self._chance_ends(rolled, len(pool))
            else:
                known = self.ends_from(_after(node, choice))
            self.ends_memo[node] = known
        return known


def _rolled(
    rolls: int, path: Path, values: tuple[int, ...], reserve: int | None, reserved: bool
) -> Callable[[tuple[int, ...]], Node]:
    """The node after a roll of faces."""
    return lambda faces: (rolls, faces, path, values, reserve, False, reserved)


def _modifications(values: tuple[int, ...], reserve: int) -> Iterator[Choice]:
    """The reserve spent on a placed die, up or down, within 1..6 (RR-14)."""
    for step, value in enumerate(values):
        for sign in (1, -1):
            if 1 <= value + sign * reserve <= 6:
                yield Choice("modify", reserve, step=step, sign=sign)


def _after(node: Node, choice: Choice) -> Node:
    """The node a choice that throws no die leads to."""
    rolls, pool, path, values, reserve, placed, reserved = node
    if choice.kind == "place":
        spot = choice.spot
        assert spot is not None
        rest = _without(pool, choice.value)
        return (rolls, rest, (*path, spot), (*values, choice.value), reserve, True, reserved)
    if choice.kind == "place_reserve":
        spot = choice.spot
        assert spot is not None
        return (rolls, pool, (*path, spot), (*values, choice.value), None, placed, reserved)
    if choice.kind == "reserve":
        return (rolls, _without(pool, choice.value), path, values, choice.value, placed, True)
    changed = list(values)
    changed[choice.step] += choice.sign * choice.value  # modify (RR-14)
    return (rolls, pool, path, tuple(changed), None, placed, reserved)


def _without(pool: tuple[int, ...], value: int) -> tuple[int, ...]:
    rest = list(pool)
    rest.remove(value)
    return tuple(rest)


def outlook_of(state: State, leaf: Leaf = LEAF) -> Outlook:
    """The race as the player sees it at this round: cards in view, cards still to draw."""
    starts: list[int] = state["card_starts"]
    undrawn_after = state["card_a"] + 2
    if undrawn_after < len(starts) - 1:
        seen = [entry["id"] for entry in state["deck"][:undrawn_after]]
        hidden = len(starts) - 1 - undrawn_after
        end, unseen = starts[undrawn_after], hidden * unseen_sections(seen)
    else:
        end, unseen = starts[-1], 0.0
    limits = frozenset(
        (row, lane)
        for row in range(starts[state["card_a"]], end)
        for lane in LANES
        if limit_of(field_kind(state["track"], row, lane)) is not None
    )
    return Outlook(len(starts) - 1, end, unseen, state["round"], leaf, limits)


class LookaheadPlayer:
    """Plays each round by RoundSearch; reads only what the player sees of a state."""

    def __init__(
        self, leaf: Leaf = LEAF, outlook: Callable[[State, Leaf], Outlook] | None = None
    ) -> None:
        self.leaf = leaf
        # What the search makes of a round's end: the expert's Outlook, or another
        # player's aim (players.DistanceOutlook).
        self.outlook = outlook or outlook_of
        # The searches of the round in play, one per gear and control left (RR-5): a
        # round's gear is chosen by searching each, then played in the one chosen.
        self._searches: dict[tuple[object, ...], RoundSearch] = {}

    def search(self, state: State, gear: int, control: int) -> RoundSearch:
        shown = state["deck"][: state["card_a"] + 2]  # cards A and B: what the search reads
        round_key = (json.dumps(shown), state["round"], state["card_a"], state["car"]["row"])
        key = (*round_key, state["car"]["lane"], state["timer"], gear, control)
        if key not in self._searches:
            if next(iter(self._searches), key)[:-2] != key[:-2]:
                self._searches.clear()  # a new round: the old searches are spent
            track = Track(state["seed"], state)
            car = (state["car"]["row"], state["car"]["lane"])
            self._searches[key] = RoundSearch(
                track,
                self.outlook(state, self.leaf),
                car,
                state["card_a"],
                gear,
                state["timer"],
                control,
            )
        return self._searches[key]

    def gear_searches(self, state: State, every: bool = False) -> dict[int, RoundSearch]:
        """The search of the round in each gear it may be driven in (RR-5, RR-6): every
        gear the rules allow, or (every=False) none above a limit the car is on, since
        there Gasfuss (RR-18) only wastes the round."""
        limit = limit_of(field_kind(state["track"], state["car"]["row"], state["car"]["lane"]))
        options = gear_options(state["gear"], state["control"], state["no_upshift"])
        return {
            gear: self.search(state, gear, state["control"] - cost)
            for gear, cost in options
            if every or limit is None or gear <= limit or gear == state["gear"]
        }

    def choose(self, state: State, options: list[Action]) -> Action:
        if state["phase"] == "shift":
            return (
                {"type": "roll"} if state["shifted"] else _gear_action(state, self.best_gear(state))
            )
        search = self.search(state, state["gear"], state["control"])
        return engine_action(state, search, search.best_choice(node_of(state)))

    def best_gear(self, state: State) -> int:
        values = {
            gear: search.start_value(state["reserve"])
            for gear, search in self.gear_searches(state).items()
        }
        return max(values, key=lambda gear: (values[gear], gear == state["gear"]))

    def action_parts(self, state: State, action: Action) -> Parts:
        """The (points, rounds) the race can be expected to end with after action, the
        search playing on this round: exact over the dice of the round."""
        reserve, kind = state["reserve"], action["type"]
        if kind == "gear":
            return self.gear_searches(state, every=True)[action["gear"]].start_parts(reserve)
        search = self.search(state, state["gear"], state["control"])
        if kind == "roll":
            return search.start_parts(reserve)
        node = node_of(state)
        if kind == "control":  # the control point spent now, the rest as the search sees fit
            values = list(node[3])
            values[action["step"]] += action["delta"]
            spent = self.search(state, state["gear"], state["control"] - 1)
            return spent.parts((*node[:3], tuple(values), *node[4:]))
        if kind == "move":
            return search.outlook.value(search.drive_as_is(*node[2:5]))[1]
        return search.choice_parts(node, choice_of(state, action))


def _gear_action(state: State, gear: int) -> Action:
    return {"type": "roll"} if gear == state["gear"] else {"type": "gear", "gear": gear}


def choice_of(state: State, action: Action) -> Choice:
    """The search's choice for an engine action of the dice phase that is not a control
    point or the drive (the inverse of engine_action)."""
    kind = action["type"]
    spot = (action["row"], action["lane"]) if "row" in action else None
    held = state["reserve"] or 0  # a reserve die, where the action uses it (RR-12)
    if kind == "place":
        return Choice("place", state["pool"][action["die"]], spot)
    if kind == "place_reserve":
        return Choice("place_reserve", held, spot)
    if kind == "reserve":
        return Choice("reserve", state["pool"][action["die"]])
    if kind == "modify":
        return Choice("modify", held, step=action["step"], sign=action["delta"])
    return Choice(kind)


def node_of(state: State) -> Node:
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


def engine_action(state: State, search: RoundSearch, choice: Choice) -> Action:
    """The engine's action for a choice of the search; before the drive, the control
    its best plan spends, one point at a time (RR-15)."""
    if choice.kind in ("place", "place_reserve"):
        assert choice.spot is not None
        where = {"row": choice.spot[0], "lane": choice.spot[1]}
        if choice.kind == "place_reserve":
            return {"type": "place_reserve", **where}
        return {"type": "place", "die": state["pool"].index(choice.value), **where}
    if choice.kind == "reserve":
        return {"type": "reserve", "die": state["pool"].index(choice.value)}
    if choice.kind == "modify":
        return {"type": "modify", "step": choice.step, "delta": choice.sign}
    if choice.kind == "reroll":
        return {"type": "reroll"}
    node = node_of(state)
    first_miss = search.drive_end(node[2], node[3], node[4]).first_miss
    return control_toward(state, first_miss) or {"type": "move"}


def control_toward(state: State, first_miss: int | None) -> Action | None:
    """A control point toward the plan: dice before first_miss fit, that one misses."""
    for step, die in enumerate(state["route"]):
        if first_miss is not None and step > first_miss:
            break
        target = nearest_value(die["value"], die["lane"], step != first_miss)
        if target != die["value"]:
            return {"type": "control", "step": step, "delta": 1 if target > die["value"] else -1}
    return None
