"""What each legal Rallye Raser action costs, said before it is played.

The play page shows these beside its controls, so the browser re-derives no rule:
a route die that does not fit its lane (RR-16, RR-17), a speed limit left in a
higher gear (RR-18), reaching card B and its gear check (RR-20, RR-21), the finish
zone (RR-24), and the drive, which is resolved here exactly as the engine will
(its events: loss of control, Gasfuss, engine damage, gear check, finish). Nothing
here reveals what the player may not see: the drive rolls no die and its events
name no card not yet drawn.
"""

from __future__ import annotations

from puzzles.base import Action, Note, Stakes
from puzzles.rallye_raser.engine import GEAR_CHECK, RallyeRaser, finish_points
from puzzles.rallye_raser.states import State
from puzzles.rallye_raser.track import card_index, field, lane_fits, limit_of

LANE_NAMES = {"L": "left", "M": "middle", "R": "right"}


def signed(number: int) -> str:
    return f"+{number}" if number > 0 else f"−{-number}"


def gear_check_text(gear: int, timer: int, control: int) -> str:
    return f"gear check in gear {gear}: timer {signed(timer)}, control {signed(control)}"


def note(kind: str, text: str) -> Note:
    return Note(kind=kind, text=text)


def _placement(state: State, row: int, lane: str, value: int) -> list[Note]:
    """A route die of value on (row, lane): whether it fits, and what its field holds."""
    notes = [
        note("fits", f"a {value} fits the {LANE_NAMES[lane]} lane")
        if lane_fits(lane, value)
        else note("loss_of_control", "loss of control: timer −1")
    ]
    gear = state["gear"]
    limit = limit_of(field(state["track"], row, lane))
    if limit is not None and gear > limit:
        notes.append(
            note(
                "gasfuss",
                f"speed limit {limit}: leaving it in gear {gear} stops the car there"
                f" and drops the gear to {limit}",
            )
        )
    elif limit is not None:
        notes.append(note("limit", f"speed limit {limit}: leave it in gear {limit} or lower"))
    starts = state["card_starts"]
    if row >= starts[-1]:
        notes.append(_finish_note(state, row, lane, value))
    elif card_index(starts, row) == state["card_a"] + 1:
        timer, control = GEAR_CHECK[gear]
        notes.append(
            note(
                "gear_check", f"card B: the cards move on, {gear_check_text(gear, timer, control)}"
            )
        )
    return notes


def _finish_note(state: State, row: int, lane: str, value: int) -> Note:
    """RR-24: whether the route, with this die, makes the finish perfect."""
    car_lane = state["car"]["lane"]
    route = [*((die["lane"], die["value"]) for die in state["route"]), (lane, value)]
    perfect = len(route) == state["gear"] and all(
        die_lane == car_lane and lane_fits(car_lane, die_value) for die_lane, die_value in route
    )
    if perfect:
        return note("finish", "finish: a perfect finish, timer +1")
    return note(
        "finish",
        f"finish, not perfect: timer −1 (a perfect finish needs {state['gear']}"
        f" dice in the {LANE_NAMES[car_lane]} lane, each fitting it)",
    )


def drive_notes(state: State, after: State) -> list[Note]:
    """The drive's outcome from the engine's own resolution of it (after = state + move)."""
    notes = []
    for event in after["last_round"]:
        kind = event["type"]
        if kind == "loss_of_control":
            where = f"row {event['row'] + 1}, {LANE_NAMES[event['lane']]} lane"
            notes.append(note(kind, f"loss of control on {where}: timer −1"))
        elif kind == "gasfuss":
            notes.append(
                note(
                    kind,
                    f"Gasfuss at speed limit {event['limit']}:"
                    f" the car stops there, gear {event['limit']}",
                )
            )
        elif kind == "engine_damage":
            placed = len(state["route"])
            notes.append(
                note(
                    kind,
                    f"engine damage: {placed} of {state['gear']} dice placed,"
                    " gear 1 and no upshift next round",
                )
            )
        elif kind == "gear_check":
            notes.append(
                note(kind, gear_check_text(event["gear"], event["timer"], event["control"]))
            )
        elif kind == "finish":
            notes.append(
                note(
                    kind,
                    "perfect finish: timer +1"
                    if event["perfect"]
                    else "finish, not perfect: timer −1",
                )
            )
    if after["status"] == "timer_out":
        notes.append(note("timer_out", "the timer runs out: the race ends with no score"))
    return notes


def action_notes(engine: RallyeRaser, state: State, action: Action) -> list[Note]:
    """What one legal action costs. A gear change and the drive are played out here on the
    engine, since neither rolls a die or draws a card."""
    kind = action["type"]
    after = engine.apply(state, action) if kind in ("gear", "move") else None
    if kind == "place":
        value = state["pool"][action["die"]]
        return _placement(state, action["row"], action["lane"], value)
    if kind == "place_reserve":
        reserve = state["reserve"]
        assert reserve is not None, "a reserved die is placed only when there is one"
        return _placement(state, action["row"], action["lane"], reserve)
    if kind == "control":
        control = state["control"]
        return [note("control", f"spends 1 control ({control} → {control - 1})")]
    if kind == "modify":
        return [note("reserve", f"spends the reserve ({state['reserve']})")]
    if kind == "gear" and after is not None:
        cost = state["control"] - after["control"]
        if cost:
            return [
                note("control", f"costs {cost} control ({state['control']} → {after['control']})")
            ]
        return []
    if kind == "move" and after is not None:
        return drive_notes(state, after)
    return []


def stakes(engine: RallyeRaser, state: State, legal: list[Action]) -> Stakes:
    """The score if the run finished now (2 × timer + control) and each action's notes."""
    return Stakes(
        score_now=finish_points(state),
        notes=[action_notes(engine, state, action) for action in legal],
    )
