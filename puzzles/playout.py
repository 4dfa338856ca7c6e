"""Random complete runs of any game, for property tests, benches and solver checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from puzzles.base import Action, Game, State
from puzzles.rng import Stream

Chooser = Callable[[int], int]  # given n options, the index of the one to take


def seeded_chooser(seed: str, label: str = "playout") -> Chooser:
    """A chooser drawing from the project's generator, so playouts are reproducible."""
    stream = Stream(seed, label)
    return stream.below


def random_playout(game: Game, seed: str, choose: Chooser) -> tuple[State, list[Action]]:
    """Play legal actions picked by choose until the game is over."""
    state = game.new_game(seed)
    actions: list[Any] = []
    while not game.is_over(state):
        options = game.legal_actions(state)
        action = options[choose(len(options))]
        state = game.apply(state, action)
        actions.append(action)
        if len(actions) > game.max_actions:
            raise AssertionError(f"{game.name}/{seed}: run exceeds max_actions={game.max_actions}")
    return state, actions
