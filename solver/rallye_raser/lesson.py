"""Rallye Raser's guided first game (solver.kit.Lesson): the proven optimal line of a seed,
from the first gear to the finish, with the words of every step worked out from the
engine's own state and stakes at that step. So no step can call a field a fit that the
board marks ✗, or a shift free that costs control: what a step says of a die, a field, a
shift or a drive is what the engine does with it.

The optimal line of the guided seed meets the reserve (placed and spent), rerolls,
control, card B's gear check in every gear, a speed limit and the perfect finish. Each
rule is explained where the line first meets it, with its number in
docs/rules/rallye-raser.md; later steps say what to do and what it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from puzzles.base import Action
from puzzles.rallye_raser.engine import (
    DICE_COUNT,
    GEAR_CHECK,
    MAX_REROLLS,
    MAX_ROUNDS,
    RallyeRaser,
)
from puzzles.rallye_raser.stakes import LANE_NAMES, action_notes, signed
from puzzles.rallye_raser.states import State
from puzzles.rallye_raser.track import LANE_VALUES, field, lane_fits, limit_of
from solver.kit import Lesson, LessonStep
from solver.rallye_raser.solver import find_optimum

GAME = RallyeRaser()

# The stakes' notes a placement step repeats as they are: the field's speed limit and the
# finish. Whether the die fits the step says in its own words; card B's gear check, which
# the field's mark shows, is explained at the first such field and then said by the drive
# that meets it.
FIELD_NOTES = ("limit", "gasfuss", "finish")

# Each rule in words, said once: where the line first meets it.
RULES = {
    "gear": "The gear is how many dice your route takes this round (RR-9).",
    "drive": "The car follows your dice in order (RR-16).",
    "route": "The first die goes on a field next to the car, each further one next to the"
    " previous die, ahead or beside, never back (RR-10). Any die may go on any field: the"
    " lane is checked when you drive (RR-16).",
    "reroll": "A reroll needs a die of the latest roll on the road first, and a round has at"
    f" most {MAX_REROLLS} (RR-8).",
    "reserve": "A reserved die waits beside the road: later, this round or another, it goes"
    " on the route like a rolled die, or is spent to raise or lower a route die by its value"
    " (RR-12 to RR-14). While it waits, only the other dice are rolled (RR-7).",
    "control": "Before you drive, each control point raises or lowers a route die by 1 (RR-15).",
    "loss_of_control": "A die that does not fit its lane loses control: the car still moves"
    " onto it, the timer drops by 1 and the round ends there (RR-17).",
    "limit": "Leave a speed-limit field in a gear at or below its limit, or the car stops on"
    " it and the gear drops to the limit (Gasfuss, RR-18). No route step goes from one limit"
    " straight onto another (Focus, RR-11).",
    "card_b": "A round that ends on card B moves the cards on (RR-20) and runs the gear"
    " check: "
    + "; ".join(
        f"gear {gear} gives timer {signed(timer)}, control {signed(control)}"
        for gear, (timer, control) in sorted(GEAR_CHECK.items(), reverse=True)
    )
    + " (RR-21).",
    "finish": "No card is left to draw: the finish zone lies beyond the last card, and"
    " driving onto it ends the race (RR-23). A perfect finish, timer +1, takes as many dice as the"
    " gear, all in the car's lane and fitting it; any other costs timer −1 (RR-24).",
}


@dataclass(frozen=True)
class Moment:
    """A step of the line: the state it is played in, the action, the state after it, and
    the state the round's route is driven from (its dice as the drive finds them)."""

    state: State
    action: Action
    after: State
    drive: State


