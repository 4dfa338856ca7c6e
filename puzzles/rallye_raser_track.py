"""Rallye Raser road cards and the track they form (rules RR-2, RR-3, RR-23).

The nine road cards are data (puzzles/data/rallye_raser_cards.json). A section
is three characters for lanes L, M, R: '.' road, '1'/'2' speed limit, 'x'
absent. The seed fixes the deck order and which cards lie rotated by 180
degrees; the track is then one list of rows (sections), numbered from the start,
followed by the finish zone (FINISH_ROWS rows of road in every lane).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path
from typing import Any

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

_DATA_FILE = Path(__file__).with_name("data") / "rallye_raser_cards.json"


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
    limits = [
        (row, lane) for row, s in enumerate(sections) for lane, f in enumerate(s) if f in LIMITS
    ]
    if len(limits) > 1:
        problems.append("at most one speed-limit field per card")
    for row, lane in limits:
        if lane == 1 and sections[row].count(ABSENT) == 1:
            problems.append("no speed limit in lane M of a two-lane section")
        if row in (0, len(sections) - 1):
            # Kept off the card ends so that no order or rotation of the deck can put
            # one speed limit directly ahead of another across a card boundary.
            problems.append("no speed limit in a card's first or last section")
    return problems


def deal_deck(seed: str) -> list[dict[str, Any]]:
    """The seed's deck, top first: each card's id and whether it lies rotated (RR-3)."""
    order = shuffled(seed, "rallye-raser/deck", sorted(CARDS))
    flips = coin_flips(seed, "rallye-raser/rotation", len(order))
    return [{"id": card_id, "rotated": flip} for card_id, flip in zip(order, flips, strict=True)]


def card_sections(entry: dict[str, Any]) -> list[str]:
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
