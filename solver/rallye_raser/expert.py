"""What the Rallye Raser expert needs of its game: the player's memory, and states
that agree with what the player has seen.

The player's view (docs/rules/rallye-raser.md, View) shows the dials, cards A
and B, the pool and the route. Three facts of the round so far are not in it
but the player knows them, having made the moves: whether the gear was changed
(RR-5), whether a die of the latest roll is on the road (RR-8) and whether a die
was reserved this round (RR-12). The player also remembers the cards already
driven, so the undrawn cards are among the others of the pool of eighteen.

Everything else is unseen: the future dice (RR-7: fixed by position from the
seed) and the undrawn cards with their rotation (RR-3). A sampled state draws
both from a sample string, never from the puzzle's seed.
"""

from __future__ import annotations

from typing import Any

from puzzles.base import Action, State
from puzzles.playout import play_out
from puzzles.rallye_raser.engine import MAX_GEAR, MAX_ROUNDS, RallyeRaser
from puzzles.rallye_raser.track import CARDS, card_sections, lane_fits
from puzzles.rng import coin_flips, shuffled
from solver.rallye_raser.players import heuristic_gear, limit_here, room_for
from solver.rallye_raser.round import control_cost, nearest_value
from solver.rallye_raser.solver import control_to

GAME = RallyeRaser()
# One point of score outweighs any number of rounds (the objective: score, then rounds).
POINT_WEIGHT = MAX_ROUNDS + 1
PAST = "past"  # the deck entry standing for the cards already driven


def fresh_memory() -> dict[str, Any]:
    return {"shifted": False, "placed_since_roll": False, "reserved": False, "cards_seen": []}


def remember(memory: dict[str, Any], action: Action | None, view: dict[str, Any]) -> None:
    """Update memory with the player's own action (None at the start) and the view after it."""
    kind = action["type"] if action else None
    if kind == "gear":
        memory["shifted"] = True
    elif kind in ("roll", "reroll"):
        memory["placed_since_roll"] = False
    elif kind == "place":
        memory["placed_since_roll"] = True
    elif kind == "reserve":
        memory["reserved"] = True
    elif kind == "move":
        memory.update(shifted=False, placed_since_roll=False, reserved=False)
    for card in (view["card_a"], view["card_b"]):
        if card is not None and card["id"] not in memory["cards_seen"]:
            memory["cards_seen"].append(card["id"])


def sampled_state(view: dict[str, Any], sample: str) -> State:
    """A state with this view and memory: undrawn cards and future dice from sample."""
    memory = view["seen"]
    shown = [card for card in (view["card_a"], view["card_b"]) if card is not None]
    first_row = shown[0]["first_row"]
    unseen = sorted(set(CARDS) - set(memory["cards_seen"]))
    count = view["cards_remaining"]
    drawn_ids = shuffled(sample, "expert/deck", unseen)[:count]
    flips = coin_flips(sample, "expert/rotation", count)
    undrawn = [{"id": i, "rotated": f} for i, f in zip(drawn_ids, flips, strict=True)]
    deck = [{"id": c["id"], "rotated": c["rotated"]} for c in shown] + undrawn
    sections = [card_sections(entry) for entry in deck]
    # The rows already driven are never used again (RR-10: never backwards); one
    # filler card keeps the rows' numbers.
    if first_row:
        deck.insert(0, {"id": PAST, "rotated": False})
        sections.insert(0, ["..."] * first_row)
    starts = [0]
    for card in sections:
        starts.append(starts[-1] + len(card))
    return {
        "seed": sample,
        "deck": deck,
        "track": [row for card in sections for row in card],
        "card_starts": starts,
        "card_a": 1 if first_row else 0,
        "round": view["round"],
        "rounds_played": view["rounds_played"],
        "status": view["status"],
        "phase": view["phase"],
        "gear": view["gear"],
        "timer": view["timer"],
        "control": view["control"],
        "car": dict(view["car"]),
        "no_upshift": view["no_upshift"],
        "shifted": memory["shifted"],
        "rolls": view["rolls"],
        "placed_since_roll": memory["placed_since_roll"],
        "reserved_this_round": memory["reserved"],
        "pool": list(view["pool"]),
        "reserve": view["reserve"],
        "route": [dict(die) for die in view["route"]],
        "last_round": list(view["last_round"]),
    }


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
        return int(state["reserve"])
    return int(state["pool"][action["die"]])


def _tip(state: State) -> dict[str, Any]:
    tip: dict[str, Any] = state["route"][-1] if state["route"] else state["car"]
    return tip


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
    route = [*state["route"], {"row": action["row"], "lane": action["lane"]}]
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


def base_action(state: State, options: list[Action]) -> Action:
    return careful_step(state, options)


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
