"""What a Rallye Raser state and its view hold (docs/rules/rallye-raser.md, State and
View): typed, and plain JSON values as every engine's are."""

from __future__ import annotations

from typing import Literal, Required, TypedDict

Status = Literal["running", "finished", "timer_out", "round_limit"]
Phase = Literal["shift", "dice"]  # RR-4: step I (gear, roll), then step II (the dice)


class Spot(TypedDict):
    """A field of the track: its row (counted from the start) and lane."""

    row: int
    lane: str


class RouteDie(TypedDict):
    """A die on the route: where, its value, and whether it was a white die or the reserve."""

    row: int
    lane: str
    value: int
    source: Literal["white", "reserve"]


class DeckEntry(TypedDict):
    """A dealt road card (RR-3): its id in the card data, and whether it lies rotated."""

    id: str
    rotated: bool


class RoundEvent(TypedDict, total=False):
    """What the last round's drive did (RR-16 to RR-24); each type has its own fields."""

    type: Required[str]  # gasfuss, loss_of_control, engine_damage, card_advance, ...
    row: int  # gasfuss, loss_of_control: where
    lane: str
    limit: int  # gasfuss: the speed limit left too fast
    value: int  # loss_of_control: the die that did not fit
    gear: int  # gear_check: the gear it ran in, and what it changed
    timer: int
    control: int
    perfect: bool  # finish


class State(TypedDict):
    seed: str
    deck: list[DeckEntry]
    track: list[str]  # every row of the dealt cards, as three fields (RR-2)
    card_starts: list[int]  # each card's first row, then the finish zone's
    card_a: int  # the deck position of card A
    round: int
    rounds_played: int
    status: Status
    phase: Phase
    gear: int
    timer: int
    control: int
    car: Spot
    no_upshift: bool  # RR-6: engine damage last round
    shifted: bool  # RR-5: the gear was changed this round
    rolls: int  # rolls made this round, the first included
    placed_since_roll: bool  # RR-8
    reserved_this_round: bool  # RR-12
    pool: list[int]  # the white dice rolled and not used
    reserve: int | None
    route: list[RouteDie]
    last_round: list[RoundEvent]


class FieldView(TypedDict):
    lane: str
    kind: Literal["road", "limit", "absent"]
    limit: int | None


class SectionView(TypedDict):
    row: int
    fields: list[FieldView]


class CardView(TypedDict):
    """A drawn card as the browser draws it."""

    id: str
    name: str
    rotated: bool
    first_row: int
    sections: list[SectionView]


class View(TypedDict):
    round: int
    max_rounds: int
    status: Status
    over: bool
    phase: Phase
    gear: int
    timer: int
    control: int
    no_upshift: bool
    car: Spot
    card_a: CardView | None
    card_b: CardView | None
    cards_remaining: int
    finish_rows: list[int] | None  # once the finish zone is in view
    dice_to_place: int
    pool: list[int]
    reserve: int | None
    rolls: int
    rerolls_left: int
    route: list[RouteDie]
    last_round: list[RoundEvent]
    rounds_played: int
    score: int | None
    tiebreak: int


class Memory(TypedDict):
    """What the player remembers that the view no longer shows: three facts of the round
    (RR-5, RR-8, RR-12) and each card dealt face up so far, in deck order."""

    shifted: bool
    placed_since_roll: bool
    reserved: bool
    cards_seen: list[DeckEntry]
