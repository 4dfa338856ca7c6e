"""What each legal Crazy Rally action does, said before it is played.

For a card of the setup, what its symbols add to the car (CR-4); for a turn's
cards, the speed they leave before the track card, the body a purple card costs
(CR-12), the cut at the car's maximum (CR-13) and an event card no longer kept for
the score (CR-20). The track card's effect is never said: the track is the
player's memory test.
"""

from __future__ import annotations

from puzzles.base import Action, Note, Stakes
from puzzles.crazy_rally.cards import ADJUSTMENTS, EVENTS
from puzzles.crazy_rally.engine import EVENT_BONUS, apply_symbols
from puzzles.crazy_rally.rules import speed_after_cards
from puzzles.crazy_rally.states import Property, State

PROPERTY_NAMES: dict[Property, str] = {
    "max_speed": "maximum speed",
    "manoeuvrability": "manoeuvrability",
    "body": "body",
}


def note(kind: str, text: str) -> Note:
    return Note(kind=kind, text=text)


def _setup_notes(state: State, card_id: str) -> list[Note]:
    before = state["car"]
    after = apply_symbols(before, card_id)
    return [
        note("car", f"{PROPERTY_NAMES[name]} {before[name]} → {after[name]}")
        for name in PROPERTY_NAMES
        if after[name] != before[name]
    ]


def _drive_notes(state: State, action: Action) -> list[Note]:
    card = ADJUSTMENTS[action["card"]]
    event = action["event"]
    effect = EVENTS[event].effect if event else None
    maximum = state["car"]["max_speed"]
    speed, clamps = speed_after_cards(
        state["speed"], card, action["mode"] == "accelerate", effect, maximum
    )
    notes = [note("speed", f"speed {state['speed']} → {speed}")]
    body_lost = clamps
    if card.costs_body:
        body_lost += 1
        notes.append(note("purple", "purple card: body −1"))
    if clamps:
        notes.append(
            note("clamp", f"above the maximum speed {maximum}: cut to {maximum}, body −{clamps}")
        )
    if event:
        notes.append(note("event", f"event {event} played: {EVENT_BONUS} point less at the end"))
    body = state["body"]
    if body_lost and body - body_lost <= 0:
        notes.append(note("eliminated", f"body {body} → {body - body_lost}: the car is eliminated"))
    return notes


def action_notes(state: State, action: Action) -> list[Note]:
    if action["type"] == "apply":
        return _setup_notes(state, action["card"])
    if action["type"] == "drive":
        return _drive_notes(state, action)
    return []


def stakes(state: State, legal: list[Action]) -> Stakes:
    """The score if the race finished now (distance plus events kept); each action's notes."""
    kept = sum(card in EVENTS for card in state["hand"])
    return Stakes(
        score_now=state["distance"] + EVENT_BONUS * kept,
        notes=[action_notes(state, action) for action in legal],
    )
