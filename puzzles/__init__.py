"""Rules engines of the project's games, behind one interface (see puzzles.base)."""

from puzzles.base import Action, Game, IllegalAction, State
from puzzles.registry import GAMES, get_game
from puzzles.rng import validate_seed

__all__ = ["GAMES", "Action", "Game", "IllegalAction", "State", "get_game", "validate_seed"]
