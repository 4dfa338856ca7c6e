"""A lower bound on the rounds a Rallye Raser run still needs to finish with a score.

The bound solves a relaxed game exactly: only timer, control, rows left, gear
and the upshift ban are kept, every round in gear g may advance g rows whatever
the dice, and a Gasfuss (dropping to any lower gear after g - 1 rows) may happen
anywhere. Every real round is one of these relaxed rounds or worse (fewer rows,
a lower timer), and the relaxed game is monotone in rows left, so no real run
finishes sooner than the bound. The solver drops any node that cannot finish
with the target score by the round it is trying.
"""

from __future__ import annotations

from functools import cache

from puzzles.rallye_raser import GEAR_CHECK, MAX_GEAR, TRACK_MAX

UNREACHABLE = 10**6
# (timer, control, gear, no_upshift) for timer 1..6, control 0..6
DIALS = [
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


def _can_finish(timer: int, control: int, gear: int, ban: bool, rows: int, target: int) -> bool:
    """This round can reach the finish with at least target points (a perfect finish)."""
    return any(
        rows <= chosen and 2 * _cap(timer + 1) + control - cost >= target
        for chosen, cost in _gears(gear, control, ban)
    )


def _relaxed_rounds(timer: int, control: int, gear: int, ban: bool):
    """((timer, control, gear, ban) after, rows advanced) of every non-final relaxed round."""
    for chosen, cost in _gears(gear, control, ban):
        outcomes = [(chosen, chosen)] + [(lower, chosen - 1) for lower in range(1, chosen)]
        for checked, advance in outcomes:
            timer_change, control_change = GEAR_CHECK[checked]
            after = _cap(timer + timer_change)
            if after > 0:
                spent = control - cost
                yield (after, _cap(spent + control_change), checked, False), advance


@cache
def rounds_bound(target: int, max_rows: int) -> dict[tuple, int]:
    """Fewest relaxed rounds (this one included) to finish with >= target points.

    Keyed by (timer, control, gear, no_upshift, rows left), rows left 1..max_rows.
    """
    moves = {dials: list(_relaxed_rounds(*dials)) for dials in DIALS}
    bound: dict[tuple, int] = {}
    for rows in range(1, max_rows + 1):
        for dials in DIALS:
            bound[(*dials, rows)] = 1 if _can_finish(*dials, rows, target) else UNREACHABLE
        changed = True
        while changed:  # rows left 1 can stay 1, so iterate to the fixpoint there
            changed = False
            for dials in DIALS:
                key = (*dials, rows)
                best = min(
                    (
                        bound[(*after, max(1, rows - advance))] + 1
                        for after, advance in moves[dials]
                    ),
                    default=UNREACHABLE,
                )
                if best < bound[key]:
                    bound[key] = best
                    changed = True
    return bound