class Teller:
    """Says each step of the line, explaining each rule the first time it comes up."""

    def __init__(self) -> None:
        self.told: set[str] = set()

    def rule(self, name: str) -> list[str]:
        if name in self.told:
            return []
        self.told.add(name)
        return [RULES[name]]

    def say(self, at: Moment) -> str:
        words: list[str] = []
        kind = at.action["type"]
        if kind == "gear":
            words += self.gear(at)
        elif kind == "roll":
            words += self.roll(at)
        elif kind == "reroll":
            words += self.reroll(at)
        elif kind == "place":
            words += self.placing(at, at.state["pool"][at.action["die"]], "")
        elif kind == "place_reserve":
            words += self.placing(at, _reserve(at.state), "reserved ")
        elif kind == "reserve":
            words += self.reserve(at)
        elif kind in ("modify", "control"):
            words += self.adjust(at)
        else:
            words += self.drive(at)
        if GAME.view(at.state)["finish_rows"] is not None:
            words += self.rule("finish")
        return " ".join(words)

    def gear(self, at: Moment) -> list[str]:
        old, new = at.state["gear"], at.action["gear"]
        control, left = at.state["control"], at.after["control"]
        cost = (
            f"A shift of {abs(new - old)} steps: the first is free, each further one costs 1"
            f" control, so control goes {control} → {left} (RR-5)."
            if control != left
            else "A shift of one step is free (RR-5)."
        )
        return [
            f"Shift from gear {old} to gear {new}, then roll.",
            *self.rule("gear"),
            cost,
            *self.leaving(at.state, new),
            *_held_back(at.state),
        ]

    def roll(self, at: Moment) -> list[str]:
        gear = at.state["gear"]
        if at.state["shifted"]:
            return [f"Roll the dice in gear {gear}."]
        return [
            f"Keep gear {gear} and roll the dice.",
            *self.rule("gear"),
            *self.leaving(at.state, gear),
            *_held_back(at.state),
        ]

    def leaving(self, state: State, gear: int) -> list[str]:
        """What the speed limit under the car, if any, asks of the gear it leaves in."""
        car = state["car"]
        limit = limit_of(field(state["track"], car["row"], car["lane"]))
        if limit is None:
            return []
        fate = (
            "within the limit"
            if gear <= limit
            else f"too fast: it will stop there and drop to gear {limit} (Gasfuss)"
        )
        return [
            f"The car stands on a speed limit {limit} and leaves it in gear {gear}, {fate}.",
            *self.rule("limit"),
        ]

    def reroll(self, at: Moment) -> list[str]:
        pool = at.state["pool"]
        left = MAX_REROLLS - (at.after["rolls"] - 1)
        return [
            f"Reroll: the unused {_dice(pool)} {_be(pool)} thrown again.",
            *self.rule("reroll"),
            f"After it, {_rerolls(left)} left this round.",
        ]

    def placing(self, at: Moment, value: int, which: str) -> list[str]:
        row, lane = at.action["row"], at.action["lane"]
        fits = lane_fits(lane, value)
        step = len(at.state["route"])
        words = [
            f"Choose the {which}{value}, then the field marked {'+' if fits else '✗'}"
            f" on row {row + 1}, {LANE_NAMES[lane]} lane.",
            *self.rule("route"),
            _fit(value, lane),
        ]
        if not fits:
            driven = at.drive["route"][step]["value"]
            if lane_fits(lane, driven):
                words.append(f"It becomes a {driven} before the drive, which fits.")
            else:
                words += self.rule("loss_of_control")
        for note in action_notes(GAME, at.state, at.action):
            if note["kind"] in FIELD_NOTES:
                words.append(_sentence(note["text"]))
                words += self.rule(_rule_of(note["kind"]))
            elif note["kind"] == "gear_check" and "card_b" not in self.told:
                words += ["The field is on card B, marked “gear check”.", *self.rule("card_b")]
        return words

    def reserve(self, at: Moment) -> list[str]:
        value = at.state["pool"][at.action["die"]]
        return [f"Choose the {value}, then “Reserve this die”.", *self.rule("reserve")]

    def adjust(self, at: Moment) -> list[str]:
        step, delta = at.action["step"], at.action["delta"]
        die = at.state["route"][step]
        new = at.after["route"][step]["value"]
        fit = "fits" if lane_fits(die["lane"], new) else "still does not fit"
        change = f"route die {step + 1}: its {die['value']} becomes a {new}, which {fit} the"
        lane = f"{LANE_NAMES[die['lane']]} lane"
        if at.action["type"] == "modify":
            spent = _reserve(at.state)
            way = "up" if delta > 0 else "down"
            return [
                f"Spend the reserved {spent} on {change} {lane} ({way} by {spent}, RR-14).",
                "The reserve is empty again.",
            ]
        control = at.state["control"]
        return [
            f"Spend 1 control on {change} {lane}: control {control} → {control - 1}.",
            *self.rule("control"),
        ]

    def drive(self, at: Moment) -> list[str]:
        route, pool = at.state["route"], at.state["pool"]
        words = ["Drive the route.", *self.rule("drive")]
        if all(lane_fits(die["lane"], die["value"]) for die in route):
            words.append("Every die fits its lane.")
        if pool:
            words.append(f"The {_dice(pool)} left of the roll {_go(pool)} unused (RR-16).")
        for note in action_notes(GAME, at.state, at.action):
            if note["kind"] == "gear_check":
                words.append("The car ends the round on card B.")
            words.append(_sentence(note["text"]))
        return words


