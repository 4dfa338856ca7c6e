"""A lower bound on the rounds a Rallye Raser run still needs to finish with a score.

The bound solves a relaxed game exactly: only timer, control, row, gear and the
upshift ban are kept. A relaxed round in gear g advances 0 to g rows whatever
the dice, and may end in any lower gear after at most g - 1 rows (a Gasfuss, or
engine damage without its upshift ban). The gear check runs, as in the rules
(RR-21), only in a round that ends on the next card, with the gear the round
ends in; so the bound depends on where the seed's cards begin. No control is
spent on dice and no loss of control happens. Every real round is one of these
relaxed rounds or worse (a lower timer or control, an upshift ban), so no real
run finishes with the target score sooner than the bound.
"""

from __future__ import annotations

from functools import cache, lru_cache

from puzzles.rallye_raser.engine import GEAR_CHECK, MAX_GEAR, TRACK_MAX
from puzzles.rallye_raser.track import card_index

UNREACHABLE = 10**6
Dials = tuple[int, int, int, bool]  # (timer, control, gear, no_upshift)
Bound = dict[tuple[int, int, int, bool, int], int]  # (*dials, row) -> fewest rounds
# Every dial setting with the timer above 0 (timer 0 has ended the run).
DIALS: list[Dials] = [
    (timer, control, gear, ban)
    for timer in range(1, TRACK_MAX + 1)
    for control in range(TRACK_MAX + 1)
    for gear in range(1, MAX_GEAR + 1)
    for ban in (False, True)
]


def _cap(value: int) -> int:
    return max(0, min(TRACK_MAX, value))


def _gears(gear: int, control: int, ban: bool) -> list[tuple[int, int]]:
    """(chosen gear, control it costs) as in rule RR-5, with RR-6's ban."""
    return [
        (chosen, max(0, abs(chosen - gear) - 1))
        for chosen in range(1, MAX_GEAR + 1)
        if max(0, abs(chosen - gear) - 1) <= control and not (ban and chosen > gear)
    ]


def _can_finish(dials: Dials, rows_left: int, target: int) -> bool:
    """This round can finish with at least target points (a perfect finish, RR-24)."""
    timer, control, gear, ban = dials
    return any(
        rows_left <= chosen and 2 * _cap(timer + 1) + control - cost >= target
        for chosen, cost in _gears(gear, control, ban)
    )


@cache
def _relaxed_rounds(dials: Dials) -> tuple[tuple[int, int, int], ...]:
    """(control after step I, gear the round ends in, most rows advanced) of every
    relaxed round from these dials, before any gear check."""
    _, control, gear, ban = dials
    return tuple(
        (control - cost, ending, chosen if ending == chosen else chosen - 1)
        for chosen, cost in _gears(gear, control, ban)
        for ending in range(1, chosen + 1)
    )


def _best_move(bound: Bound, dials: Dials, row: int, cards: list[int]) -> int:
    """1 + the fewest relaxed rounds after any relaxed round from (dials, row);
    cards[r] is the deck position of the card holding row r."""
    timer = dials[0]
    best = UNREACHABLE
    for control, ending, most in _relaxed_rounds(dials):
        for to in range(row, min(row + most + 1, len(cards))):
            timer_after, control_after = timer, control
            if cards[to] > cards[row]:  # RR-21: the cards advance, the gear check runs
                timer_change, control_change = GEAR_CHECK[ending]
                timer_after = _cap(timer + timer_change)
                control_after = _cap(control + control_change)
            if timer_after > 0:
                best = min(best, bound[(timer_after, control_after, ending, False, to)] + 1)
    return best


@lru_cache(maxsize=64)  # per target and card layout; a layout serves many seeds
def rounds_bound(target: int, starts: tuple[int, ...]) -> Bound:
    """Fewest relaxed rounds (this one included) to finish with >= target points.

    starts: each card's first row, then the finish zone's first row. Keyed by
    (timer, control, gear, no_upshift, row) for every row of the track.
    """
    bound: Bound = {}
    finish = starts[-1]
    cards = [card_index(list(starts), row) for row in range(finish)]
    for row in range(finish - 1, -1, -1):
        for dials in DIALS:
            bound[(*dials, row)] = 1 if _can_finish(dials, finish - row, target) else UNREACHABLE
        changed = True
        while changed:  # a round may stay on its row, so iterate to the fixpoint there
            changed = False
            for dials in DIALS:
                best = _best_move(bound, dials, row, cards)
                if best < bound[(*dials, row)]:
                    bound[(*dials, row)] = best
                    changed = True
    return bound
