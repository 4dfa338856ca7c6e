"""What a Crazy Rally state and its view hold (docs/rules/crazy-rally.md, State and View):
typed, and plain JSON values as every engine's are."""

from __future__ import annotations

from typing import Literal, Required, TypedDict

Phase = Literal["setup", "preview", "race", "over"]
Outcome = Literal["finished", "eliminated", "crashed_last"]
Property = Literal["max_speed", "manoeuvrability", "body"]


class CarSheet(TypedDict):
    """The car's properties (CR-2, CR-4): its maximum speed, manoeuvrability and body."""

    max_speed: int
    manoeuvrability: int
    body: int


class CardJson(TypedDict, total=False):
    """A hand or supply card as the view shows it: an adjustment card's values and
    symbols, or an event card's effect."""

    id: Required[str]
    kind: Required[Literal["adjustment", "event"]]
    colour: Required[str]
    speed_up: int
    braking: int
    symbols: list[str]
    effect: str


class TrackCardJson(TypedDict):
    id: str
    flag: bool
    colour: str  # "white": a maximum speed; "red": a minimum speed
    speed: int
    difficulty: int
    damage: int


class TurnReport(TypedDict):
    """What the last turn did (CR-11 to CR-19), for the view."""

    track: TrackCardJson
    card: str
    mode: str
    event: str | None
    event_drawn: list[str]
    event_redrawn: list[str]
    clamps: int
    purple_damage: int
    too_fast: int
    too_slow: int
    manoeuvrability_loss: int
    crashed: bool
    crash_damage: int
    gained: int


class State(TypedDict):
    seed: str
    phase: Phase
    pairs: dict[str, list[str]]  # the pair dealt of each colour (CR-3)
    applied: list[str]  # the setup's cards fitted to the car, in colour order
    car: CarSheet  # the car's properties after the setup
    speed: int
    manoeuvrability: int
    body: int
    distance: int
    hand: list[str]
    supply: list[str]
    discard: list[str]
    reshuffles: int  # CR-10: how often the discard pile became the supply
    track: list[str]  # the fourteen track cards, in order (CR-6)
    turn: int
    drawn: list[str]  # this turn's draw (CR-8)
    redrawn: list[str]  # the hand discarded by CR-9 after it
    last: TurnReport | None
    outcome: Outcome | None


class SetupView(TypedDict):
    colour: str | None  # the colour whose pair is dealt, during the setup
    pair: list[CardJson]
    applied: list[CardJson]


class View(TypedDict):
    game: str
    phase: Phase
    turn: int
    track_length: int
    cards_left: int
    car: CarSheet
    speed: int
    manoeuvrability: int
    body: int
    distance: int
    setup: SetupView
    hand: list[CardJson]
    events: list[CardJson]
    track: list[TrackCardJson] | None  # during the test round only (CR-7)
    drawn: list[str]
    redrawn: list[str]
    last: TurnReport | None
    supply_size: int
    discard_size: int
    outcome: Outcome | None
    event_bonus: int
    score: int | None


class Memory(TypedDict):
    """What the player remembers that the view no longer shows: the track of the test
    round (CR-7), the hand it started the race with, and every card drawn or discarded
    since (CR-5, CR-8)."""

    track: list[str]
    start_hand: list[str]
    drawn: list[str]
    discard: list[str]
