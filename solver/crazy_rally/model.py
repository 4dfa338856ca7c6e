"""A compact state model of a Crazy Rally race, for the exact solver and its players.

With hindsight a race is a deterministic walk through states
`(turn, draws, hand, speed, manoeuvrability, body)`: `draws` counts the cards taken
from the supply (whose order is fixed by the seed), and `hand` is a sorted tuple
of card *kinds*. Two adjustment cards with the same speed-up value, braking
value and purple-ness act identically in the race (their symbols only matter in
the setup), so cards are merged by kind; event cards are merged by effect.

Every turn is resolved by puzzles.crazy_rally.rules.resolve_turn, the function the
engine itself uses, and drawing follows the engine's rules CR-8 and CR-9 (the
check after every draw, the draw-two event's included). Rule CR-10 (reshuffling
the discard pile) is provably never reached: at most 14 turn draws + 2 x 3
draw-two events + 8 redrawn event cards = 28 of the 46 supply cards are ever
drawn, so the model checks this instead of modelling it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from puzzles.crazy_rally.cards import (
    ADJUSTMENT_COLOURS,
    ADJUSTMENTS,
    EVENT_EFFECTS,
    EVENTS,
    TRACK,
    AdjustmentCard,
    TrackCard,
)
from puzzles.crazy_rally.engine import (
    EVENT_BONUS,
    START_PROPERTY,
    START_SPEED,
    apply_symbols,
    deal_pairs,
    dealt_event,
    supply_order,
    track_order,
)
from puzzles.crazy_rally.rules import clamp_to_maximum, resolve_track, resolve_turn
from puzzles.crazy_rally.states import CarSheet

# ----- card kinds ---------------------------------------------------------------------------


def _adjustment_key(card: AdjustmentCard) -> tuple[int, int, bool]:
    return card.speed_up, card.braking, card.costs_body


_KIND_KEYS = sorted({_adjustment_key(c) for c in ADJUSTMENTS.values()})
# One representative card per kind: kinds act identically in the race.
ADJUSTMENT_KINDS: list[AdjustmentCard] = [
    next(c for c in ADJUSTMENTS.values() if _adjustment_key(c) == key) for key in _KIND_KEYS
]
EVENT_KIND_BASE = len(ADJUSTMENT_KINDS)  # kinds from here on are events, by effect
KIND_OF: dict[str, int] = {
    **{c.id: _KIND_KEYS.index(_adjustment_key(c)) for c in ADJUSTMENTS.values()},
    **{e.id: EVENT_KIND_BASE + EVENT_EFFECTS.index(e.effect) for e in EVENTS.values()},
}
DRAW_TWO = EVENT_KIND_BASE + EVENT_EFFECTS.index("draw_two")
MODES = (True, False)  # accelerate, brake

Hand = tuple[int, ...]
Node = tuple[int, int, Hand, int, int, int]  # turn, draws, hand, speed, manoeuvrability, body
Move = tuple[int, bool, int | None]  # adjustment kind, accelerate, event kind or None


def is_event(kind: int) -> bool:
    return kind >= EVENT_KIND_BASE


def effect_of(kind: int | None) -> str | None:
    return None if kind is None else EVENT_EFFECTS[kind - EVENT_KIND_BASE]


def event_count(hand: Hand) -> int:
    return sum(1 for kind in hand if kind >= EVENT_KIND_BASE)


class SupplyExhaustedError(RuntimeError):
    """The model was asked to draw past the supply (impossible with the card data)."""


# ----- one setup choice -----------------------------------------------------------------------
@dataclass(frozen=True)
class Race:
    """The race that follows one choice of setup cards: everything known with hindsight."""

    setup: tuple[str, str, str]  # the applied blue, yellow and purple card ids
    max_speed: int
    manoeuvrability: int
    body: int
    hand: tuple[str, ...]  # card ids in the starting hand
    supply: tuple[str, ...]  # card ids in supply order
    supply_kinds: tuple[int, ...]
    track: tuple[TrackCard, ...]
    # Derived once: the relaxed race's table and per-position event counts for the bounds.
    _relaxed: list[dict[tuple[int, int], int]] = field(init=False, repr=False, compare=False)
    _events_before: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _draw_twos_from: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _bounds: dict[tuple[int, int, Hand, int, int], int] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        relaxed = _relaxed_table(self.max_speed, self.manoeuvrability, self.track)
        events = tuple(itertools.accumulate((is_event(k) for k in self.supply_kinds), initial=0))
        draw_twos = tuple(
            itertools.accumulate((k == DRAW_TWO for k in reversed(self.supply_kinds)), initial=0)
        )[::-1]
        object.__setattr__(self, "_relaxed", relaxed)
        object.__setattr__(self, "_events_before", events)
        object.__setattr__(self, "_draw_twos_from", draw_twos)
        object.__setattr__(self, "_bounds", {})

    def draw(self, hand: list[int], draws: int, count: int) -> int:
        """Add count supply cards to hand; the new number of draws."""
        if draws + count > len(self.supply_kinds):
            raise SupplyExhaustedError(f"draw {draws + count} of {len(self.supply_kinds)}")
        hand.extend(self.supply_kinds[draws : draws + count])
        return draws + count

    def draw_checked(self, hand: list[int], draws: int, count: int) -> tuple[list[int], int]:
        """Draw count cards, then rule CR-9: replace a hand without adjustment cards."""
        draws = self.draw(hand, draws, count)
        while all(is_event(kind) for kind in hand):
            hand_size = len(hand)
            hand = []
            draws = self.draw(hand, draws, hand_size)
        return hand, draws

    def start(self) -> Node:
        """The state at the first decision of the race (rule CR-8: after its draw)."""
        hand, draws = self.draw_checked([KIND_OF[c] for c in self.hand], 0, 1)
        return (0, draws, tuple(sorted(hand)), START_SPEED, self.manoeuvrability, self.body)

    def successors(self, node: Node) -> Iterator[tuple[Move, Node, int]]:
        """Every (move, next state, distance gained) of a turn, merged by card kind.

        Moves that eliminate the car, or crash it on the last card, lead to no
        score and are left out.
        """
        turn, draws, hand, speed, manoeuvrability, body = node
        track = self.track[turn]
        last = turn == len(self.track) - 1
        events: list[int | None] = [None, *sorted({k for k in hand if is_event(k)})]
        for kind in sorted({k for k in hand if not is_event(k)}):
            card = ADJUSTMENT_KINDS[kind]
            for accelerate, event in itertools.product(MODES, events):
                effect = effect_of(event)
                result = resolve_turn(
                    speed, manoeuvrability, body, self.max_speed, self.manoeuvrability,
                    card, accelerate, effect, track,
                )  # fmt: skip
                if result.body <= 0 or (last and result.crashed):
                    continue
                rest = list(hand)
                rest.remove(kind)
                if event is not None:
                    rest.remove(event)
                next_draws = draws
                if effect == "draw_two":
                    rest, next_draws = self.draw_checked(rest, next_draws, 2)
                if not last:
                    rest, next_draws = self.draw_checked(rest, next_draws, 1)
                state = (turn + 1, next_draws, tuple(sorted(rest)), result.speed,
                         result.manoeuvrability, result.body)  # fmt: skip
                yield (kind, accelerate, event), state, result.speed

    # ----- bounds ---------------------------------------------------------------------------
    def upper_bound(self, node: Node) -> int:
        """An upper bound on the points still to come (distance and event bonus)."""
        key = node[:5]  # body strength does not enter the bound
        bound = self._bounds.get(key)
        if bound is None:
            bound = self._bounds[key] = self._compute_upper_bound(node)
        return bound

    def _compute_upper_bound(self, node: Node) -> int:
        turn, draws, hand, speed, manoeuvrability, _ = node
        held = event_count(hand)
        draw_twos = sum(1 for k in hand if k == DRAW_TWO)
        relaxed = self._relaxed[turn][speed, manoeuvrability]
        return relaxed + EVENT_BONUS * self.held_events_bound(turn, draws, held, draw_twos)

    def held_events_bound(self, turn: int, draws: int, held: int, draw_twos: int) -> int:
        """At most this many event cards can be held at the end.

        The future draws are the remaining turn draws plus two per draw-two event
        played (each of which leaves the hand). A redraw (rule CR-9) discards n
        held events and draws n cards, so it never gains: the events in the
        extra cards are paid for by the discarded ones.
        """
        turn_draws = max(0, len(self.track) - 1 - turn)  # after the last card: none
        draw_twos += self._draw_twos_from[draws]
        end = len(self.supply_kinds)
        return max(
            held
            + self._events_before[min(end, draws + turn_draws + 2 * played)]
            - self._events_before[draws]
            - played
            for played in range(draw_twos + 1)
        )


@lru_cache(maxsize=16)  # one table per car of the seed being solved
def _relaxed_table(
    max_speed: int, manoeuvrability: int, track: tuple[TrackCard, ...]
) -> list[dict[tuple[int, int], int]]:
    """Best distance minus the bonus per speed event from each (turn, speed, manoeuvrability).

    A relaxation of the race: any speed-up or braking value 1..3 is always in hand,
    speed events are unlimited (each charged the EVENT_BONUS points it would have
    been worth held), and body strength is ignored.
    """
    length = len(track)
    table: list[dict[tuple[int, int], int]] = [{} for _ in range(length + 1)]
    speeds = range(max_speed + 1)
    levels = range(manoeuvrability + 1)
    for key in itertools.product(speeds, levels):
        table[length][key] = 0
    for turn in range(length - 1, -1, -1):
        later = table[turn + 1]
        for speed, level in itertools.product(speeds, levels):
            best = -(10**6)
            for before, cost in _relaxed_speeds(speed, max_speed):
                after = resolve_track(before, level, manoeuvrability, track[turn])
                if after.crashed and turn == length - 1:
                    continue
                value = after.speed - cost + later[after.speed, after.manoeuvrability]
                best = max(best, value)
            table[turn][speed, level] = best
    return table


def _relaxed_speeds(speed: int, max_speed: int) -> set[tuple[int, int]]:
    """(speed before the track card, bonus points spent) for any card and speed event."""
    plain = {clamp_to_maximum(speed + v, max_speed)[0] for v in (1, 2, 3)}
    plain |= {max(0, speed - v) for v in (1, 2, 3)}
    with_event = {clamp_to_maximum(max(0, s + d), max_speed)[0] for s in plain for d in (1, -1)}
    return {(s, 0) for s in plain} | {(s, EVENT_BONUS) for s in with_event - plain}


# ----- the eight setups of a seed ----------------------------------------------------------------
def races(seed: str) -> list[Race]:
    """One Race per choice of applied cards (blue, yellow, purple), in legal-action order."""
    pairs = deal_pairs(seed)
    event = dealt_event(seed)
    order = supply_order(seed)
    track = tuple(TRACK[c] for c in track_order(seed))
    result = []
    for picks in itertools.product((0, 1), repeat=len(ADJUSTMENT_COLOURS)):
        car = CarSheet(
            max_speed=START_PROPERTY, manoeuvrability=START_PROPERTY, body=START_PROPERTY
        )
        hand = [event]
        applied = []
        for colour, pick in zip(ADJUSTMENT_COLOURS, picks, strict=True):
            applied.append(pairs[colour][pick])
            car = apply_symbols(car, pairs[colour][pick])
            hand.append(pairs[colour][1 - pick])
        supply = tuple(card for card in order if card not in hand)
        result.append(
            Race(
                setup=(applied[0], applied[1], applied[2]),
                max_speed=car["max_speed"],
                manoeuvrability=car["manoeuvrability"],
                body=car["body"],
                hand=tuple(hand),
                supply=supply,
                supply_kinds=tuple(KIND_OF[c] for c in supply),
                track=track,
            )
        )
    return result


def finish_bonus(node: Node) -> int:
    """Rule CR-20: the points a state after the fourteenth card adds to its distance."""
    return EVENT_BONUS * event_count(node[2])
