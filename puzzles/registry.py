"""The registry of games by their public name: the one place that lists the games.

A game is registered once, by its engine (`register`); everything generic reads
the registry when it runs (never a list of its own), so a game registered later, as
a test registers a small game of its own, is served like the others. The solver's
registry (solver.registry) registers an engine together with the game's solver kit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar

from puzzles.base import AnyGame
from puzzles.crazy_rally.engine import CrazyRally
from puzzles.rallye_raser.engine import RallyeRaser

T = TypeVar("T")


class GameRegistry(Mapping[str, AnyGame]):
    """The registered engines by name. `version` changes with every registration, so that
    what is derived from the set of games (the API's schemas) is derived again."""

    def __init__(self) -> None:
        self._games: dict[str, AnyGame] = {}
        self.version = 0

    def register(self, game: AnyGame) -> None:
        """Register game under its name; ValueError when the name is taken, or when one of
        its action types is another game's with other fields (a request's action is
        checked by its type before the game is known)."""
        if game.name in self._games:
            raise ValueError(f"a game named {game.name!r} is registered already")
        for other in self._games.values():
            for kind in game.action_forms.keys() & other.action_forms.keys():
                if game.action_forms[kind] != other.action_forms[kind]:
                    raise ValueError(
                        f"action type {kind!r} of {game.name} has other fields in {other.name}"
                    )
        self._games[game.name] = game
        self.version += 1

    def unregister(self, name: str) -> None:
        del self._games[name]
        self.version += 1

    def __getitem__(self, name: str) -> AnyGame:
        return self._games[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._games)

    def __len__(self) -> int:
        return len(self._games)


GAMES = GameRegistry()
for _game in (RallyeRaser(), CrazyRally()):
    GAMES.register(_game)


def named(registered: Mapping[str, T], name: str) -> T:
    """What is registered under the game name; KeyError naming the known games otherwise."""
    try:
        return registered[name]
    except KeyError:
        known = ", ".join(sorted(registered))
        raise KeyError(f"unknown game {name!r}; known games: {known}") from None


def get_game(name: str) -> AnyGame:
    """The game called name; KeyError naming the known games otherwise."""
    return named(GAMES, name)
