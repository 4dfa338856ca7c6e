"""Complete runs of any game: the one loop that plays until the game is over.

Reference players, random playouts for property tests and benches, and the
terminal's `rally play` all drive the engine through `play_out`.
"""

from __future__ import annotations

from collections.abc import Callable

from puzzles.base import Action, Game, State
from puzzles.rng import Stream

Chooser = Callable[[int], int]  # given n options, the index of the one to take
Policy = Callable[[State, list[Action]], Action]  # the state and its legal actions -> one


def seeded_chooser(seed: str, label: str = "playout") -> Chooser:
    """A chooser drawing from the project's generator, so playouts are reproducible."""
    stream = Stream(seed, label)
    return stream.below


def play_out(game: Game, state: State, policy: Policy) -> tuple[State, list[Action]]:
    """Apply the policy's pick among the legal actions until the game is over."""
    actions: list[Action] = []
    while not game.is_over(state):
        action = policy(state, game.legal_actions(state))
        state = game.apply(state, action)
        actions.append(action)
        if len(actions) > game.max_actions:
            raise AssertionError(f"{game.name}: run exceeds max_actions={game.max_actions}")
    return state, actions


def random_playout(game: Game, seed: str, choose: Chooser) -> tuple[State, list[Action]]:
    """Play legal actions picked by choose until the game is over."""
    return play_out(game, game.new_game(seed), lambda _, options: options[choose(len(options))])
