"""Crazy Rally played solo: the rules engine (docs/rules/crazy-rally.md, rules CR-1 to CR-21).

A run has three phases: `setup` (choose which card of each dealt pair to apply to
the car), `preview` (the test round: the whole track is shown), and `race`
(fourteen turns, one compound `drive` action each). The turn arithmetic lives in
puzzles.crazy_rally.rules, shared with the solver.
"""

from __future__ import annotations

from typing import Any

from puzzles.base import (
    Action,
    ActionForms,
    Game,
    IllegalAction,
    Stakes,
    TiebreakRule,
    Turn,
)
from puzzles.crazy_rally.cards import (
    ADJUSTMENT_COLOURS,
    ADJUSTMENTS,
    DECK_IDS,
    EVENTS,
    SYMBOL_PROPERTY,
    TRACK,
    adjustments_of,
    card_json,
    track_json,
)
from puzzles.crazy_rally.rules import TurnResult, resolve_turn
from puzzles.crazy_rally.states import (
    CardJson,
    CarSheet,
    Memory,
    Outcome,
    State,
    TurnReport,
    View,
)
from puzzles.rng import shuffled

START_PROPERTY = 7  # rule CR-2: maximum speed, manoeuvrability and body strength
START_SPEED = 5
TRACK_LENGTH = 14
FLAG_CARDS_ON_TOP = 2
# Rule CR-20: points per unused event card in the solo game. The rulebook prints 2;
# 1 is the product's decision, since 2 made the speed events dead cards (see the rule).
EVENT_BONUS = 1
MODES = ("accelerate", "brake")
# Rule CR-21: each action type's fields besides "type" (card and event are card ids).
ACTION_FORMS: ActionForms = {
    "apply": {"card": "string"},
    "start": {},
    "drive": {"card": "string", "mode": "string", "event": "string or null"},
}


def _has_fields_of(action: dict[str, Any], kind: str) -> bool:
    return set(action) == {"type", *ACTION_FORMS[kind]}


def deal_pairs(seed: str) -> dict[str, list[str]]:
    """Rule CR-3: each colour is shuffled on its own and its top two cards are dealt."""
    return {
        colour: shuffled(seed, f"deal/{colour}", adjustments_of(colour))[:2]
        for colour in ADJUSTMENT_COLOURS
    }


def dealt_event(seed: str) -> str:
    """Rule CR-3: the top card of the shuffled event cards goes to the hand."""
    return shuffled(seed, "deal/event", list(EVENTS))[0]


def supply_order(seed: str) -> list[str]:
    """Rule CR-5: one seeded order of all 50 adjustment and event cards."""
    return shuffled(seed, "supply", list(DECK_IDS))


def track_order(seed: str) -> list[str]:
    """Rule CR-6: two of the seven flag cards on top, the other twelve shuffled below."""
    flags = shuffled(seed, "track/flags", [c.id for c in TRACK.values() if c.flag])
    rest = [c.id for c in TRACK.values() if not c.flag] + flags[FLAG_CARDS_ON_TOP:]
    return flags[:FLAG_CARDS_ON_TOP] + shuffled(seed, "track/rest", rest)


def apply_symbols(car: CarSheet, card_id: str) -> CarSheet:
    """Rule CR-4: each symbol of an applied card raises one property of the car by 1."""
    car = car.copy()
    for symbol in ADJUSTMENTS[card_id].symbols:
        car[SYMBOL_PROPERTY[symbol]] += 1
    return car


def has_adjustment(hand: list[str]) -> bool:
    return any(card in ADJUSTMENTS for card in hand)


def _ids(cards: list[CardJson]) -> list[str]:
    return [card["id"] for card in cards]


def _known_pairs(view: View) -> dict[str, list[str]]:
    """The pair shown in the setup; the pairs of the other colours are not in view."""
    shown = view["setup"]["colour"]
    return {c: _ids(view["setup"]["pair"]) if c == shown else [] for c in ADJUSTMENT_COLOURS}


def _known_supply(view: View, memory: Memory) -> list[str]:
    """The supply's cards, in no order: every card neither in the hand at the start nor
    drawn since (CR-5, CR-8); none before the race."""
    if view["phase"] == "setup":
        return []
    gone = set(memory["start_hand"]) | set(memory["drawn"])
    return [card for card in DECK_IDS if card not in gone][: view["supply_size"]]


