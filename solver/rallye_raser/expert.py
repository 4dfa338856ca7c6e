"""What the Rallye Raser expert needs of its game beyond the engine: its pick, the exact
value of any action (both by the round search of solver.rallye_raser.lookahead, in a
state that agrees with what the player has seen: the engine's sample_state draws the
future dice and the undrawn cards from a sample string, never from the puzzle's seed,
and the search reads neither), and the result of a run.
"""

from __future__ import annotations

from puzzles.base import Action
from puzzles.rallye_raser.engine import MAX_ROUNDS, RallyeRaser
from puzzles.rallye_raser.states import State
from solver.rallye_raser.lookahead import LookaheadPlayer

GAME = RallyeRaser()
# One point of score outweighs any number of rounds (the objective: score, then rounds).
POINT_WEIGHT = MAX_ROUNDS + 1
LOOKAHEAD = LookaheadPlayer()


def base_action(state: State, options: list[Action]) -> Action:
    """The expert's pick: the round's exact expectimax."""
    return LOOKAHEAD.choose(state, options)


def action_outlook(state: State, action: Action) -> tuple[float, float]:
    """The (points, tie-break) the run can be expected to end with after action, the
    search playing on: exact over the dice of the round, the rest of the race by the
    search's own estimate. The tie-break is minus the rounds (RR-25)."""
    points, rounds = LOOKAHEAD.action_parts(state, action)
    return points, -rounds


def result(state: State) -> tuple[int, int]:
    """(points, tie-break) of a run that is over: no score counts 0 points, and the
    tie-break is minus the rounds, the safety bound's for a run that did not finish."""
    score = GAME.score(state)
    if score is None:
        return 0, -MAX_ROUNDS
    return score, GAME.tiebreak(state)
