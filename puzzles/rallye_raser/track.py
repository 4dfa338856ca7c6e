"""Rallye Raser road cards and the track they form (rules RR-2, RR-3, RR-23).

The road cards are data (puzzles/rallye_raser/cards.json): a pool from
which each seed deals the nine cards of its race. A section is three characters
for lanes L, M, R: '.' road, '1'/'2' speed limit, 'x' absent. The seed fixes
which nine cards are dealt, their order and which of them lie rotated by 180
degrees; the track is then one list of rows (sections), numbered from the start,
followed by the finish zone (FINISH_ROWS rows of road in every lane).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path
from typing import Any

from puzzles.rallye_raser.states import DeckEntry
from puzzles.rng import coin_flips, shuffled

LANES = "LMR"
ROAD = "."
ABSENT = "x"
LIMITS = "12"
# Lane requirement (RR-16): the die values that may drive each lane.
LANE_VALUES = {"L": (1, 2), "M": (3, 4), "R": (5, 6)}
# A route holds at most 3 dice, so 3 rows of finish zone hold any route into it.
FINISH_ROWS = 3
FINISH_ROW = ROAD * len(LANES)
# "Rase mit deinem Rallye Auto durch 9 Karten": a race is nine cards. The pool is
# larger so that the track's length, and with it the fewest rounds to the
# finish, differ from seed to seed (RR-3).
DEALT_CARDS = 9

_DATA_FILE = Path(__file__).with_name("cards.json")


def _load_cards() -> dict[str, dict[str, Any]]:
    cards = json.loads(_DATA_FILE.read_text())["cards"]
    return {card["id"]: card for card in cards}


CARDS: dict[str, dict[str, Any]] = _load_cards()


def rotated(sections: list[str]) -> list[str]:
    """A card turned by 180 degrees: the sections reverse and L and R swap."""
    return [section[::-1] for section in reversed(sections)]


def card_problems(sections: list[str]) -> list[str]:
    """Every card-data constraint (RR-2) that these sections break."""
    problems = []
    if not 1 <= len(sections) <= 4:
        problems.append("a card has 1 to 4 sections")
    if any(len(s) != 3 or set(s) - set(ROAD + ABSENT + LIMITS) for s in sections):
        problems.append("a section is three fields of '.', '1', '2' or 'x'")
    if any(s[1] == ABSENT for s in sections):
        problems.append("lane M exists in every section")
    if any(s.count(ABSENT) > 1 for s in sections):
        problems.append("every section has 2 or 3 lanes")
    if any(s.count(ABSENT) == 1 and s[1] in LIMITS for s in sections):
        problems.append("no speed limit in lane M of a two-lane section")
    return problems


def _steps(track: list[str], row: int, lane: int) -> list[tuple[int, int]]:
    """The fields one route die may reach from (row, lane): ahead or beside, never onto
    an absent field, never from a speed limit onto another (RR-10, RR-11)."""
    here = track[row][lane] if row < len(track) else ROAD
    steps = []
    for to_row, to_lane in ((row + 1, lane), (row, lane - 1), (row, lane + 1)):
        if not 0 <= to_lane < len(LANES) or to_row > len(track):
            continue
        there = track[to_row][to_lane] if to_row < len(track) else ROAD
        if there != ABSENT and not (here in LIMITS and there in LIMITS):
            steps.append((to_row, to_lane))
    return steps


def dead_ends(track: list[str]) -> list[tuple[int, str]]:
    """The fields of track from which no sequence of route steps leads past its end."""
    escaped = {(len(track), lane) for lane in range(len(LANES))}
    changed = True
    while changed:
        changed = False
        for row in range(len(track) - 1, -1, -1):
            for lane in range(len(LANES)):
                if track[row][lane] == ABSENT or (row, lane) in escaped:
                    continue
                if any(step in escaped for step in _steps(track, row, lane)):
                    escaped.add((row, lane))
                    changed = True
    return [
        (row, LANES[lane])
        for row in range(len(track))
        for lane in range(len(LANES))
        if track[row][lane] != ABSENT and (row, lane) not in escaped
    ]


def deck_problems(cards: list[list[str]]) -> list[str]:
    """Whether some order and rotation of these cards can trap the car (RR-2): every
    field of every card, rotated or not, followed by any other card, rotated or not,
    must lead onto that next card, and onto the finish zone when the card is last."""
    layouts = [(index, way) for index, card in enumerate(cards) for way in (card, rotated(card))]
    problems = []
    for index, card in layouts:
        if dead_ends(card):
            problems.append(f"card {index}: a field leads nowhere")
        for other, after in layouts:
            if other != index and dead_ends([*card, after[0]]):
                problems.append(f"card {index}: a field cannot reach card {other}")
    return sorted(set(problems))


def deal_deck(seed: str) -> list[DeckEntry]:
    """The seed's deck, top first: nine cards of the pool, each card's id and whether it
    lies rotated (RR-3)."""
    order = shuffled(seed, "rallye-raser/deck", sorted(CARDS))[:DEALT_CARDS]
    flips = coin_flips(seed, "rallye-raser/rotation", len(order))
    return [DeckEntry(id=card_id, rotated=flip) for card_id, flip in zip(order, flips, strict=True)]


def card_sections(entry: DeckEntry) -> list[str]:
    """The sections of a dealt card as they lie on the table."""
    sections = CARDS[entry["id"]]["sections"]
    return rotated(sections) if entry["rotated"] else list(sections)


def field(track: list[str], row: int, lane: str) -> str:
    """The field kind at (row, lane): a track row, or the finish zone beyond the last card."""
    section = track[row] if row < len(track) else FINISH_ROW
    return section[LANES.index(lane)]


def limit_of(kind: str) -> int | None:
    """The speed limit printed on a field, None for road."""
    return int(kind) if kind in LIMITS else None


def card_index(card_starts: list[int], row: int) -> int:
    """The deck position of the card holding row; the number of cards for the finish zone.

    card_starts holds each card's first row and, last, the finish zone's first row.
    """
    return bisect_right(card_starts, row) - 1


def lane_fits(lane: str, value: int) -> bool:
    """Whether a die of this value may drive this lane (RR-16)."""
    return value in LANE_VALUES[lane]
