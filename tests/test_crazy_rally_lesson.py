"""The guided Crazy Rally game (solver.crazy_rally.lesson) played through on the engine:
every claim a step makes about a card, the car, an event or a track card is checked
against the engine's stakes for that very action and what the engine does with it, and
the whole lesson against the rules it must teach (docs/rules/crazy-rally.md, CR-n). The
claims are also checked along a line the guided one does not take: the greedy
player's on a seed where it crashes and passes a red card too slow."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from puzzles.base import Action, Note
from puzzles.crazy_rally.cards import ADJUSTMENTS, EVENTS, TRACK
from puzzles.crazy_rally.engine import EVENT_BONUS, CrazyRally
from puzzles.crazy_rally.states import State, TurnReport
from service.domain.guided import GUIDED_SEED
from solver.crazy_rally.lesson import RULE_NUMBERS, RULES, teach
from solver.crazy_rally.players import greedy_actions
from solver.crazy_rally.solver import find_optimum
from solver.kit import Lesson

GAME = CrazyRally()
RULES_DOC = Path(__file__).resolve().parent.parent / "docs" / "rules" / "crazy-rally.md"
PROPERTIES = {"maximum speed": "max_speed", "manoeuvrability": "manoeuvrability", "body": "body"}


@dataclass(frozen=True)
class Played:
    """One step of the lesson as the engine plays it, with the engine's stakes for it."""

    number: int
    text: str
    action: Action
    before: State
    after: State
    notes: list[Note]


# The lines told: the guided one, and one through a crash and a red card passed too slow.
# The greedy player's line: the heuristic player brakes for the crashes it sees coming.
CRASH_SEED = "lesson-22"
LINES = ["guided", "crash"]


@cache
def taught(line: str = "guided") -> tuple[Lesson, dict[str, int]]:
    if line == "guided":
        return teach(GUIDED_SEED)
    return teach(CRASH_SEED, greedy_actions(CRASH_SEED))


def guided() -> Lesson:
    return taught()[0]


def played(line: str = "guided") -> Iterator[Played]:
    state = GAME.new_game(GUIDED_SEED if line == "guided" else CRASH_SEED)
    for number, step in enumerate(taught(line)[0].steps, start=1):
        legal = GAME.legal_actions(state)
        assert step.action in legal, (number, step.action)
        notes = GAME.stakes(state, legal)["notes"][legal.index(step.action)]
        after = GAME.apply(state, step.action)
        yield Played(number, step.text, step.action, state, after, list(notes))
        state = after


def of_type(*kinds: str, line: str = "guided") -> list[Played]:
    return [step for step in played(line) if step.action["type"] in kinds]


def report(step: Played) -> TurnReport:
    last = step.after["last"]
    assert last is not None
    return last


def test_the_lesson_plays_the_guided_seeds_optimal_line_to_the_finish_past_every_rule():
    """Legal at every step, the proven optimal line, to the end of the fourteenth track
    card; on the way a draw-two event, purple cards, the maximum speed's cut, a white card
    passed too fast and red cards."""
    steps = list(played())
    optimum = find_optimum(GUIDED_SEED)
    assert [step.action for step in steps] == optimum.actions
    final = steps[-1].after
    assert final["outcome"] == "finished" and final["turn"] == 14
    assert GAME.score(final) == optimum.optimum
    assert [step.action["type"] for step in steps[:4]] == ["apply"] * 3 + ["start"]
    reports = [report(step) for step in of_type("drive")]
    assert any(last["event"] and EVENTS[last["event"]].effect == "draw_two" for last in reports)
    assert any(last["purple_damage"] for last in reports)
    assert any(last["clamps"] for last in reports)
    assert any(last["too_fast"] for last in reports)
    assert any(last["track"]["colour"] == "red" for last in reports)