class CrazyRally(Game[State, View, Memory]):
    name = "crazy-rally"
    title = "Crazy Rally"
    rules_version = "cr-2"
    # 3 setup choices + the start of the race + one drive action per track card.
    max_actions = len(ADJUSTMENT_COLOURS) + 1 + TRACK_LENGTH
    action_forms = ACTION_FORMS
    turn = Turn("turn", ("drive",))  # CR-11: a turn is one drive

    # ----- phases and start -------------------------------------------------------------
    def _new_game(self, seed: str) -> State:
        return {
            "seed": seed,
            "phase": "setup",
            "pairs": deal_pairs(seed),
            "applied": [],
            "car": CarSheet(
                max_speed=START_PROPERTY, manoeuvrability=START_PROPERTY, body=START_PROPERTY
            ),
            "speed": START_SPEED,
            "manoeuvrability": START_PROPERTY,
            "body": START_PROPERTY,
            "distance": 0,
            "hand": [dealt_event(seed)],
            "supply": [],
            "discard": [],
            "reshuffles": 0,
            "track": track_order(seed),
            "turn": 0,
            "drawn": [],
            "redrawn": [],
            "last": None,
            "outcome": None,
        }

    def _apply(self, state: State, action: Action) -> State:
        kind = action.get("type") if isinstance(action, dict) else None
        handlers = {"apply": self._apply_card, "start": self._start, "drive": self._drive}
        if not isinstance(kind, str) or kind not in handlers:
            raise IllegalAction(
                "rule CR-21 (actions): an action is an object whose type is apply, start or drive"
            )
        return handlers[kind](state, action)

    def _apply_card(self, state: State, action: dict[str, Any]) -> State:
        if state["phase"] != "setup" or not _has_fields_of(action, "apply"):
            raise IllegalAction("rule CR-4 (adjustment): cards are applied only during setup")
        colour = ADJUSTMENT_COLOURS[len(state["applied"])]
        pair = state["pairs"][colour]
        if action["card"] not in pair:
            raise IllegalAction(
                f"rule CR-4 (adjustment): apply one of the dealt {colour} cards {pair}"
            )
        kept = pair[1] if action["card"] == pair[0] else pair[0]
        car = apply_symbols(state["car"], action["card"])
        new: State = {
            **state,
            "applied": [*state["applied"], action["card"]],
            "car": car,
            "manoeuvrability": car["manoeuvrability"],
            "body": car["body"],
            "hand": [*state["hand"], kept],
        }
        if len(new["applied"]) == len(ADJUSTMENT_COLOURS):
            new = self._finish_setup(new)
        return new

    @staticmethod
    def _finish_setup(state: State) -> State:
        """Rule CR-5: the supply is the seed's order of all cards minus the hand."""
        in_hand = set(state["hand"])
        return {
            **state,
            "phase": "preview",
            "supply": [card for card in supply_order(state["seed"]) if card not in in_hand],
        }

    def _start(self, state: State, action: dict[str, Any]) -> State:
        if state["phase"] != "preview" or not _has_fields_of(action, "start"):
            raise IllegalAction("rule CR-7 (test round): the race starts once, after the setup")
        return self._begin_turn({**state, "phase": "race"})

    # ----- drawing ----------------------------------------------------------------------
    def _draw(self, state: State, count: int) -> list[str]:
        """Take count cards off the supply into the hand (state is a private copy).

        Rule CR-10: an empty supply is replaced by the discard pile, shuffled from
        the seed (one fixed order per reshuffle number).
        """
        drawn: list[str] = []
        while len(drawn) < count:
            if not state["supply"]:
                if not state["discard"]:
                    break
                state["supply"] = shuffled(
                    state["seed"], f"reshuffle/{state['reshuffles']}", sorted(state["discard"])
                )
                state["discard"] = []
                state["reshuffles"] += 1
            drawn.append(state["supply"][0])
            state["supply"] = state["supply"][1:]
        state["hand"] = [*state["hand"], *drawn]
        return drawn

    def _draw_checked(self, state: State, count: int) -> tuple[list[str], list[str]]:
        """Draw count cards, then apply rule CR-9; (cards drawn, cards discarded by CR-9).

        Rule CR-9 follows every draw: while the hand holds no adjustment card it is
        discarded and as many cards are drawn. After a redraw the cards drawn are
        the new hand.
        """
        drawn = self._draw(state, count)
        redrawn: list[str] = []
        while not has_adjustment(state["hand"]):
            redrawn = [*redrawn, *state["hand"]]
            state["discard"] = [*state["discard"], *state["hand"]]
            hand_size, state["hand"] = len(state["hand"]), []
            drawn = self._draw(state, hand_size)
        return drawn, redrawn

    def _begin_turn(self, state: State) -> State:
        """Rule CR-8: draw one card (and rule CR-9 after it)."""
        state = state.copy()
        state["drawn"], state["redrawn"] = self._draw_checked(state, 1)
        return state

    # ----- a race turn ------------------------------------------------------------------
    def _drive(self, state: State, action: dict[str, Any]) -> State:
        card_id, event_id = self._validate_drive(state, action)
        turn = state["turn"]
        track = TRACK[state["track"][turn]]
        event_effect = EVENTS[event_id].effect if event_id else None
        result = resolve_turn(
            state["speed"],
            state["manoeuvrability"],
            state["body"],
            state["car"]["max_speed"],
            state["car"]["manoeuvrability"],
            ADJUSTMENTS[card_id],
            action["mode"] == "accelerate",
            event_effect,
            track,
        )
        played = [card_id] + ([event_id] if event_id else [])
        new: State = {
            **state,
            "hand": [card for card in state["hand"] if card not in played],
            "discard": [*state["discard"], *played],
            "speed": result.speed,
            "manoeuvrability": result.manoeuvrability,
            "body": result.body,
            "distance": state["distance"] + result.speed,
            "turn": turn + 1,
        }
        # Rule CR-14: cards drawn by an event join the hand for the next turn; rule
        # CR-9 follows this draw too.
        event_draw = self._draw_checked(new, 2) if event_effect == "draw_two" else ([], [])
        new["last"] = self._report(track.id, action, result, event_draw)
        return self._end_turn(new, result)

    def _validate_drive(self, state: State, action: dict[str, Any]) -> tuple[str, str | None]:
        if state["phase"] != "race" or not _has_fields_of(action, "drive"):
            raise IllegalAction(
                "rule CR-11 (turn): a drive action {type, card, mode, event} is played in the race"
            )
        card_id, event_id = action["card"], action["event"]
        if (
            not isinstance(card_id, str)
            or card_id not in ADJUSTMENTS
            or card_id not in state["hand"]
        ):
            raise IllegalAction("rule CR-11 (turn): play exactly one adjustment card from the hand")
        if action["mode"] not in MODES:
            raise IllegalAction("rule CR-11 (turn): an adjustment card accelerates or brakes")
        if event_id is not None and (
            not isinstance(event_id, str) or event_id not in EVENTS or event_id not in state["hand"]
        ):
            raise IllegalAction("rule CR-14 (events): at most one event card from the hand")
        return card_id, event_id

    @staticmethod
    def _report(
        track_id: str,
        action: dict[str, Any],
        result: TurnResult,
        event_draw: tuple[list[str], list[str]],
    ) -> TurnReport:
        """What the last turn did, for the view (the browser explains the turn with it)."""
        return {
            "track": track_json(track_id),
            "card": action["card"],
            "mode": action["mode"],
            "event": action["event"],
            "event_drawn": event_draw[0],
            "event_redrawn": event_draw[1],
            "clamps": result.clamps,
            "purple_damage": result.purple_damage,
            "too_fast": result.too_fast,
            "too_slow": result.too_slow,
            "manoeuvrability_loss": result.manoeuvrability_loss,
            "crashed": result.crashed,
            "crash_damage": result.crash_damage,
            "gained": result.speed,
        }

    def _end_turn(self, state: State, result: TurnResult) -> State:
        """Rules CR-18 (elimination) and CR-20 (end after the fourteenth card)."""
        if state["body"] <= 0:
            return {**state, "phase": "over", "outcome": "eliminated", "drawn": [], "redrawn": []}
        if state["turn"] == TRACK_LENGTH:
            outcome: Outcome = "crashed_last" if result.crashed else "finished"
            return {**state, "phase": "over", "outcome": outcome, "drawn": [], "redrawn": []}
        return self._begin_turn(state)

    # ----- queries ----------------------------------------------------------------------
    def legal_actions(self, state: State) -> list[Action]:
        phase = state["phase"]
        if phase == "setup":
            colour = ADJUSTMENT_COLOURS[len(state["applied"])]
            return [{"type": "apply", "card": card} for card in state["pairs"][colour]]
        if phase == "preview":
            return [{"type": "start"}]
        if phase == "over":
            return []
        events = [None, *(card for card in state["hand"] if card in EVENTS)]
        return [
            {"type": "drive", "card": card, "mode": mode, "event": event}
            for card in state["hand"]
            if card in ADJUSTMENTS
            for mode in MODES
            for event in events
        ]

    def is_over(self, state: State) -> bool:
        phase: str = state["phase"]
        return phase == "over"

    def score(self, state: State) -> int | None:
        """Rule CR-20: distance plus EVENT_BONUS per unused event card, only when finished."""
        if state["outcome"] != "finished":
            return None
        distance: int = state["distance"]
        return distance + EVENT_BONUS * sum(card in EVENTS for card in state["hand"])

    # Rule CR-20: the higher final speed wins a tie.
    tiebreak_rule = TiebreakRule(
        counts="final speed",
        better="higher",
        unit="speed",
        one="final speed 1",
        many="final speed {n}",
        shared=False,
    )

    def tiebreak(self, state: State) -> int:
        """Rule CR-20: the higher final speed wins a tie."""
        speed: int = state["speed"]
        return self.tiebreak_rule.of(speed)

    def reveals(self, state: State, action: Action) -> bool:
        """Rule CR-21: every action of the game shows something new. Applying a setup card
        shows the next colour's pair (after the last, the track of the test round); the
        start draws the first card, a drive the next (and the track card it meets)."""
        return isinstance(action, dict) and action.get("type") in ACTION_FORMS

    def resample(self, state: State, sample: str) -> State:
        """What the player has not seen drawn from sample: during the setup the pairs still
        to come and the track (CR-3, CR-6), later the supply's order (its cards are known:
        all but those in hand and those drawn, CR-5); and every reshuffle to come (CR-10),
        which follows the seed."""
        if state["phase"] == "setup":
            shown = ADJUSTMENT_COLOURS[: len(state["applied"]) + 1]
            fresh = deal_pairs(sample)
            return {
                **state,
                "seed": sample,
                "pairs": {c: state["pairs"][c] if c in shown else fresh[c] for c in fresh},
                "track": track_order(sample),
            }
        supply = shuffled(sample, "resample/supply", sorted(state["supply"]))
        return {**state, "seed": sample, "supply": supply}

    def fresh_memory(self) -> Memory:
        return {"track": [], "start_hand": [], "drawn": [], "discard": []}

    def remember(self, memory: Memory, action: Action | None, view: View) -> None:
        """The player remembers the track shown in the test round (CR-7) and every card
        that came into the hand or went to the discard pile, so the supply's cards are
        known, not their order (CR-5, CR-8)."""
        if view["phase"] == "preview" and view["track"] is not None:
            memory["track"] = [card["id"] for card in view["track"]]
            memory["start_hand"] = _ids(view["hand"]) + _ids(view["events"])
        kind = action["type"] if action else None
        if kind in ("start", "drive"):
            memory["drawn"] += view["drawn"]
            memory["discard"] += view["redrawn"]
        if action is not None and kind == "drive":
            last = view["last"]
            assert last is not None, "a drive always reports its turn"
            played = [action["card"]] + ([action["event"]] if action["event"] else [])
            memory["drawn"] += last["event_drawn"]
            memory["discard"] += played + last["event_redrawn"]

    def sample_state(self, view: View, memory: Memory, sample: str) -> State:
        """What the view and memory show; `resample` draws the rest from sample: the
        supply's order, and during the setup the pairs still to come and the track."""
        known: State = {
            "seed": sample,
            "phase": view["phase"],
            "pairs": _known_pairs(view),
            "applied": _ids(view["setup"]["applied"]),
            "car": view["car"].copy(),
            "speed": view["speed"],
            "manoeuvrability": view["manoeuvrability"],
            "body": view["body"],
            "distance": view["distance"],
            "hand": _ids(view["hand"]) + _ids(view["events"]),
            "supply": _known_supply(view, memory),
            "discard": list(memory["discard"]),
            "reshuffles": 0,
            "track": list(memory["track"]),
            "turn": view["turn"],
            "drawn": list(view["drawn"]),
            "redrawn": list(view["redrawn"]),
            "last": view["last"],
            "outcome": view["outcome"],
        }
        return self.resample(known, sample)

    def stakes(self, state: State, legal: list[Action]) -> Stakes:
        # Imported here: the stakes are worked out with this module's rules.
        from puzzles.crazy_rally.stakes import stakes

        return stakes(state, legal)

    def view(self, state: State) -> View:
        """Rule CR-21: everything the player may see; the track only during the test round."""
        phase = state["phase"]
        setup_colour = ADJUSTMENT_COLOURS[len(state["applied"])] if phase == "setup" else None
        return {
            "game": self.name,
            "phase": phase,
            "turn": state["turn"],
            "track_length": TRACK_LENGTH,
            "cards_left": TRACK_LENGTH - state["turn"],
            "car": state["car"].copy(),
            "speed": state["speed"],
            "manoeuvrability": state["manoeuvrability"],
            "body": state["body"],
            "distance": state["distance"],
            "setup": {
                "colour": setup_colour,
                "pair": [card_json(c) for c in state["pairs"][setup_colour]]
                if setup_colour
                else [],
                "applied": [card_json(c) for c in state["applied"]],
            },
            "hand": [card_json(c) for c in state["hand"] if c in ADJUSTMENTS],
            "events": [card_json(c) for c in state["hand"] if c in EVENTS],
            "track": [track_json(c) for c in state["track"]] if phase == "preview" else None,
            "drawn": list(state["drawn"]),
            "redrawn": list(state["redrawn"]),
            "last": state["last"],
            "supply_size": len(state["supply"]),
            "discard_size": len(state["discard"]),
            "outcome": state["outcome"],
            "event_bonus": EVENT_BONUS,
            "score": self.score(state),
        }
