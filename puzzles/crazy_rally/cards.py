"""Crazy Rally's card set (rule CR-1), loaded once from puzzles/crazy_rally/cards.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from puzzles.crazy_rally.states import CardJson, Property, TrackCardJson

DATA_FILE = Path(__file__).with_name("cards.json")

SYMBOL_PROPERTY: dict[str, Property] = {
    "tyre": "max_speed",
    "wheel": "manoeuvrability",
    "nut": "body",
}
ADJUSTMENT_COLOURS = ("blue", "yellow", "purple")
EVENT_EFFECTS = ("draw_two", "speed_up", "slow_down")


@dataclass(frozen=True)
class TrackCard:
    id: str
    flag: bool
    colour: str  # "white": a maximum speed; "red": a minimum speed
    speed: int
    difficulty: int
    damage: int

    @property
    def is_minimum(self) -> bool:
        return self.colour == "red"


@dataclass(frozen=True)
class AdjustmentCard:
    id: str
    colour: str
    speed_up: int
    braking: int
    symbols: tuple[str, ...]

    @property
    def costs_body(self) -> bool:
        """Purple cards damage the car whichever way they are played (rule CR-12)."""
        return self.colour == "purple"


@dataclass(frozen=True)
class EventCard:
    id: str
    colour: str
    effect: str


def _load() -> dict[str, Any]:
    with DATA_FILE.open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


_DATA = _load()
TRACK: dict[str, TrackCard] = {c["id"]: TrackCard(**c) for c in _DATA["track"]}
ADJUSTMENTS: dict[str, AdjustmentCard] = {
    c["id"]: AdjustmentCard(**{**c, "symbols": tuple(c["symbols"])}) for c in _DATA["adjustment"]
}
EVENTS: dict[str, EventCard] = {c["id"]: EventCard(**c) for c in _DATA["events"]}
# Every card that can be in the hand or the supply, in data order.
DECK_IDS: tuple[str, ...] = (*ADJUSTMENTS, *EVENTS)


def adjustments_of(colour: str) -> list[str]:
    """The ids of the adjustment cards of one colour, in data order."""
    return [card.id for card in ADJUSTMENTS.values() if card.colour == colour]


def card_json(card_id: str) -> CardJson:
    """The full data of a hand or supply card, as the view shows it."""
    if card_id in EVENTS:
        event = EVENTS[card_id]
        return {"id": event.id, "kind": "event", "colour": event.colour, "effect": event.effect}
    card = ADJUSTMENTS[card_id]
    return {
        "id": card.id,
        "kind": "adjustment",
        "colour": card.colour,
        "speed_up": card.speed_up,
        "braking": card.braking,
        "symbols": list(card.symbols),
    }


def track_json(card_id: str) -> TrackCardJson:
    card = TRACK[card_id]
    return {
        "id": card.id,
        "flag": card.flag,
        "colour": card.colour,
        "speed": card.speed,
        "difficulty": card.difficulty,
        "damage": card.damage,
    }
