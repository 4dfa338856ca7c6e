"""The example positions the "How to play" pages draw with the play page's own boards.

Each is a state of a fixed practice seed reached by a short, fixed way of playing
(the first legal choice of a kind), shown as the API shows a position: the pages
draw them as a replay draws a step, from the engine's own view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from puzzles import GAMES
from puzzles.base import Action
from service.web.api.common import engine_answer
from solver.crazy_rally import players as crazy_rally_players
from solver.rallye_raser import players as rallye_raser_players

SEED = "how-to-play"
# The guided first game: a fixed practice seed, and how many turns the guide points through.
GUIDED_SEED = "first-game"
GUIDED_TURNS = 2
GOOD_LINES = {
    "rallye-raser": (rallye_raser_players.heuristic_actions, "move"),
    "crazy-rally": (crazy_rally_players.heuristic_actions, "drive"),
}
# The longest way to an example: far more than any of them needs.
MAX_STEPS = 60
Wanted = Callable[[dict[str, Any], list[Action]], bool]

# What each game's examples show, in order: a caption, the kinds of action played on the
# way (the first legal one of the first kind that is legal), and when to stop.
EXAMPLES: dict[str, list[tuple[str, tuple[str, ...], Wanted]]] = {
    "rallye-raser": [
        (
            "Round 1: the car on card A, the timer, control and gear, before the roll.",
            (),
            lambda _v, _l: True,
        ),
        (
            "After the roll: a die placed next to the car;"
            " the route takes as many dice as the gear.",
            ("roll", "place"),
            lambda view, _legal: len(view["route"]) == 1,
        ),
        (
            "After the drive: what the round did, and round 2 ready to shift gear.",
            ("roll", "place", "reserve", "move"),
            lambda view, _legal: view["round"] == 2,
        ),
    ],
    "crazy-rally": [
        (
            "The setup: fit one card of each pair to the car; the other goes to the hand.",
            (),
            lambda _v, _l: True,
        ),
        (
            "A turn: the hand, the event cards and the car sheet, before playing a card.",
            ("apply", "start"),
            lambda view, _legal: view["phase"] == "race",
        ),
        (
            "The turn played: the track card revealed, and what it did to the car.",
            ("apply", "start", "drive"),
            lambda view, _legal: view["phase"] == "race" and view["turn"] == 1,
        ),
    ],
}


def _reach(game_name: str, kinds: tuple[str, ...], wanted: Wanted) -> dict[str, Any]:
    engine = GAMES[game_name]
    state = engine.new_game(SEED)
    for _ in range(MAX_STEPS):
        answer = engine_answer(engine, state)
        if wanted(answer["view"], answer["legal_actions"]):
            return answer
        legal = answer["legal_actions"]
        action = next(a for kind in kinds for a in legal if a["type"] == kind)
        state = engine.apply(state, action)
    raise AssertionError(f"no example of {game_name} within {MAX_STEPS} steps")


def examples(game_name: str) -> list[tuple[str, dict[str, Any]]]:
    """Each example's caption and position (view and legal actions) for game_name."""
    return [
        (caption, _reach(game_name, kinds, wanted))
        for caption, kinds, wanted in EXAMPLES[game_name]
    ]


def guided_line(game_name: str) -> list[Action]:
    """The moves the guided first game points at: a good line of the fixed seed (the
    solver's heuristic player), up to the end of its first GUIDED_TURNS turns."""
    player, turn_end = GOOD_LINES[game_name]
    line = player(GUIDED_SEED)
    ends = [i for i, action in enumerate(line) if action["type"] == turn_end]
    return line[: ends[GUIDED_TURNS - 1] + 1]
