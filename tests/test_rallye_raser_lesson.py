"""The guided Rallye Raser game (solver.rallye_raser.lesson) played through on the engine:
every claim a step makes about a die, a field, a shift, a reroll or a drive is checked
against what the engine does with that very action, and the whole lesson against the
rules it must teach (docs/rules/rallye-raser.md, RR-n)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from puzzles.base import Action
from puzzles.rallye_raser.engine import RallyeRaser
from puzzles.rallye_raser.states import RoundEvent, State
from puzzles.rallye_raser.track import field, lane_fits, limit_of
from service.domain.guided import GUIDED_SEED
from solver.kit import Lesson
from solver.rallye_raser.lesson import Moment, Teller, lesson

GAME = RallyeRaser()
RULES = Path(__file__).resolve().parent.parent / "docs" / "rules" / "rallye-raser.md"
LANES = {"left": "L", "middle": "M", "right": "R"}


@dataclass(frozen=True)
class Played:
    """One step of the lesson as the engine plays it."""

    number: int
    text: str
    action: Action
    before: State
    after: State


@cache
def guided() -> Lesson:
    return lesson(GUIDED_SEED)


def played() -> Iterator[Played]:
    state = GAME.new_game(GUIDED_SEED)
    for number, step in enumerate(guided().steps, start=1):
        after = GAME.apply(state, step.action)
        yield Played(number, step.text, step.action, state, after)
        state = after


def of_type(*kinds: str) -> list[Played]:
    return [step for step in played() if step.action["type"] in kinds]


def events(step: Played) -> list[RoundEvent]:
    return list(step.after["last_round"]) if step.action["type"] == "move" else []


def test_the_lesson_plays_the_guided_seed_to_a_finish_past_every_rule_that_changes_a_choice():
    """Legal at every step (the engine refuses anything else), on past the first rounds to
    the finish, and through the reserve placed and spent (RR-12 to RR-14), rerolls (RR-8),
    control (RR-15), card B's gear check (RR-21), a speed limit left in its gear (RR-18)
    and a perfect finish (RR-24)."""
    steps = list(played())
    assert steps[-1].after["status"] == "finished"
    assert steps[-1].after["rounds_played"] > 2
    kinds = {step.action["type"] for step in steps}
    assert {"gear", "reroll", "reserve", "place_reserve", "modify", "control"} <= kinds
    happened = [event for step in steps for event in events(step)]
    assert any(event["type"] == "gear_check" for event in happened)
    assert {"type": "finish", "perfect": True} in happened
    assert any(_car_limit(step.before) for step in of_type("gear", "roll"))


def _car_limit(state: State) -> int | None:
    car = state["car"]
    return limit_of(field(state["track"], car["row"], car["lane"]))


def test_rr16_a_die_said_to_fit_a_lane_fits_it_and_its_field_is_marked_as_the_board_marks_it():
    """The board marks a field ✗ where the stakes say the die loses control, + elsewhere
    (web/static/js/boards/rallye-raser.js, targetMark); the step names that mark."""
    for step in of_type("place", "place_reserve"):
        action = step.action
        value = (
            step.before["reserve"]
            if action["type"] == "place_reserve"
            else step.before["pool"][action["die"]]
        )
        legal = GAME.legal_actions(step.before)
        notes = GAME.stakes(step.before, legal)["notes"][legal.index(action)]
        mark = "✗" if any(note["kind"] == "loss_of_control" for note in notes) else "+"
        lane = {v: k for k, v in LANES.items()}[action["lane"]]
        assert f"marked {mark} on row {action['row'] + 1}, {lane} lane" in step.text, step
        said = re.search(r"A (\d) (fits|does not fit) the (\w+) lane", step.text)
        assert said, step.text
        assert int(said[1]) == value and LANES[said[3]] == action["lane"]
        assert (said[2] == "fits") == lane_fits(action["lane"], value)


def test_rr5_a_shift_said_to_be_free_is_free_and_one_said_to_cost_control_costs_that():
    for step in of_type("gear"):
        spent = step.before["control"] - step.after["control"]
        if "is free" in step.text:
            assert spent == 0 and abs(step.action["gear"] - step.before["gear"]) == 1
        else:
            goes = re.search(r"control goes (\d) → (\d)", step.text)
            assert goes and spent > 0, step.text
            assert (int(goes[1]), int(goes[2])) == (step.before["control"], step.after["control"])


@pytest.mark.parametrize(("gear", "words"), [(2, "is free"), (3, "control goes 6 → 5")])
def test_rr5_a_shift_of_two_steps_is_said_to_cost_control_and_one_of_one_step_to_be_free(
    gear: int, words: str
):
    """The guided line shifts one step at a time; a shift of two, which the old guide
    called free, is said with its cost."""
    state = GAME.new_game(GUIDED_SEED)
    action = {"type": "gear", "gear": gear}
    after = GAME.apply(state, action)
    assert words in Teller().say(Moment(state, action, after, drive=after))


def test_rr14_rr15_a_die_said_to_be_changed_to_fit_is_changed_to_fit():
    for step in of_type("control", "modify"):
        route = step.action["step"]
        old, new = step.before["route"][route], step.after["route"][route]
        said = re.search(
            r"its (\d) becomes a (\d), which (fits|still does not fit) the (\w+)", step.text
        )
        assert said, step.text
        assert (int(said[1]), int(said[2])) == (old["value"], new["value"])
        assert (said[3] == "fits") == lane_fits(new["lane"], new["value"])
        assert LANES[said[4]] == new["lane"]
    for step in of_type("control"):
        assert f"control {step.before['control']} → {step.after['control']}" in step.text


def test_rr17_a_die_said_to_be_changed_before_the_drive_is_driven_so():
    """A die placed where it does not fit is either said to lose control or to be changed
    before the drive: the drive then finds it changed to a fit."""
    steps = list(played())
    for step in steps:
        if step.action["type"] != "place" or "becomes a" not in step.text:
            continue
        driven = next(later for later in steps[step.number :] if later.action["type"] == "move")
        die = driven.before["route"][len(step.before["route"])]
        assert f"It becomes a {die['value']} before the drive" in step.text
        assert lane_fits(die["lane"], die["value"])


def test_rr12_a_die_said_to_be_reserved_is_the_one_reserved():
    for step in of_type("reserve"):
        value = step.before["pool"][step.action["die"]]
        assert step.text.startswith(f"Choose the {value}, then “Reserve this die”.")
        assert step.after["reserve"] == value


def test_rr14_the_reserve_is_said_to_move_a_die_the_way_and_by_the_value_it_does():
    for step in of_type("modify"):
        spent = step.before["reserve"]
        way = "up" if step.action["delta"] > 0 else "down"
        assert f"Spend the reserved {spent} on route die {step.action['step'] + 1}" in step.text
        assert f"({way} by {spent}, RR-14)" in step.text
        assert step.after["reserve"] is None


def test_rr8_a_reroll_throws_the_dice_it_names_and_says_how_many_are_left():
    for step in of_type("reroll"):
        pool = " and ".join(str(value) for value in step.before["pool"])
        if len(step.before["pool"]) <= 2:
            assert f"the unused {pool} " in step.text
        left = GAME.view(step.after)["rerolls_left"]
        words = {0: "no reroll is", 1: "1 reroll is"}.get(left, f"{left} rerolls are")
        assert f"After it, {words} left this round." in step.text


def test_rr17_rr21_rr24_a_drive_says_what_the_engine_does_when_it_is_driven():
    for step in of_type("move"):
        happened = events(step)
        kinds = {event["type"] for event in happened}
        fits = all(lane_fits(die["lane"], die["value"]) for die in step.before["route"])
        assert ("Every die fits its lane." in step.text) == fits
        assert ("Loss of control" in step.text) == ("loss_of_control" in kinds)
        assert ("Gasfuss" in step.text) == ("gasfuss" in kinds)
        on_card_b = "The car ends the round on card B." in step.text
        assert on_card_b == ("card_advance" in kinds)
        unused = step.before["pool"]
        assert ("left of the roll" in step.text) == bool(unused)
        if len(unused) == 1:
            assert f"The {unused[0]} left of the roll goes unused (RR-16)." in step.text
        for event in happened:
            if event["type"] == "gear_check":
                timer, control = (
                    f"{n:+d}".replace("-", "−") for n in (event["timer"], event["control"])
                )
                assert (
                    f"Gear check in gear {event['gear']}: timer {timer}, control {control}."
                    in step.text
                )
            if event["type"] == "finish":
                assert ("Perfect finish: timer +1." in step.text) == event["perfect"]


def test_rr18_a_car_on_a_speed_limit_is_told_the_limit_and_whether_its_gear_keeps_to_it():
    steps = of_type("gear", "roll")
    for step in steps:
        limit = _car_limit(step.before)
        shown = re.search(
            r"stands on a speed limit (\d) and leaves it in gear (\d), (within)?", step.text
        )
        first = step.action["type"] == "gear" or not step.before["shifted"]
        if limit is None or not first:
            assert shown is None, step.text
            continue
        assert shown, step.text
        gear = step.after["gear"]
        assert (int(shown[1]), int(shown[2])) == (limit, gear)
        assert bool(shown[3]) == (gear <= limit)


def test_every_rule_is_explained_once_and_every_rule_number_cited_exists():
    """Each rule's words come once, where the line first meets the rule; each RR-n cited
    is a rule of docs/rules/rallye-raser.md."""
    rules = set(re.findall(r"\*\*RR-(\d+) ", RULES.read_text(encoding="utf-8")))
    texts = [step.text for step in guided().steps] + [guided().done]
    for number in {n for text in texts for n in re.findall(r"RR-(\d+)", text)}:
        assert number in rules
    for sentence in ("loses control: the car still moves", "Focus, RR-11", "runs the gear check"):
        assert sum(sentence in text for text in texts) == 1, sentence


def test_rr25_the_lesson_ends_with_how_the_race_ended_and_how_any_race_ends():
    final = list(played())[-1].after
    done = guided().done
    score = 2 * final["timer"] + final["control"]
    assert GAME.score(final) == score
    assert f"= {score} points in {final['rounds_played']} rounds" in done
    assert "a perfect finish" in done
    assert "timer reaches 0 (RR-22)" in done and "rounds (RR-26)" in done


@pytest.mark.parametrize("kind", ["reserve", "reroll", "control"])
def test_the_rule_of_a_kind_of_move_is_explained_at_its_first_step(kind: str):
    first = of_type(kind)[0]
    assert re.search(r"\(RR-\d+", first.text), first.text
