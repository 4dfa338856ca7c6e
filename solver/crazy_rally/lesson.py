"""Crazy Rally's guided first game (solver.kit.Lesson): the proven optimal line of a seed,
from the setup to the fourteenth track card, with the words of every step worked out from
the engine's own state and stakes at that step. What a step says a card does to the car
(its symbols in the setup; the speed, the body a purple card or the maximum speed costs,
an event in the race) is the stakes' note for that very action; what the track card then
does (too fast, too slow, a crash, the distance) is what the engine did when the line was
played, said of the card the test round showed.

The optimal line of the guided seed meets the setup, the test round, the speed rules
(accelerating and braking, the car's maximum speed), purple cards, a draw-two event, a
white card passed too fast, red cards and the end of the race. Each rule is explained
where the line first meets it, with its number in docs/rules/crazy-rally.md; later steps
say what to do and what it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from puzzles.base import Action, Note
from puzzles.crazy_rally.cards import ADJUSTMENTS, EVENTS, SYMBOL_PROPERTY, TRACK
from puzzles.crazy_rally.engine import (
    EVENT_BONUS,
    START_PROPERTY,
    START_SPEED,
    TRACK_LENGTH,
    CrazyRally,
)
from puzzles.crazy_rally.stakes import PROPERTY_NAMES, action_notes
from puzzles.crazy_rally.states import State, TurnReport
from solver.crazy_rally.solver import find_optimum
from solver.kit import Lesson, LessonStep

GAME = CrazyRally()

SYMBOL_WORDS = {
    symbol: f"{symbol} +1 {PROPERTY_NAMES[prop]}" for symbol, prop in SYMBOL_PROPERTY.items()
}
EFFECT_WORDS = {"draw_two": "draw two cards", "speed_up": "+1 speed", "slow_down": "−1 speed"}

# Each rule in words, said once: where the line first meets it. The keys are the rules'
# names in the lesson; RULE_NUMBERS says which CR rules each one teaches.
RULES = {
    "setup": f"The car starts with maximum speed, manoeuvrability and body {START_PROPERTY},"
    f" at speed {START_SPEED} and distance 0 (CR-2). Before the race you fit one card of"
    " each dealt pair to the car, blue, then yellow, then purple: each of its symbols"
    f" raises the car for the whole race ({', '.join(SYMBOL_WORDS.values())}); the other"
    " card of the pair goes to your hand (CR-4).",
    "test_round": f"The test round shows the {TRACK_LENGTH} track cards once, in order, then"
    " hides them: you race from memory (CR-7). A white card is the highest speed to pass it"
    " at, a red card the lowest.",
    "draw": "Each turn begins by drawing a card into the hand (CR-8); a hand with no"
    " adjustment card is discarded and drawn anew (CR-9).",
    "speed": "Every turn you play exactly one adjustment card: accelerate by its ▲ or brake"
    " by its ▼, never below speed 0 (CR-11).",
    "distance": "After the track card the car covers its speed: that is added to the"
    " distance (CR-19).",
    "maximum": "A speed above the car's maximum speed is cut to the maximum, and that costs"
    " 1 body (CR-13).",
    "elimination": "A car whose body reaches 0 is eliminated: the race ends with no score (CR-18).",
    "purple": "A purple card changes the speed by 3 and costs 1 body, whether it"
    " accelerates or brakes (CR-12).",
    "event": "After the card you may play one event card: +1 speed, −1 speed or draw two"
    " cards; cards it draws can be played from the next turn on (CR-14). Each event card"
    f" still in hand at the end is worth {EVENT_BONUS} point (CR-20).",
    "too_fast": "Faster than a white card's value, the car is slowed to it and loses"
    " manoeuvrability: the card's difficulty plus the excess (CR-15).",
    "too_slow": "Slower than a red card's value, the car is pushed up to it and loses"
    " manoeuvrability: the card's difficulty plus the shortfall (CR-16).",
    "crash": "Below manoeuvrability 0 the car crashes: speed 0, manoeuvrability back to"
    " the car's value, and body lost by the card's damage (CR-17). Exactly 0 is no crash.",
}
RULE_NUMBERS = {
    "setup": (2, 4),
    "test_round": (7,),
    "draw": (8, 9),
    "speed": (11,),
    "distance": (19,),
    "maximum": (13,),
    "elimination": (18,),
    "purple": (12,),
    "event": (14, 20),
    "too_fast": (15,),
    "too_slow": (16,),
    "crash": (17,),
}


@dataclass(frozen=True)
class Moment:
    """A step of the line: the state it is played in, the action and the state after it."""

    state: State
    action: Action
    after: State


class Teller:
    """Says each step of the line, explaining each rule the first time it comes up."""

    def __init__(self) -> None:
        self.told: dict[str, int] = {}  # rule name -> the step (from 1) that explained it
        self.step = 0

    def rule(self, name: str) -> list[str]:
        if name in self.told:
            return []
        self.told[name] = self.step
        return [RULES[name]]

    def say(self, at: Moment) -> str:
        self.step += 1
        kind = at.action["type"]
        if kind == "apply":
            words = self.apply(at)
        elif kind == "start":
            words = self.start(at)
        else:
            words = self.drive(at)
        return " ".join(words)

    def apply(self, at: Moment) -> list[str]:
        card = ADJUSTMENTS[at.action["card"]]
        other = next(c for c in at.state["pairs"][card.colour] if c != card.id)
        symbols = ", ".join(
            _symbols(symbol, card.symbols.count(symbol)) for symbol in dict.fromkeys(card.symbols)
        )
        notes = action_notes(at.state, at.action)
        return [
            f"Fit the {card.colour} card {card.id} to the car ({symbols}): {_notes(notes)}.",
            f"{other} goes to your hand.",
            *self.rule("setup"),
        ]

    def start(self, at: Moment) -> list[str]:
        track = [TRACK[card] for card in at.state["track"]]
        red = [number for number, card in enumerate(track, start=1) if card.is_minimum]
        where = f"card{'s' if len(red) > 1 else ''} {_listed([str(n) for n in red])}"
        return [
            "Watch the track, then start the race.",
            *self.rule("test_round"),
            f"This track has {len(red)} red {'card' if len(red) == 1 else 'cards'}: {where}."
            if red
            else "This track has no red card.",
            f"Starting draws the first card: {_listed(at.after['drawn'])}.",
            *self.rule("draw"),
        ]

    def drive(self, at: Moment) -> list[str]:
        action, state = at.action, at.state
        card = ADJUSTMENTS[action["card"]]
        accelerate = action["mode"] == "accelerate"
        event = action["event"]
        notes = action_notes(state, action)
        last = at.after["last"]
        assert last is not None, "a drive reports its turn"
        way = f"Accelerate +{card.speed_up}" if accelerate else f"Brake −{card.braking}"
        then = f", then the event {event} ({EFFECT_WORDS[EVENTS[event].effect]})" if event else ""
        kept = [c for c in state["hand"] if c in EVENTS and c != event]
        words = [
            f"Turn {state['turn'] + 1}: choose {card.id}, then {way}{then}, then Drive.",
            *self.rule("speed"),
        ]
        if kept and not event:
            words.append(
                f"No event: {_listed(kept)} {'stays' if len(kept) == 1 else 'stay'} in hand."
            )
        words.append(f"{_sentence(_notes(notes))}.")
        kinds = {note["kind"] for note in notes}
        if "purple" in kinds:
            words += self.rule("purple")
        if "clamp" in kinds:
            words += self.rule("maximum")
        lost = last["clamps"] + last["purple_damage"]
        if lost:
            words.append(f"Body {state['body']} → {state['body'] - lost}.")
            words += self.rule("elimination")
        else:
            words.append("The cards cost no body.")
        if event:
            words += self.rule("event")
            if EVENTS[event].effect == "draw_two":
                words.append("Its two cards join the hand for the next turn.")
        words += self.track(at, last)
        return words

    def track(self, at: Moment, last: TurnReport) -> list[str]:
        """What the track card does, as the engine did it, said of the card the test round
        showed (its number, colour and value)."""
        state, after = at.state, at.after
        card = TRACK[last["track"]["id"]]
        number = state["turn"] + 1
        kind = "minimum" if card.is_minimum else "maximum"
        words = [
            f"Track card {number}, as the test round showed it: {card.colour}, {kind}"
            f" {card.speed}, difficulty {card.difficulty}, damage {card.damage}."
        ]
        before = state["manoeuvrability"]
        if last["too_fast"] or last["too_slow"]:
            off = (
                f"too fast by {last['too_fast']}"
                if last["too_fast"]
                else f"too slow by {last['too_slow']}"
            )
            words.append(
                f"The car is {off}: manoeuvrability −{last['manoeuvrability_loss']}"
                f" ({card.difficulty} + {last['too_fast'] + last['too_slow']})."
            )
            words += self.rule("too_fast" if last["too_fast"] else "too_slow")
            if last["crashed"]:
                words.append(
                    f"Below 0, the car crashes on it: speed 0, body −{last['crash_damage']},"
                    f" manoeuvrability back to {after['manoeuvrability']}."
                )
            else:
                words.append(
                    f"Manoeuvrability {before} → {after['manoeuvrability']}, speed {card.speed}."
                )
            words += self.rule("crash")
        else:
            words.append(
                f"The speed {last['gained']} is at or above it: nothing happens."
                if card.is_minimum
                else f"The speed {last['gained']} is within it: nothing happens."
            )
            if card.is_minimum:
                words += self.rule("too_slow")
        words.append(f"Distance {state['distance']} → {after['distance']}.")
        words += self.rule("distance")
        return words


def _symbols(symbol: str, count: int) -> str:
    """A symbol a card carries count times, and what that adds: "2 wheels +2 manoeuvrability"."""
    if count == 1:
        return SYMBOL_WORDS[symbol]
    return f"{count} {symbol}s +{count} {PROPERTY_NAMES[SYMBOL_PROPERTY[symbol]]}"


def _notes(notes: list[Note]) -> str:
    return ", ".join(note["text"] for note in notes)


def _sentence(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}"


def _listed(items: list[str]) -> str:
    """Items in words: "E5", "E5 and E8", "B03, Y05 and E8"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _ending(state: State) -> str:
    """What the guide says once the race is over: its score and how any race ends."""
    kept = [card for card in state["hand"] if card in EVENTS]
    score = GAME.score(state)
    events = (
        f" + {len(kept)} event {'card' if len(kept) == 1 else 'cards'} kept"
        f" ({_listed(kept)}) × {EVENT_BONUS}"
        if kept
        else ""
    )
    return (
        f"The {TRACK_LENGTH}th track card is passed: the race is over. Distance"
        f" {state['distance']}{events} = {score} points; the final speed, {state['speed']},"
        " breaks a tie (CR-20). A car eliminated, or crashed on the last card, does not"
        " finish and has no score (CR-18, CR-20)."
    )


def teach(seed: str, line: list[Action] | None = None) -> tuple[Lesson, dict[str, int]]:
    """The guided game of seed along line (by default its optimal line), and the step (from
    1) at which each rule is explained."""
    line = find_optimum(seed).actions if line is None else line
    states = [GAME.new_game(seed)]
    for action in line:
        states.append(GAME.apply(states[-1], action))
    assert states[-1]["outcome"] == "finished", f"the line of {seed} finishes"
    teller = Teller()
    steps = tuple(
        LessonStep(action, teller.say(Moment(states[index], action, states[index + 1])))
        for index, action in enumerate(line)
    )
    return Lesson(steps=steps, done=_ending(states[-1])), dict(teller.told)


def lesson(seed: str) -> Lesson:
    """The guided game of seed: its optimal line, each step with its words."""
    return teach(seed)[0]
