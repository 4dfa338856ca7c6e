"""Rallye Raser, the solo dice race: the rules engine.

Every rule is numbered in docs/rules/rallye-raser.md (RR-1 ...); refusals name
the rule they enforce. A round runs through phase "shift" (step I: an optional
gear change, then the roll) and phase "dice" (step II: place, reserve, modify,
spend control, reroll) and ends with the "move" action, which resolves steps III
and IV at once. Actions are validated directly, never by searching
legal_actions, so replaying a run stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict

from puzzles.base import (
    Action,
    ActionForms,
    FieldForm,
    Game,
    IllegalAction,
    Stakes,
    TiebreakRule,
    Turn,
)
from puzzles.rallye_raser.states import (
    CardView,
    DeckEntry,
    FieldView,
    Memory,
    RoundEvent,
    RouteDie,
    Spot,
    State,
    Status,
    View,
)
from puzzles.rallye_raser.track import (
    ABSENT,
    CARDS,
    FINISH_ROWS,
    LANES,
    card_index,
    card_sections,
    deal_deck,
    field,
    lane_fits,
    limit_of,
)
from puzzles.rng import coin_flips, dice, shuffled

RULES_VERSION = "rr-4"
DICE_COUNT = 3
MAX_GEAR = 3
MAX_REROLLS = 2
TRACK_MAX = 6  # timer and control both range 0..6 (RR-1)
MAX_ROUNDS = 40  # RR-26: a run not finished after this many rounds ends unfinished
UNDRAWN = "undrawn"  # a sampled state's deck entry for a card still to draw
# RR-26: the most actions one round can take: gear 1, roll 1, rerolls 2, route dice 3,
# reserve 1 (one reservation a round, RR-12), reserve placed or spent 2 (the one
# carried in and the one reserved this round), control 6 (control never rises
# within a round), move 1.
MAX_ACTIONS_PER_ROUND = 1 + 1 + MAX_REROLLS + MAX_GEAR + 1 + 2 + TRACK_MAX + 1

# What each action type must carry besides "type": field name -> allowed values
# (None: any int). Actions are compared by their JSON form, so extra keys are refused.
ACTION_FIELDS: dict[str, dict[str, tuple[Any, ...] | None]] = {
    "gear": {"gear": (1, 2, 3)},
    "roll": {},
    "reroll": {},
    "place": {"die": None, "row": None, "lane": tuple(LANES)},
    "reserve": {"die": None},
    "place_reserve": {"row": None, "lane": tuple(LANES)},
    "modify": {"step": None, "delta": (1, -1)},
    "control": {"step": None, "delta": (1, -1)},
    "move": {},
}


def _form(allowed: tuple[Any, ...] | None) -> FieldForm:
    return "integer" if allowed is None or isinstance(allowed[0], int) else "string"


ACTION_FORMS: ActionForms = {
    kind: {name: _form(allowed) for name, allowed in fields.items()}
    for kind, fields in ACTION_FIELDS.items()
}


def start_state(seed: str, deck: list[DeckEntry], sections: list[list[str]]) -> State:
    """The set-up (RR-1, RR-3): cards laid out, car in lane M of card A's first row."""
    starts = [0]
    for card in sections:
        starts.append(starts[-1] + len(card))
    return {
        "seed": seed,
        "deck": deck,
        "track": [row for card in sections for row in card],
        "card_starts": starts,
        "card_a": 0,
        "round": 1,
        "rounds_played": 0,
        "status": "running",
        "phase": "shift",
        "gear": 1,
        "timer": TRACK_MAX,
        "control": TRACK_MAX,
        "car": {"row": 0, "lane": "M"},
        "no_upshift": False,
        "shifted": False,
        "rolls": 0,
        "placed_since_roll": False,
        "reserved_this_round": False,
        "pool": [],
        "reserve": None,
        "route": [],
        "last_round": [],
    }


def _refuse(rule: str) -> IllegalAction:
    return IllegalAction(f"rule {rule}")


