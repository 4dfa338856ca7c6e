"""What the Rallye Raser expert needs of its game beyond the engine: the policy it rolls
out in states that agree with what the player has seen (the engine's sample_state,
which draws the future dice and the undrawn cards from a sample string, never from the
puzzle's seed), and the result of a run.
"""

from __future__ import annotations

from puzzles.base import Action
from puzzles.playout import play_out
from puzzles.rallye_raser.engine import MAX_GEAR, MAX_ROUNDS, RallyeRaser
from puzzles.rallye_raser.states import RouteDie, Spot, State
from puzzles.rallye_raser.track import lane_fits
from solver.rallye_raser.lookahead import LookaheadPlayer
from solver.rallye_raser.players import heuristic_gear, limit_here, room_for
from solver.rallye_raser.round import control_cost, nearest_value, probe_die
from solver.rallye_raser.solver import control_to

GAME = RallyeRaser()
# One point of score outweighs any number of rounds (the objective: score, then rounds).
POINT_WEIGHT = MAX_ROUNDS + 1


# ----- the policy the expert rolls out ---------------------------------------------------
# A careful player: points come first, and under RR-19 and RR-21 waiting costs
# nothing but rounds, so it places only dice that fit their lane (RR-16) and pays
# neither a loss of control (RR-17: two points) nor control (one point each, RR-5,
# RR-15) unless the rules force a die onto a field it misses, which it repairs with
# the reserve if it holds one (RR-14). It rerolls for a die that goes ahead, fills
# the route with dice that fit beside rather than suffer engine damage, and, once
# the finish is in reach, drives in the gear of the rows left, so that every die
# goes straight ahead in its lane: a perfect finish (RR-24) is worth four points
# more than an unclean one.
MOST_CONTROL_FOR_A_MISS = 2  # a loss of control costs two points: pay at most that


def _finish_rows_left(state: State) -> int | None:
    """Rows from the car to the finish zone, once it is drawn (RR-10); else None."""
    if state["card_a"] + 2 < len(state["card_starts"]) - 1:
        return None
    return int(state["card_starts"][-1] - state["car"]["row"])


def careful_gear(state: State) -> Action | None:
    """The heuristic player's gear, or the rows left once the finish is in reach; never
    a shift that costs control (RR-5), never above a limit the car is on (RR-18)."""
    rows_left = _finish_rows_left(state)
    if rows_left is not None and rows_left <= MAX_GEAR:
        wanted = max(1, rows_left)
    else:
        shift = heuristic_gear(state)
        wanted = state["gear"] if shift is None else shift["gear"]
    limit = limit_here(state, state["car"])
    allowed = [
        gear
        for gear in range(1, MAX_GEAR + 1)
        if abs(gear - state["gear"]) <= 1
        and not (state["no_upshift"] and gear > state["gear"])
        and (limit is None or gear <= limit)
    ] or [state["gear"]]
    wanted = min(allowed, key=lambda gear: abs(gear - wanted))
    return None if wanted == state["gear"] else {"type": "gear", "gear": wanted}


def _value_of(state: State, action: Action) -> int:
    if action["type"] == "place_reserve":
        reserve = state["reserve"]
        assert reserve is not None, "a reserved die is placed only when there is one"
        return reserve
    return int(state["pool"][action["die"]])


def _tip(state: State) -> Spot | RouteDie:
    return state["route"][-1] if state["route"] else state["car"]


def _ahead(state: State, action: Action) -> bool:
    return bool(action["row"] == _tip(state)["row"] + 1)


def _perfect_line(state: State, action: Action) -> bool:
    """Whether the die keeps a finish in reach this round perfect (RR-24): straight
    ahead in the car's lane; always true when the finish is out of reach."""
    rows_left = _finish_rows_left(state)
    if rows_left is None or rows_left > state["gear"]:
        return True
    return _ahead(state, action) and action["lane"] == state["car"]["lane"]


def _sound(state: State, action: Action) -> bool:
    """The field leaves room for the rest of the gear's dice and may be left in this gear
    (RR-18)."""
    left = state["gear"] - len(state["route"]) - 1
    limit = limit_here(state, action)
    route = [*state["route"], probe_die(action["row"], action["lane"])]
    return room_for(state, route, left) and (limit is None or limit >= state["gear"] or left == 0)


def _misfit(state: State) -> tuple[int, int] | None:
    """(route index, control needed) of the first placed die that misses its lane."""
    for index, die in enumerate(state["route"]):
        cost = control_cost(die["value"], die["lane"], True)
        if cost:
            return index, cost
    return None


def _repair(state: State, options: list[Action]) -> Action | None:
    """The reserve spent on a die that misses its lane when that makes it fit (RR-14),
    else a control point toward its lane when worth its price (RR-15)."""
    miss = _misfit(state)
    if miss is None:
        return None
    value, lane = state["route"][miss[0]]["value"], state["route"][miss[0]]["lane"]
    for action in options:
        spent = action["type"] == "modify" and action["step"] == miss[0]
        if spent and lane_fits(lane, value + action["delta"] * state["reserve"]):
            return action
    if miss[1] > min(MOST_CONTROL_FOR_A_MISS, state["control"]):
        return None
    die = state["route"][miss[0]]
    return control_to(miss[0], die["value"], nearest_value(die["value"], die["lane"], True))[0]


def careful_dice(state: State, options: list[Action]) -> Action:
    places = [a for a in options if a["type"] in ("place", "place_reserve")]
    fitting = [a for a in places if lane_fits(a["lane"], _value_of(state, a)) and _sound(state, a)]
    ahead = [a for a in fitting if _ahead(state, a) and _perfect_line(state, a)]
    beside = [a for a in fitting if a not in ahead]
    white = [a for a in places if a["type"] == "place"]
    if ahead:
        return ahead[0]
    must_place = not state["placed_since_roll"] and bool(white)
    if must_place and beside:
        return beside[0]
    if must_place and {"type": "move"} not in options:  # RR-8: a die of the roll goes down
        return min(white, key=lambda a: control_cost(_value_of(state, a), a["lane"], True))
    repair = _repair(state, options)
    if repair is not None:
        return repair
    if {"type": "reroll"} in options and _misfit(state) is None:
        return {"type": "reroll"}
    if beside:
        return beside[0]
    return {"type": "move"} if {"type": "move"} in options else options[0]


def careful_step(state: State, options: list[Action]) -> Action:
    """The careful player's pick among the legal actions of state."""
    if state["phase"] == "shift":
        shift = None if state["shifted"] else careful_gear(state)
        return shift or {"type": "roll"}
    return careful_dice(state, options)


LOOKAHEAD = LookaheadPlayer()


def base_action(state: State, options: list[Action]) -> Action:
    """The expert's own pick before any rollout: the round's exact expectimax
    (solver.rallye_raser.lookahead)."""
    return LOOKAHEAD.choose(state, options)


def outlook(state: State) -> tuple[float, float]:
    """The (points, tie-break) of the run when the careful player plays on from state."""
    return result(play_out(GAME, state, careful_step)[0])


def result(state: State) -> tuple[int, int]:
    """(points, tie-break) of a run that is over: no score counts 0 points, and the
    tie-break is minus the rounds, the safety bound's for a run that did not finish."""
    score = GAME.score(state)
    if score is None:
        return 0, -MAX_ROUNDS
    return score, GAME.tiebreak(state)
