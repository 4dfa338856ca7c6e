"""Complete runs of any game: the one loop that plays until the game is over.

Reference players, random playouts for property tests and benches, and the
terminal's `rally play` all drive the engine through `play_out`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from puzzles.base import Action, Game, S
from puzzles.rng import Stream

Chooser = Callable[[int], int]  # given n options, the index of the one to take
Policy = Callable[[S, list[Action]], Action]  # a state and its legal actions -> one of them


def seeded_chooser(seed: str, label: str = "playout") -> Chooser:
    """A chooser drawing from the project's generator, so playouts are reproducible."""
    stream = Stream(seed, label)
    return stream.below


def play_out(game: Game[S, Any, Any], state: S, policy: Policy[S]) -> tuple[S, list[Action]]:
    """Apply the policy's pick among the legal actions until the game is over."""
    actions: list[Action] = []
    while not game.is_over(state):
        action = policy(state, game.legal_actions(state))
        state = game.apply(state, action)
        actions.append(action)
        if len(actions) > game.max_actions:
            raise AssertionError(f"{game.name}: run exceeds max_actions={game.max_actions}")
    return state, actions


def random_playout(game: Game[S, Any, Any], seed: str, choose: Chooser) -> tuple[S, list[Action]]:
    """Play legal actions picked by choose until the game is over."""
    return play_out(game, game.new_game(seed), lambda _, options: options[choose(len(options))])