def _checked_fields(action: Action) -> tuple[str, dict[str, Any]]:
    """The action's type and fields, refusing anything that is not a well-formed action."""
    kind = action.get("type") if isinstance(action, dict) else None
    if not isinstance(kind, str) or kind not in ACTION_FIELDS:
        known = ", ".join(ACTION_FIELDS)
        raise IllegalAction(f"RR-27 (actions): an action is a JSON object of type {known}")
    expected = ACTION_FIELDS[kind]
    if set(action) != {"type", *expected}:
        fields = ", ".join(["type", *expected])
        raise IllegalAction(f"RR-27 (actions): a {kind!r} action has exactly the fields {fields}")
    for name, allowed in expected.items():
        value = action[name]
        # By exact type: True == 1 and 2.0 == 2 in Python, but neither is the
        # contract's JSON integer, and a run must be stored exactly as the rules read it.
        if allowed is None and type(value) is not int:
            raise IllegalAction(f"RR-27 (actions): {kind!r} field {name!r} is a JSON integer")
        if allowed is not None and (type(value) is not type(allowed[0]) or value not in allowed):
            raise IllegalAction(
                f"RR-27 (actions): {kind!r} field {name!r} is one of {list(allowed)}"
            )
    return kind, action


def _cap(value: int) -> int:
    return max(0, min(TRACK_MAX, value))


def _require_phase(state: State, phase: str) -> None:
    if state["phase"] != phase:
        if phase == "shift":
            raise _refuse("RR-5 (gear shift): the gear is chosen before the first roll")
        raise _refuse("RR-7 (roll): roll the white dice first")


def _visible_end(state: State) -> int:
    """The first row the player may not use yet: card B's end, or the finish zone's end."""
    starts: list[int] = state["card_starts"]
    undrawn_after: int = state["card_a"] + 2
    if undrawn_after < len(starts) - 1:
        return starts[undrawn_after]
    return starts[-1] + FINISH_ROWS


def _route_tip(state: State) -> Spot:
    """The field the next route die must be next to: the last placed die, or the car."""
    if state["route"]:
        last = state["route"][-1]
        return Spot(row=last["row"], lane=last["lane"])
    return state["car"]


def target_problem(state: State, row: int, lane: str) -> str | None:
    """Why a route die may not go on (row, lane), or None when it may (RR-10, RR-11)."""
    tip = _route_tip(state)
    step = LANES.index(lane) - LANES.index(tip["lane"])
    ahead = row == tip["row"] + 1 and step == 0
    beside = row == tip["row"] and abs(step) == 1
    if not (ahead or beside):
        return (
            "RR-10 (route): a die goes ahead in the same lane or beside in the same "
            "section of the car or of the last placed die; never backwards"
        )
    if row >= _visible_end(state):
        return "RR-10 (route): that road card is not drawn yet"
    kind = field(state["track"], row, lane)
    if kind == ABSENT:
        return "RR-10 (route): that field is absent on this card"
    used = [state["car"], *state["route"]]
    if any(spot["row"] == row and spot["lane"] == lane for spot in used):
        return "RR-10 (route): that field is already used this round"
    tip_kind = field(state["track"], tip["row"], tip["lane"])
    if limit_of(tip_kind) is not None and limit_of(kind) is not None:
        return "RR-11 (focus): no step from a speed-limit field onto another"
    return None


def _require_route_room(state: State, row: int, lane: str) -> None:
    if len(state["route"]) >= state["gear"]:
        raise _refuse("RR-9 (route size): the route holds as many dice as the gear shows")
    problem = target_problem(state, row, lane)
    if problem:
        raise _refuse(problem)


def _require_pool_die(state: State, die: int) -> int:
    pool: list[int] = state["pool"]
    if not 0 <= die < len(pool):
        raise _refuse("RR-7 (roll): no such available white die")
    return pool[die]


def _without(pool: list[int], die: int) -> list[int]:
    return pool[:die] + pool[die + 1 :]


