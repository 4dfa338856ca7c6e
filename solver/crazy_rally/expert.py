"""What the Crazy Rally expert needs of its game beyond the engine: the heuristic player
it rolls out, knowing the track, in states that agree with what the player has seen
(the engine's sample_state, which orders the supply and deals what the setup has not
shown yet from a sample string, never from the puzzle's seed), and the result of a run.
"""

from __future__ import annotations

from puzzles.base import Action
from puzzles.crazy_rally.engine import CrazyRally
from puzzles.crazy_rally.states import State
from puzzles.playout import play_out
from solver.crazy_rally.players import HeuristicPlayer

GAME = CrazyRally()
# One point of score outweighs any final speed (at most 7 + 9 tyres).
POINT_WEIGHT = 64


def _player(state: State) -> HeuristicPlayer:
    player = HeuristicPlayer()
    player.track = list(state["track"])
    return player


def base_action(state: State, options: list[Action]) -> Action:
    """The heuristic player's pick, knowing the track."""
    return _player(state).choose(state, options)


def outlook(state: State) -> tuple[float, float]:
    """The (points, tie-break) of the run when the heuristic player plays on from state,
    knowing the track."""
    return result(play_out(GAME, state, _player(state).choose)[0])


def result(state: State) -> tuple[int, int]:
    """(points, tie-break) of a run that is over; no score counts 0 points."""
    score = GAME.score(state)
    return (0, 0) if score is None else (score, GAME.tiebreak(state))