@pytest.mark.parametrize("line", LINES)
def test_cr4_a_setup_step_names_the_card_fitted_what_it_does_to_the_car_and_the_card_kept(
    line: str,
):
    for step in of_type("apply", line=line):
        card = ADJUSTMENTS[step.action["card"]]
        assert step.text.startswith(f"Fit the {card.colour} card {card.id} to the car")
        symbols = re.match(r"[^(]*\(([^)]*)\)", step.text)
        assert symbols, step.text
        raised = re.findall(r"\+(\d) (maximum speed|manoeuvrability|body)", symbols[1])
        for name, prop in PROPERTIES.items():
            gained = step.after["car"][prop] - step.before["car"][prop]  # type: ignore[literal-required]
            assert sum(int(n) for n, said in raised if said == name) == gained, step.text
        for note in step.notes:
            assert note["text"] in step.text
        changes = re.findall(r"(maximum speed|manoeuvrability|body) (\d+) → (\d+)", step.text)
        assert len(changes) == len(step.notes)
        for name, old, new in changes:
            prop = PROPERTIES[name]
            assert int(old) == step.before["car"][prop]  # type: ignore[literal-required]
            assert int(new) == step.after["car"][prop]  # type: ignore[literal-required]
        (kept,) = set(step.after["hand"]) - set(step.before["hand"])
        assert f"{kept} goes to your hand." in step.text


@pytest.mark.parametrize("line", LINES)
def test_cr7_the_test_round_step_says_where_the_red_cards_are(line: str):
    (step,) = of_type("start", line=line)
    red = [n for n, card in enumerate(step.before["track"], start=1) if TRACK[card].is_minimum]
    assert len(red) == 2
    assert f"This track has 2 red cards: cards {red[0]} and {red[1]}." in step.text
    assert f"Starting draws the first card: {step.after['drawn'][0]}." in step.text


@pytest.mark.parametrize("line", LINES)
def test_cr11_a_drive_step_names_the_card_the_way_and_the_event_it_plays(line: str):
    for step in of_type("drive", line=line):
        action = step.action
        card = ADJUSTMENTS[action["card"]]
        way = (
            f"Accelerate +{card.speed_up}"
            if action["mode"] == "accelerate"
            else f"Brake −{card.braking}"
        )
        event = action["event"]
        assert step.text.startswith(
            f"Turn {step.before['turn'] + 1}: choose {card.id}, then {way}"
            + (f", then the event {event}" if event else "")
        ), step.text
        kept = [c for c in step.before["hand"] if c in EVENTS]
        assert ("No event:" in step.text) == bool(kept and not event)


@pytest.mark.parametrize("line", LINES)
def test_cr11_to_cr14_a_drive_step_says_the_stakes_and_never_calls_a_costly_card_free(line: str):
    """Every note of the engine's stakes for the action is said; the body it costs (a
    purple card, the cut at the maximum) is what the engine takes, and a step says the
    cards cost no body only where the engine takes none."""
    for step in of_type("drive", line=line):
        for note in step.notes:
            assert note["text"].lower() in step.text.lower(), (step.number, note)
        last = report(step)
        lost = last["clamps"] + last["purple_damage"]
        assert ("The cards cost no body." in step.text) == (lost == 0), step.text
        assert ("purple card: body −1" in step.text) == bool(last["purple_damage"])
        assert ("cut to" in step.text) == bool(last["clamps"])
        if lost:
            body = step.before["body"]
            assert f"Body {body} → {body - lost}." in step.text
        said = re.search(r"Speed (\d+) → (\d+)", step.text)
        assert said and int(said[1]) == step.before["speed"], step.text
        if not (last["too_fast"] or last["too_slow"] or last["crashed"]):
            assert int(said[2]) == step.after["speed"]


@pytest.mark.parametrize("line", LINES)
def test_cr14_cr20_an_event_is_said_to_cost_its_point_and_a_draw_two_to_fill_the_hand(line: str):
    for step in of_type("drive", line=line):
        event = step.action["event"]
        said = f"event {event} played: {EVENT_BONUS} point less at the end"
        assert (said in step.text) == bool(event)
        draws = "Its two cards join the hand for the next turn." in step.text
        assert draws == bool(report(step)["event_drawn"])