def _reserve(state: State) -> int:
    value = state["reserve"]
    assert value is not None, "the line uses the reserve only while it holds a die"
    return value


def _held_back(state: State) -> list[str]:
    """RR-7: a reserved die is not thrown by the roll."""
    reserve = state["reserve"]
    if reserve is None:
        return []
    return [
        f"The reserved {reserve} stays out of the roll: {DICE_COUNT - 1} dice are thrown (RR-7)."
    ]


def _rerolls(count: int) -> str:
    return {0: "no reroll is", 1: "1 reroll is"}.get(count, f"{count} rerolls are")


def _be(values: list[int]) -> str:
    return "is" if len(values) == 1 else "are"


def _go(values: list[int]) -> str:
    return "goes" if len(values) == 1 else "go"


def _fit(value: int, lane: str) -> str:
    low, high = LANE_VALUES[lane]
    verdict = "fits" if lane_fits(lane, value) else "does not fit"
    return f"A {value} {verdict} the {LANE_NAMES[lane]} lane, which takes {low} or {high}."


def _rule_of(note_kind: str) -> str:
    return "limit" if note_kind == "gasfuss" else note_kind


def _sentence(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}."


def _dice(values: list[int]) -> str:
    """Dice values in words: "4", "2 and 3", "1, 2 and 3"."""
    shown = [str(value) for value in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _ending(state: State) -> str:
    """What the guide says once the car has finished: how the race ended and how any ends."""
    finish = next(event for event in state["last_round"] if event["type"] == "finish")
    how = "a perfect finish, timer +1" if finish["perfect"] else "not a perfect finish, timer −1"
    score = GAME.score(state)
    return (
        f"The car drove into the finish zone: {how}. The race is over: 2 × timer"
        f" {state['timer']} + control {state['control']} = {score} points in"
        f" {state['rounds_played']} rounds; fewer rounds break a tie (RR-25). A race also"
        f" ends, with no score, when the timer reaches 0 (RR-22) or after {MAX_ROUNDS} rounds"
        " (RR-26)."
    )


def lesson(seed: str) -> Lesson:
    """The guided game of seed: its optimal line, each step with its words."""
    line = find_optimum(seed).actions
    states = [GAME.new_game(seed)]
    for action in line:
        states.append(GAME.apply(states[-1], action))
    assert states[-1]["status"] == "finished", f"the optimal line of {seed} finishes"
    drives = [index for index, action in enumerate(line) if action["type"] == "move"]
    teller = Teller()
    steps = []
    for index, action in enumerate(line):
        drive = states[next(move for move in drives if move >= index)]
        moment = Moment(states[index], action, states[index + 1], drive)
        steps.append(LessonStep(action, teller.say(moment)))
    return Lesson(steps=tuple(steps), done=_ending(states[-1]))
