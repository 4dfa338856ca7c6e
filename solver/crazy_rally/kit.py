"""Crazy Rally's kit: its engine, exact solver, reference players, the expert's parts and
what the site shows of it (solver.kit)."""

from __future__ import annotations

from puzzles.crazy_rally.states import State
from puzzles.registry import get_game
from solver.crazy_rally import expert, lesson, players, solver
from solver.kit import Example, ExpertParts, GameKit, Mark, Presentation, Rollouts

# A track card's mark: passed within its limit, too fast, too slow, or crashed on.
MARKS = {
    "within_limits": Mark("🟩", "within limits"),
    "too_fast": Mark("🟥", "too fast"),
    "too_slow": Mark("🟦", "too slow"),
    "crash": Mark("💥", "crash"),
}


def track_card_mark(state: State) -> str:
    """The mark of the track card just driven (CR-15 to CR-17)."""
    last = state["last"]
    assert last is not None, "a turn ends with the drive it reports"
    if last["crashed"]:
        return "crash"
    if last["too_fast"]:
        return "too_fast"
    return "too_slow" if last["too_slow"] else "within_limits"


EXAMPLES = (
    Example(
        "The setup: fit one card of each pair to the car; the other goes to the hand.",
        (),
        lambda _v, _l: True,
    ),
    Example(
        "A turn: the hand, the event cards and the car sheet, before playing a card.",
        ("apply", "start"),
        lambda view, _legal: view["phase"] == "race",
    ),
    Example(
        "The turn played: the track card revealed, and what it did to the car.",
        ("apply", "start", "drive"),
        lambda view, _legal: view["phase"] == "race" and view["turn"] == 1,
    ),
)

KIT = GameKit(
    engine=get_game("crazy-rally"),
    find_optimum=solver.find_optimum,
    greedy_actions=players.greedy_actions,
    heuristic_actions=players.heuristic_actions,
    expert=ExpertParts(
        base_action=expert.base_action,
        result=expert.result,
        point_weight=expert.POINT_WEIGHT,
        rollouts=Rollouts(
            outlook=expert.outlook,
            samples=24,
            screen_samples=6,
            grade_error=0.75,
            grade_samples=1024,
        ),
    ),
    presentation=Presentation(
        blurb="A card race against a track you saw only once: accelerate and brake with your"
        " hand to cover the most distance without wrecking the car.",
        examples=EXAMPLES,
        marks=MARKS,
        turn_mark=track_card_mark,
        lesson=lesson.lesson,
    ),
    independent_optimum=solver.independent_optimum,
)
