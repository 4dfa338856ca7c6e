"""The example positions the "How to play" pages draw with the play page's own boards.

Each is a state of a fixed practice seed reached by a short, fixed way of playing
(the first legal choice of a kind), shown as the API shows a position: the pages
draw them as a replay draws a step, from the engine's own view. What each game's
examples are is its kit's (solver.kit.Presentation).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from puzzles.base import Action
from service.domain.guided import GUIDED_SEED
from service.web.api.common import engine_answer
from solver.kit import Example
from solver.registry import kit_of

SEED = "how-to-play"
# How many turns of a guided first game (service.domain.guided) the guide points through,
# for a game without a lesson.
GUIDED_TURNS = 2
# The longest way to an example: far more than any of them needs.
MAX_STEPS = 60


def _reach(game_name: str, example: Example) -> dict[str, Any]:
    engine = kit_of(game_name).engine
    state = engine.new_game(SEED)
    for _ in range(MAX_STEPS):
        answer = engine_answer(engine, state)
        if example.wanted(answer["view"], answer["legal_actions"]):
            return answer
        legal = answer["legal_actions"]
        action = next(a for kind in example.kinds for a in legal if a["type"] == kind)
        state = engine.apply(state, action)
    raise AssertionError(f"no example of {game_name} within {MAX_STEPS} steps")


def examples(game_name: str) -> list[tuple[str, dict[str, Any]]]:
    """Each example's caption and position (view and legal actions) for game_name."""
    return [
        (example.caption, _reach(game_name, example))
        for example in kit_of(game_name).presentation.examples
    ]


@cache
def guide(game_name: str) -> dict[str, Any]:
    """What the guided first game's page leads through, as the page reads it: each step's
    action and words (null: the board's own words for it), and the words once the steps
    are done (null: the page's own). A game with a lesson (solver.kit.Presentation) is led
    through a whole race; it is worked out once per process, since its seed is fixed."""
    lesson = kit_of(game_name).presentation.lesson
    if lesson is None:
        return {
            "steps": [{"action": action, "text": None} for action in guided_line(game_name)],
            "done": None,
        }
    taught = lesson(GUIDED_SEED)
    return {
        "steps": [{"action": step.action, "text": step.text} for step in taught.steps],
        "done": taught.done,
    }


def guided_line(game_name: str) -> list[Action]:
    """The moves the guided first game points at: a good line of the fixed seed (the
    solver's heuristic player), up to the end of its first GUIDED_TURNS turns (or the
    whole line, when it is shorter)."""
    kit = kit_of(game_name)
    line = kit.heuristic_actions(GUIDED_SEED)
    ends = [i for i, action in enumerate(line) if kit.engine.turn.ends(action)]
    return line[: ends[GUIDED_TURNS - 1] + 1] if len(ends) >= GUIDED_TURNS else line