def _changed_step(state: State, step: int, delta: int, rule: str) -> list[RouteDie]:
    """The route with die `step` changed by delta, refusing results outside 1..6."""
    if not 0 <= step < len(state["route"]):
        raise _refuse(f"{rule}: no such placed die")
    die = state["route"][step]
    value = die["value"] + delta
    if not 1 <= value <= 6:
        raise _refuse(f"{rule}: a die's value stays within 1..6")
    route = list(state["route"])
    route[step] = {**die, "value": value}
    return route


def _shift_gear(state: State, action: Action) -> State:
    _require_phase(state, "shift")
    if state["shifted"]:
        raise _refuse("RR-5 (gear shift): one gear change per round")
    gear, current = action["gear"], state["gear"]
    if gear == current:
        raise _refuse("RR-5 (gear shift): choose a different gear, or just roll")
    if gear > current and state["no_upshift"]:
        raise _refuse("RR-6 (engine damage): no upshift in the round after engine damage")
    cost = abs(gear - current) - 1
    if cost > state["control"]:
        raise _refuse("RR-5 (gear shift): each step beyond the first costs 1 control")
    return {**state, "gear": gear, "control": state["control"] - cost, "shifted": True}


def _roll(state: State, action: Action) -> State:
    _require_phase(state, "shift")
    count = DICE_COUNT - (state["reserve"] is not None)
    pool = list(dice(state["seed"], state["round"], 0, count))
    return {**state, "phase": "dice", "rolls": 1, "placed_since_roll": False, "pool": pool}


def can_place(state: State) -> bool:
    """Whether some die of the pool could go on the route now (RR-8)."""
    return bool(state["pool"]) and bool(_route_targets(state))


def roll_used(state: State) -> bool:
    """RR-8 for driving: a die of the latest roll lies on the road, or none of them could."""
    return state["placed_since_roll"] or not can_place(state)


def may_reroll(state: State) -> bool:
    """RR-8 for rerolling: a reroll left, a die to throw, and a die of the latest roll
    on the road. No lapse: a roll none of whose dice can be placed opens no reroll."""
    return state["rolls"] <= MAX_REROLLS and bool(state["pool"]) and state["placed_since_roll"]


def _reroll(state: State, action: Action) -> State:
    _require_phase(state, "dice")
    if state["rolls"] > MAX_REROLLS:
        raise _refuse("RR-8 (reroll): at most two rerolls per round")
    if not state["pool"]:
        raise _refuse("RR-8 (reroll): no white die is left to reroll")
    if not state["placed_since_roll"]:
        hint = "" if can_place(state) else " (none can be placed now: drive on)"
        raise _refuse(f"RR-8 (reroll): place a die of the latest roll on the road first{hint}")
    pool = list(dice(state["seed"], state["round"], state["rolls"], len(state["pool"])))
    return {**state, "rolls": state["rolls"] + 1, "placed_since_roll": False, "pool": pool}


def _place(state: State, action: Action) -> State:
    _require_phase(state, "dice")
    value = _require_pool_die(state, action["die"])
    row, lane = action["row"], action["lane"]
    _require_route_room(state, row, lane)
    placed = RouteDie(row=row, lane=lane, value=value, source="white")
    return {
        **state,
        "pool": _without(state["pool"], action["die"]),
        "route": [*state["route"], placed],
        "placed_since_roll": True,
    }


def _reserve(state: State, action: Action) -> State:
    _require_phase(state, "dice")
    value = _require_pool_die(state, action["die"])
    if state["reserve"] is not None:
        raise _refuse("RR-12 (reserve): only one die may be reserved at a time")
    if state["reserved_this_round"]:
        raise _refuse("RR-12 (reserve): one reservation per round")
    if len(state["pool"]) == 1 and not roll_used(state):
        raise _refuse(
            "RR-8 (reroll): the last die of a roll is placed, not reserved, "
            "until a die of that roll lies on the road"
        )
    return {
        **state,
        "pool": _without(state["pool"], action["die"]),
        "reserve": value,
        "reserved_this_round": True,
    }


def _require_reserve(state: State) -> int:
    _require_phase(state, "dice")
    reserve: int | None = state["reserve"]
    if reserve is None:
        raise _refuse("RR-12 (reserve): no die is reserved")
    return reserve


