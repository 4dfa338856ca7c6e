"""What a Rallye Raser round start is worth to the expert, from what the player sees.

Under rules RR-19 to RR-25 the score moves only at a card advance (the gear check),
by a loss of control, by control spent and at the finish; waiting costs rounds and
nothing else. So a round start is worth the points its dials can still reach (the
`potential`: the best gear at each check still to come, then a perfect finish),
limited by the gear the car can be in when it next crosses onto card B, plus what a
held reserve die is worth, less a small price per round still to drive (the
tie-break, RR-25, and the safety bound, RR-26).

The value reads only what the player has seen: the cards in view, the number of
cards still to draw and the mean length of the pool's cards not seen yet (RR-3).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from statistics import fmean

from puzzles.rallye_raser.engine import GEAR_CHECK, MAX_GEAR, MAX_ROUNDS, TRACK_MAX
from puzzles.rallye_raser.states import State
from puzzles.rallye_raser.track import (
    ABSENT,
    CARDS,
    DEALT_CARDS,
    LANES,
    field,
    limit_of,
    route_steps,
)

# Points a round costs: far below a point, enough that the expert does not stall.
ROUND_PRICE = 0.3
# Rows a round drives on average, to count the rounds still to come.
ROWS_PER_ROUND = 1.5  # route steps, sideways ones included
# What a held reserve die is worth: it mends a die that misses its lane (RR-14).
RESERVE_WORTH = 0.3
# What a round that brings the car no closer to the finish costs beyond its round:
# the value sees one round ahead of such a wait no better than the round itself, so
# without this price a risky stretch would be waited out for ever (RR-26).
STALL_PRICE = 1.0
# A run that cannot finish within the safety bound scores nothing (RR-26).
LOST = -ROUND_PRICE * MAX_ROUNDS
# The chance that a card advance planned in gear 2 or 3 comes off in that gear, when
# card B is within a round's drive: else the car crosses in gear 1, by engine damage
# (RR-19). Waiting beside the card's end is worth no more than trying, or the expert
# would wait for ever (the search sees one round, the value the rest).
CROSSING_CHANCE = 0.7
# The chance that the stretch up to a card advance costs a point (control where there
# is some, else the timer), and that the finish is perfect: the dials' slack is worth
# what it can absorb of such mishaps.
MISHAP = 0.25
# The same per row still to drive to the next card advance (or the finish): the
# stretch under way costs in proportion to what is left of it, so that driving on is
# worth what it takes off the risk ahead, and waiting is not free.
HAZARD_PER_ROW = MISHAP / 3
PERFECT_FINISH = 0.9


def _cap(value: int) -> int:
    return max(0, min(TRACK_MAX, value))


def checked(timer: int, control: int, gear: int) -> tuple[int, int]:
    """The dials after a gear check in this gear (RR-21)."""
    timer_change, control_change = GEAR_CHECK[gear]
    return _cap(timer + timer_change), _cap(control + control_change)


def _mishap(timer: int, control: int) -> tuple[int, int]:
    return (timer, control - 1) if control else (timer - 1, control)


def _finish(timer: int, control: int) -> float:
    """The expected score of the finish (RR-24, RR-25): perfect, or unclean."""
    unclean = 2 * (timer - 1) + control if timer > 1 else 0
    return PERFECT_FINISH * (2 * _cap(timer + 1) + control) + (1 - PERFECT_FINISH) * unclean


@cache
def potential(timer: int, control: int, checks: int) -> float:
    """The points the dials are expected to end with: the best gear at each of `checks`
    card advances to come, a mishap before each with chance MISHAP, then the finish
    (RR-21, RR-24, RR-25); 0 once the timer is empty (RR-22)."""
    if timer <= 0:
        return 0.0
    if checks == 0:
        return _finish(timer, control)
    return _expected_check(timer, control, checks, ANY_GEAR, MISHAP)


ANY_GEAR = [(1, 0, 1.0), (2, 0, 1.0), (3, 0, 1.0)]


def _expected_check(
    timer: int, control: int, checks: int, gears: list[tuple[int, int, float]], mishap: float
) -> float:
    """The expected potential past the next check, driven in the best of gears (gear,
    control paid to reach it, the chance it comes off, else gear 1), with or without
    a mishap before it."""

    def past(dials: tuple[int, int], gear: int, paid: int) -> float:
        return potential(*checked(dials[0], dials[1] - paid, gear), checks - 1)

    def best(dials: tuple[int, int]) -> float:
        return max(
            chance * past(dials, gear, paid) + (1 - chance) * past(dials, 1, paid)
            for gear, paid, chance in gears
            if paid <= dials[1]
        )

    clean = best((timer, control))
    if timer <= 0:
        return 0.0
    return (1 - mishap) * clean + mishap * best(_mishap(timer, control))


@dataclass(frozen=True)
class Horizon:
    """What the player knows of the road ahead: the card starts in view (card A's, card
    B's and the row after B), how many cards the race has, the mean length of a card
    still to draw, and from each field of card A and B the fewest route steps off the
    cards in view (`steps`, by row from `first_row`, card A's first, lanes L, M, R)."""

    starts: tuple[int, ...]
    cards: int
    unseen_rows: float
    first_row: int
    steps: tuple[tuple[int, ...], ...]
    rows: tuple[str, ...]  # the sections from `first_row` on, as the track holds them

    def checks_left(self, card_a: int) -> int:
        """Card advances still to come with card A at this deck position (RR-20)."""
        return self.cards - 1 - card_a

    def steps_left(self, row: int, lane: str) -> float:
        """Route steps from a field into the finish zone: off the cards in view, then a
        row per row of the cards to draw."""
        undrawn = self.cards - (len(self.starts) - 1)
        in_view = self.steps[row - self.first_row]
        return in_view[LANES.index(lane)] + undrawn * self.unseen_rows + 1


def _steps_off(track: list[str], first: int, end: int) -> tuple[tuple[int, ...], ...]:
    """The fewest route steps (ahead or beside, RR-10, RR-11) from each field of rows
    first..end-1 to a row at or past end; absent fields and dead ends count as far."""
    far = 4 * (end - first) + 4
    rows: dict[int, list[int]] = {end: [0, 0, 0]}
    for row in range(end - 1, first - 1, -1):
        here = [far, far, far]
        for _ in LANES:  # a step beside may lead to a field whose way is known only now
            for lane in range(len(LANES)):
                if track[row][lane] == ABSENT:
                    continue
                for to_row, to_lane in route_steps(track[:end], row, lane):
                    there = rows[to_row][to_lane] if to_row != row else here[to_lane]
                    here[lane] = min(here[lane], there + 1)
        rows[row] = here
    return tuple(tuple(rows[row]) for row in range(first, end))


def horizon(state: State) -> Horizon:
    """The player's horizon in state: only the cards dealt face up are read."""
    card_a = state["card_a"]
    starts = state["card_starts"]
    cards = len(starts) - 1
    shown = min(cards, card_a + 2)
    seen = {entry["id"] for entry in state["deck"][:shown]}
    unseen = [len(card["sections"]) for card_id, card in CARDS.items() if card_id not in seen]
    first, end = starts[card_a], starts[shown]
    steps = _steps_off(state["track"], first, end)
    return Horizon(
        tuple(starts[: shown + 1]),
        cards or DEALT_CARDS,
        fmean(unseen),
        first,
        steps,
        tuple(state["track"][first:end]),
    )


@dataclass(frozen=True)
class Start:
    """A round start as the value reads it."""

    row: int
    lane: str
    gear: int
    no_upshift: bool
    timer: int
    control: int
    reserve: int | None
    card_a: int
    rounds_played: int


def _next_check_gears(horizon: Horizon, start: Start) -> list[tuple[int, int, float]]:
    """(gear, control paid, chance) the car can cross onto card B in next: any gear when
    B is more than a round's drive away, else the gears reachable at the next step I
    (RR-5, RR-6) and not above a limit the car stands on (RR-18), with CROSSING_CHANCE;
    gear 1 always, by engine damage (RR-19)."""
    rows_to_b = horizon.starts[start.card_a + 1] - start.row
    if rows_to_b > MAX_GEAR:
        return ANY_GEAR
    reachable = [(1, 0, 1.0)]
    limit = limit_of(field(list(horizon.rows), start.row - horizon.first_row, start.lane))
    for gear in (2, 3):
        if (start.no_upshift and gear > start.gear) or (limit is not None and gear > limit):
            continue
        paid = max(0, gear - start.gear - 1)
        if paid <= start.control:
            reachable.append((gear, paid, CROSSING_CHANCE))
    return reachable


def _points(horizon: Horizon, start: Start) -> float:
    checks = horizon.checks_left(start.card_a)
    rows = horizon.starts[start.card_a + 1] - start.row  # to card B, or the finish zone
    mishap = min(1.0, HAZARD_PER_ROW * rows)
    if checks == 0:
        after = potential(*_mishap(start.timer, start.control), 0)
        return (1 - mishap) * potential(start.timer, start.control, 0) + mishap * after
    gears = _next_check_gears(horizon, start)
    return _expected_check(start.timer, start.control, checks, gears, mishap)


def value(horizon: Horizon, start: Start) -> float:
    """The expert's worth of a round start: points within reach, the reserve, less the
    rounds played and still to drive."""
    steps = horizon.steps_left(start.row, start.lane)
    if start.rounds_played + steps / MAX_GEAR > MAX_ROUNDS:
        return LOST
    rounds = start.rounds_played + steps / ROWS_PER_ROUND
    held = RESERVE_WORTH if start.reserve is not None else 0.0
    return _points(horizon, start) + held - ROUND_PRICE * rounds


def finished(timer: int, control: int, rounds_played: int) -> float:
    """The worth of a finished run: its score (RR-25), less its rounds."""
    return 2 * timer + control - ROUND_PRICE * rounds_played
