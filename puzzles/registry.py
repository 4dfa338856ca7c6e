"""The registry of games by their public name."""

from __future__ import annotations

from puzzles.base import Game
from puzzles.crazy_rally.engine import CrazyRally
from puzzles.rallye_raser.engine import RallyeRaser

GAMES: dict[str, Game] = {game.name: game for game in (RallyeRaser(), CrazyRally())}


def get_game(name: str) -> Game:
    """The game called name; KeyError naming the known games otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise KeyError(f"unknown game {name!r}; known games: {known}") from None