def _place_reserve(state: State, action: Action) -> State:
    value = _require_reserve(state)
    row, lane = action["row"], action["lane"]
    _require_route_room(state, row, lane)
    placed = RouteDie(row=row, lane=lane, value=value, source="reserve")
    return {**state, "reserve": None, "route": [*state["route"], placed]}


def _modify(state: State, action: Action) -> State:
    value = _require_reserve(state)
    route = _changed_step(state, action["step"], action["delta"] * value, "RR-14 (reserve spent)")
    return {**state, "reserve": None, "route": route}


def _spend_control(state: State, action: Action) -> State:
    _require_phase(state, "dice")
    if state["control"] < 1:
        raise _refuse("RR-15 (control): no control left to spend")
    route = _changed_step(state, action["step"], action["delta"], "RR-15 (control)")
    return {**state, "control": state["control"] - 1, "route": route}


def _drive_route(state: State) -> tuple[Spot, int, int, list[RoundEvent]]:
    """Step III: resolve the route in order (RR-16 to RR-18, RR-23).

    Returns the car's field, the gear and the timer after moving, and the events.
    """
    car, gear, timer = state["car"], state["gear"], state["timer"]
    finish_row = state["card_starts"][-1]
    events: list[RoundEvent] = []
    for die in state["route"]:
        limit = limit_of(field(state["track"], car["row"], car["lane"]))
        if limit is not None and gear > limit:
            gear = limit
            events.append(
                {"type": "gasfuss", "row": car["row"], "lane": car["lane"], "limit": limit}
            )
            break
        car = Spot(row=die["row"], lane=die["lane"])
        if not lane_fits(die["lane"], die["value"]):
            timer -= 1
            events.append(
                {
                    "type": "loss_of_control",
                    "row": car["row"],
                    "lane": car["lane"],
                    "value": die["value"],
                }
            )
            break
        if car["row"] >= finish_row:
            break
    return car, gear, timer, events


def finish_is_perfect(state: State) -> bool:
    """RR-24: as many dice as the gear, every one in the car's lane with a value that fits it."""
    lane = state["car"]["lane"]
    route = state["route"]
    return len(route) == state["gear"] and all(
        die["lane"] == lane and lane_fits(lane, die["value"]) for die in route
    )


class Outcome(TypedDict, total=False):
    """What a drive changes beyond the car's field and the round (steps III and IV)."""

    card_a: int
    gear: int
    timer: int
    control: int
    no_upshift: bool
    status: Status


def _finish(state: State, timer: int, events: list[RoundEvent]) -> Outcome:
    """RR-24: a perfect finish gives timer +1, an unclean one timer -1; step IV is skipped."""
    perfect = finish_is_perfect(state)
    timer = _cap(timer + (1 if perfect else -1))
    events.append({"type": "finish", "perfect": perfect})
    return {"timer": timer, "status": "finished" if timer > 0 else "timer_out"}


GEAR_CHECK = {3: (1, -1), 2: (-1, 1), 1: (-1, 2)}  # gear -> (timer change, control change)


def _round_end(state: State, car: Spot, gear: int, timer: int, events: list[RoundEvent]) -> Outcome:
    """Step IV: engine damage, then card advance with its gear check (RR-19 to RR-21, RR-26)."""
    damaged = len(state["route"]) < gear
    if damaged:
        gear = 1
        events.append({"type": "engine_damage"})
    card_a, control = state["card_a"], state["control"]
    if card_index(state["card_starts"], car["row"]) == card_a + 1:
        card_a += 1
        events.append({"type": "card_advance"})
        timer_change, control_change = GEAR_CHECK[gear]
        timer = _cap(timer + timer_change)
        control = _cap(control + control_change)
        events.append(
            {"type": "gear_check", "gear": gear, "timer": timer_change, "control": control_change}
        )
    status: Status = "running"
    if timer == 0:
        status = "timer_out"
    elif state["round"] >= MAX_ROUNDS:
        status = "round_limit"
    return {
        "card_a": card_a,
        "gear": gear,
        "timer": timer,
        "control": control,
        "no_upshift": damaged,
        "status": status,
    }