@pytest.mark.parametrize("line", LINES)
def test_cr15_to_cr19_the_track_card_is_the_one_revealed_and_does_what_the_engine_did(line: str):
    for step in of_type("drive", line=line):
        last = report(step)
        card = TRACK[last["track"]["id"]]
        assert card.id == step.before["track"][step.before["turn"]]
        kind = "minimum" if card.is_minimum else "maximum"
        assert (
            f"Track card {step.before['turn'] + 1}, as the test round showed it: {card.colour},"
            f" {kind} {card.speed}, difficulty {card.difficulty}, damage {card.damage}."
        ) in step.text
        off = re.search(r"The car is too (fast|slow) by (\d+): manoeuvrability −(\d+)", step.text)
        if last["too_fast"] or last["too_slow"]:
            assert off, step.text
            assert int(off[2]) == (last["too_fast"] or last["too_slow"])
            assert (off[1] == "fast") == bool(last["too_fast"])
            assert int(off[3]) == last["manoeuvrability_loss"]
        else:
            assert off is None and "nothing happens" in step.text
        crash = "the car crashes on it" in step.text
        assert crash == last["crashed"]
        if (last["too_fast"] or last["too_slow"]) and not crash:
            assert (
                f"Manoeuvrability {step.before['manoeuvrability']} →"
                f" {step.after['manoeuvrability']}, speed {step.after['speed']}."
            ) in step.text
        assert f"Distance {step.before['distance']} → {step.after['distance']}." in step.text


def test_every_rule_is_explained_once_no_later_than_the_line_first_meets_it():
    """Each rule's words come once; the setup, the test round, the speed, purple cards,
    events and the end are all taught, each at or before the first step that meets it, and
    every CR-n cited is a rule of docs/rules/crazy-rally.md."""
    lesson, told = taught()
    assert set(told) == set(RULES)
    texts = [step.text for step in lesson.steps] + [lesson.done]
    for name, words in RULES.items():
        assert sum(words in text for text in texts) == 1, name
        assert words in lesson.steps[told[name] - 1].text, name
        for number in RULE_NUMBERS[name]:
            assert f"CR-{number})" in words or f"CR-{number}," in words, (name, number)
    rules = set(re.findall(r"\*\*CR-(\d+) ", RULES_DOC.read_text(encoding="utf-8")))
    for number in {n for text in texts for n in re.findall(r"CR-(\d+)", text)}:
        assert number in rules
    drives = of_type("drive")

    def first(meets: str) -> int:
        return next(step.number for step in drives if _meets(step, meets))

    for name in ("purple", "maximum", "event", "too_fast", "too_slow", "distance", "speed"):
        assert told[name] <= first(name), name
    assert told["setup"] == 1 and told["test_round"] == of_type("start")[0].number


def _meets(step: Played, rule: str) -> bool:
    last = report(step)
    return {
        "purple": bool(last["purple_damage"]),
        "maximum": bool(last["clamps"]),
        "event": last["event"] is not None,
        "too_fast": bool(last["too_fast"]),
        "too_slow": last["track"]["colour"] == "red",
        "distance": True,
        "speed": True,
    }[rule]


def test_cr20_the_lesson_ends_with_the_score_as_the_engine_counts_it_and_how_any_race_ends():
    final = list(played())[-1].after
    done = guided().done
    kept = [card for card in final["hand"] if card in EVENTS]
    score = GAME.score(final)
    assert score == final["distance"] + EVENT_BONUS * len(kept)
    assert f"Distance {final['distance']} + {len(kept)} event cards kept" in done
    assert f"= {score} points; the final speed, {final['speed']}, breaks a tie (CR-20)" in done
    assert "(CR-18, CR-20)" in done


def test_the_other_line_crashes_and_passes_a_red_card_too_slow_so_those_words_are_checked():
    reports = [report(step) for step in of_type("drive", line="crash")]
    assert any(last["crashed"] for last in reports)
    assert any(last["too_slow"] for last in reports)
