"""Rules engines of the project's games, behind one interface (puzzles.base): one package
per game (puzzles/<game>/: its engine, card data, stakes and the types of its states and
views), registered once by name (puzzles.registry). An engine owns everything about its
rules, what its player may see, and the states that agree with it (resample, and
sample_state for a player who knows only the views); nothing outside it builds its
states. It knows nothing of the solver or the service."""

from puzzles.base import Action, Game, IllegalAction, State
from puzzles.registry import GAMES, get_game
from puzzles.rng import validate_seed

__all__ = ["GAMES", "Action", "Game", "IllegalAction", "State", "get_game", "validate_seed"]