def _move(state: State, action: Action) -> State:
    _require_phase(state, "dice")
    if not roll_used(state):
        raise _refuse("RR-8 (reroll): place a die of the latest roll on the road before driving")
    car, gear, timer, events = _drive_route(state)
    if timer == 0:
        outcome: Outcome = {"timer": 0, "status": "timer_out"}  # RR-22: ends at once
    elif car["row"] >= state["card_starts"][-1]:
        outcome = _finish(state, timer, events)
    else:
        outcome = _round_end(state, car, gear, timer, events)
    # Once the run is over no round follows: `round` stays the last one played.
    over = outcome["status"] != "running"
    return {
        **state,
        "car": car,
        "gear": gear,
        **outcome,
        "round": state["round"] if over else state["round"] + 1,
        "rounds_played": state["rounds_played"] + 1,
        "phase": "shift",
        "shifted": False,
        "rolls": 0,
        "placed_since_roll": False,
        "reserved_this_round": False,
        "pool": [],
        "route": [],
        "last_round": events,
    }


HANDLERS: dict[str, Callable[[State, Action], State]] = {
    "gear": _shift_gear,
    "roll": _roll,
    "reroll": _reroll,
    "place": _place,
    "reserve": _reserve,
    "place_reserve": _place_reserve,
    "modify": _modify,
    "control": _spend_control,
    "move": _move,
}


def _route_targets(state: State) -> list[dict[str, Any]]:
    """Every field the next route die may go on, in a stable order."""
    if len(state["route"]) >= state["gear"]:
        return []
    tip = _route_tip(state)
    lane = LANES.index(tip["lane"])
    candidates = [(tip["row"] + 1, lane), (tip["row"], lane - 1), (tip["row"], lane + 1)]
    return [
        {"row": row, "lane": LANES[index]}
        for row, index in candidates
        if 0 <= index < len(LANES) and target_problem(state, row, LANES[index]) is None
    ]


def _shift_actions(state: State) -> list[Action]:
    actions: list[Action] = []
    if not state["shifted"]:
        for gear in range(1, MAX_GEAR + 1):
            try:
                _shift_gear(state, {"type": "gear", "gear": gear})
            except IllegalAction:
                continue
            actions.append({"type": "gear", "gear": gear})
    return [*actions, {"type": "roll"}]


def _adjust_actions(state: State, kind: str, amount: int) -> list[Action]:
    """Every modify/control action: each placed die, up or down, staying within 1..6."""
    return [
        {"type": kind, "step": step, "delta": delta}
        for step, die in enumerate(state["route"])
        for delta in (1, -1)
        if 1 <= die["value"] + delta * amount <= 6
    ]


def _dice_actions(state: State) -> list[Action]:
    targets = _route_targets(state)
    used = roll_used(state)
    actions: list[Action] = []
    if may_reroll(state):
        actions.append({"type": "reroll"})
    may_reserve = (
        state["reserve"] is None
        and not state["reserved_this_round"]
        and (used or len(state["pool"]) > 1)
    )
    for die in range(len(state["pool"])):
        actions.extend({"type": "place", "die": die, **target} for target in targets)
        if may_reserve:
            actions.append({"type": "reserve", "die": die})
    if state["reserve"] is not None:
        actions.extend({"type": "place_reserve", **target} for target in targets)
        actions.extend(_adjust_actions(state, "modify", state["reserve"]))
    if state["control"] > 0:
        actions.extend(_adjust_actions(state, "control", 1))
    if used:
        actions.append({"type": "move"})
    return actions


def _field_view(kind: str, lane: str) -> FieldView:
    if kind == ABSENT:
        return {"lane": lane, "kind": "absent", "limit": None}
    limit = limit_of(kind)
    return {"lane": lane, "kind": "road" if limit is None else "limit", "limit": limit}


