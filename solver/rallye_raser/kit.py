"""Rallye Raser's kit: its engine, exact solver, reference players, the expert's parts
and what the site shows of it (solver.kit)."""

from __future__ import annotations

from puzzles.rallye_raser.states import State
from puzzles.registry import get_game
from solver.kit import Example, ExpertParts, GameKit, Mark, Presentation
from solver.rallye_raser import expert, lesson, players, solver

# A round's mark is its worst event: engine damage, then a loss of control, then a
# Gasfuss; a round without any is clean (and the last one, the finish).
MARKS = {
    "clean": Mark("🟩", "clean round"),
    "gasfuss": Mark("🟨", "Gasfuss"),
    "loss_of_control": Mark("🌀", "loss of control"),
    "engine_damage": Mark("🔧", "engine damage"),
    "finish": Mark("🏁", "finish"),
}
ROUND_EVENTS = ("finish", "engine_damage", "loss_of_control", "gasfuss")


def round_mark(state: State) -> str:
    """The mark of the round just driven, from its events (RR-17, RR-18, RR-19, RR-24)."""
    happened = {event["type"] for event in state["last_round"]}
    return next((kind for kind in ROUND_EVENTS if kind in happened), "clean")


EXAMPLES = (
    Example(
        "Round 1: the car on card A, the timer, control and gear, before the roll.",
        (),
        lambda _v, _l: True,
    ),
    Example(
        "After the roll: a die placed next to the car; the route takes as many dice as the gear.",
        ("roll", "place"),
        lambda view, _legal: len(view["route"]) == 1,
    ),
    Example(
        "After the drive: what the round did, and round 2 ready to shift gear.",
        ("roll", "place", "reserve", "move"),
        lambda view, _legal: view["round"] == 2,
    ),
)

KIT = GameKit(
    engine=get_game("rallye-raser"),
    find_optimum=solver.find_optimum,
    greedy_actions=players.greedy_actions,
    heuristic_actions=players.heuristic_actions,
    expert=ExpertParts(
        base_action=expert.base_action,
        result=expert.result,
        point_weight=expert.POINT_WEIGHT,
        action_outlook=expert.action_outlook,
    ),
    presentation=Presentation(
        blurb="A solo dice race: lay a route of dice down the lanes, mind the speed limits,"
        " and keep your timer and control up to the finish.",
        examples=EXAMPLES,
        marks=MARKS,
        turn_mark=round_mark,
        lesson=lesson.lesson,
    ),
    independent_optimum=solver.independent_optimum,
    blind_greedy_actions=players.blind_greedy_actions,
)