def _card_view(state: State, index: int) -> CardView | None:
    """One drawn card as the browser draws it; None past the end of the deck."""
    starts = state["card_starts"]
    if index >= len(starts) - 1:
        return None
    entry = state["deck"][index]
    rows = range(starts[index], starts[index + 1])
    return {
        "id": entry["id"],
        # start_state takes any sections, so a hand-built position's card may have no name.
        "name": CARDS[entry["id"]]["name"] if entry["id"] in CARDS else entry["id"],
        "rotated": entry["rotated"],
        "first_row": starts[index],
        "sections": [
            {
                "row": row,
                "fields": [
                    _field_view(state["track"][row][i], lane) for i, lane in enumerate(LANES)
                ],
            }
            for row in rows
        ],
    }


def finish_points(state: State) -> int:
    """RR-25: what a finished run scores: 2 × timer + control."""
    points: int = 2 * state["timer"] + state["control"]
    return points


class RallyeRaser(Game[State, View, Memory]):
    """Rallye Raser played solo on a seeded deck and seeded dice."""

    name = "rallye-raser"
    title = "Rallye Raser"
    rules_version = RULES_VERSION
    max_actions = MAX_ROUNDS * MAX_ACTIONS_PER_ROUND
    action_forms = ACTION_FORMS
    turn = Turn("round", ("move",))  # RR-4: a round ends with the drive

    def _new_game(self, seed: str) -> State:
        deck = deal_deck(seed)
        return start_state(seed, deck, [card_sections(entry) for entry in deck])

    def _apply(self, state: State, action: Action) -> State:
        kind, checked = _checked_fields(action)
        return HANDLERS[kind](state, checked)

    def legal_actions(self, state: State) -> list[Action]:
        if self.is_over(state):
            return []
        if state["phase"] == "shift":
            return _shift_actions(state)
        return _dice_actions(state)

    def is_over(self, state: State) -> bool:
        status: str = state["status"]
        return status != "running"

    def score(self, state: State) -> int | None:
        if state["status"] != "finished":
            return None
        return finish_points(state)

    # RR-25: fewer rounds played (the final round counts) win a tie.
    tiebreak_rule = TiebreakRule(
        counts="rounds",
        better="fewer",
        unit="rounds",
        one="in 1 round",
        many="in {n} rounds",
        shared=True,
    )

    def tiebreak(self, state: State) -> int:
        rounds: int = state["rounds_played"]
        return self.tiebreak_rule.of(rounds)

    def reveals(self, state: State, action: Action) -> bool:
        """A roll or a reroll shows new dice (RR-7, RR-8); a drive that reaches card B
        while a card is left to draw shows the next card (RR-20, RR-3). Nothing else
        shows anything new: whether a drive reaches card B follows from the route and
        the cards in view."""
        kind = action.get("type") if isinstance(action, dict) else None
        if kind in ("roll", "reroll"):
            return True
        if kind != "move" or self._cards_left_to_draw(state) == 0:
            return False
        try:
            after = self.apply(state, action)
        except IllegalAction:
            return False
        return bool(after["card_a"] != state["card_a"])

    @staticmethod
    def _cards_left_to_draw(state: State) -> int:
        left: int = len(state["card_starts"]) - 1 - state["card_a"] - 2
        return max(0, left)

    def resample(self, state: State, sample: str) -> State:
        """What the player has not seen drawn from sample: the cards still to draw, their
        order and rotation (among the pool's cards not dealt face up so far, RR-3), and
        every die still to roll (RR-7, which follows the seed)."""
        left = self._cards_left_to_draw(state)
        if left == 0:
            return {**state, "seed": sample}
        shown = state["deck"][: len(state["deck"]) - left]
        unseen = sorted(set(CARDS) - {entry["id"] for entry in shown})
        flips = coin_flips(sample, "resample/rotation", left)
        drawn = shuffled(sample, "resample/deck", unseen)[:left]
        undrawn = [DeckEntry(id=i, rotated=f) for i, f in zip(drawn, flips, strict=True)]
        starts: list[int] = state["card_starts"][: len(shown) + 1]
        track = state["track"][: starts[-1]]
        for entry in undrawn:
            sections = card_sections(entry)
            track = [*track, *sections]
            starts = [*starts, starts[-1] + len(sections)]
        return {
            **state,
            "seed": sample,
            "deck": [*shown, *undrawn],
            "track": track,
            "card_starts": starts,
        }

    def fresh_memory(self) -> Memory:
        # cards_seen: each card dealt face up so far, as the deck lists it, in deck order.
        return {"shifted": False, "placed_since_roll": False, "reserved": False, "cards_seen": []}

    def remember(self, memory: Memory, action: Action | None, view: View) -> None:
        """Three facts of the round are not in the view but the player knows them, having
        made the moves: whether the gear was changed (RR-5), whether a die of the latest
        roll is on the road (RR-8) and whether a die was reserved (RR-12). The player also
        remembers the cards already seen, so the undrawn cards are among the others."""
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
            memory["shifted"] = memory["placed_since_roll"] = memory["reserved"] = False
        seen = [entry["id"] for entry in memory["cards_seen"]]
        for card in (view["card_a"], view["card_b"]):
            if card is not None and card["id"] not in seen:
                memory["cards_seen"].append(DeckEntry(id=card["id"], rotated=card["rotated"]))
                seen.append(card["id"])

    def sample_state(self, view: View, memory: Memory, sample: str) -> State:
        """The cards seen, in the order they were dealt, then as many cards still to draw
        as the view counts: `resample` draws those, and the dice to come, from sample."""
        seen = memory["cards_seen"]
        shown = view["card_a"]
        assert shown is not None, "card A lies on the table until the race ends"
        card_a = next(i for i, entry in enumerate(seen) if entry["id"] == shown["id"])
        # The cards still to draw hold no section until resample deals them.
        undrawn = DeckEntry(id=UNDRAWN, rotated=False)
        deck = [*seen, *[undrawn] * view["cards_remaining"]]
        sections = [card_sections(entry) if entry["id"] in CARDS else [] for entry in deck]
        known: State = {
            **start_state(sample, deck, sections),
            "card_a": card_a,
            "round": view["round"],
            "rounds_played": view["rounds_played"],
            "status": view["status"],
            "phase": view["phase"],
            "gear": view["gear"],
            "timer": view["timer"],
            "control": view["control"],
            "car": view["car"].copy(),
            "no_upshift": view["no_upshift"],
            "shifted": memory["shifted"],
            "rolls": view["rolls"],
            "placed_since_roll": memory["placed_since_roll"],
            "reserved_this_round": memory["reserved"],
            "pool": list(view["pool"]),
            "reserve": view["reserve"],
            "route": [die.copy() for die in view["route"]],
            "last_round": list(view["last_round"]),
        }
        return self.resample(known, sample)

    def stakes(self, state: State, legal: list[Action]) -> Stakes:
        # Imported here: the stakes are worked out with this module's rules.
        from puzzles.rallye_raser.stakes import stakes

        return stakes(self, state, legal)

    def view(self, state: State) -> View:
        card_a = state["card_a"]
        cards_total = len(state["card_starts"]) - 1
        finish_visible = card_a + 2 >= cards_total
        return {
            "round": state["round"],
            "max_rounds": MAX_ROUNDS,
            "status": state["status"],
            "over": self.is_over(state),
            "phase": state["phase"],
            "gear": state["gear"],
            "timer": state["timer"],
            "control": state["control"],
            "no_upshift": state["no_upshift"],
            "car": state["car"],
            "card_a": _card_view(state, card_a),
            "card_b": _card_view(state, card_a + 1),
            "cards_remaining": max(0, cards_total - card_a - 2),
            "finish_rows": (
                list(range(state["card_starts"][-1], state["card_starts"][-1] + FINISH_ROWS))
                if finish_visible
                else None
            ),
            "dice_to_place": max(0, state["gear"] - len(state["route"])),
            "pool": state["pool"],
            "reserve": state["reserve"],
            "rolls": state["rolls"],
            "rerolls_left": MAX_REROLLS + 1 - state["rolls"] if state["rolls"] else MAX_REROLLS,
            "route": state["route"],
            "last_round": state["last_round"],
            "rounds_played": state["rounds_played"],
            "score": self.score(state),
            "tiebreak": self.tiebreak(state),
        }
