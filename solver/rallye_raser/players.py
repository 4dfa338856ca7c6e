"""Reference players for Rallye Raser, to measure how hard a seed is.

- the greedy player plays, each round, the plan that gets furthest this round,
  seeing this round's dice (the round model of solver.rallye_raser.round);
- the blind greedy player aims as the greedy one does, but without its sight of
  the dice to come: each choice is the one that gets furthest this round on
  average over the dice still to roll (the expert's round search, its round's end
  valued by distance instead of points); what the grades of a player without
  foresight are measured against (bench.calibration);
- the heuristic player decides action by action like a sensible player without
  foresight (see below).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from puzzles.base import Action
from puzzles.playout import play_out
from puzzles.rallye_raser.engine import MAX_GEAR, MAX_ROUNDS, TRACK_MAX, RallyeRaser, target_problem
from puzzles.rallye_raser.states import RouteDie, State
from puzzles.rallye_raser.track import field as field_kind
from puzzles.rallye_raser.track import limit_of
from solver.rallye_raser.lookahead import (
    UNFINISHED,
    Ahead,
    Leaf,
    LookaheadPlayer,
    Outlook,
    Parts,
    outlook_of,
)
from solver.rallye_raser.round import Track, control_cost, nearest_value, probe_die
from solver.rallye_raser.solver import Arc, RoundPlayer, control_to, node_key, round_arcs

GAME = RallyeRaser()


# ----- greedy -------------------------------------------------------------------------------
def _greedy_value(arc: Arc) -> tuple[int, int | None, int]:
    """Finish if possible (best score), else get furthest, then keep the most resources."""
    if arc.head is None:
        return (1, arc.score, 0)
    _, row, _, _, _, _, timer, control = arc.head
    return (0, row, 2 * timer + control)


class GreedyPlayer:
    """Plans each round at its start, with the round's dice, and plays the plan out."""

    def __init__(self, seed: str) -> None:
        self.track = Track(seed, GAME.new_game(seed))
        self.planned: list[Action] = []

    def choose(self, state: State, options: list[Action]) -> Action:
        if not self.planned:
            self.planned = self._round_plan(state)
        return self.planned.pop(0)

    def _round_plan(self, state: State) -> list[Action]:
        key = node_key(state)
        arcs = list(round_arcs(self.track, key[:-2], [key[-2:]]))
        player = RoundPlayer(state)
        if arcs:
            player.play(max(arcs, key=_greedy_value).how)
        else:
            player.do({"type": "roll"}, {"type": "move"})  # every plan ends the run unfinished
        return player.actions


def greedy_actions(seed: str) -> list[Action]:
    """Each round, the plan that gets furthest this round (seeing this round's dice)."""
    return play_out(GAME, GAME.new_game(seed), GreedyPlayer(seed).choose)[1]


# ----- blind greedy ---------------------------------------------------------------------------
# Two rounds of the race are worth more than all the dials' points, which only break ties.
DIALS_WEIGHT = 0.01


class DistanceOutlook(Outlook):
    """A round's end valued as the greedy player values it: a finish above everything
    (its score deciding between finishes), then the fewest rounds still to drive
    (the rows left, the gear and any damage, RR-5, RR-6), then the dials."""

    def value(self, ahead: Ahead) -> tuple[float, Parts]:
        parts = super().value(ahead)[1]
        if ahead == UNFINISHED:
            return -math.inf, parts
        if ahead.over is not None:
            return MAX_ROUNDS + ahead.over, parts
        return -ahead.rounds + DIALS_WEIGHT * (2 * ahead.timer + ahead.control), parts


def distance_outlook(state: State, leaf: Leaf) -> Outlook:
    return DistanceOutlook(**vars(outlook_of(state, leaf)))


def blind_greedy_actions(seed: str) -> list[Action]:
    """Each choice, what gets furthest this round on average over the dice to come."""
    player = LookaheadPlayer(outlook=distance_outlook)
    return play_out(GAME, GAME.new_game(seed), player.choose)[1]


# ----- heuristic ----------------------------------------------------------------------------
# A heuristic player sees only the view: the pool in front of it, not future rolls.
# Under rules RR-19 and RR-21 waiting costs nothing but rounds: the dials change
# only by a gear check on a card advance, a loss of control or control spent. So
# it picks the gear of the check when the cards may advance (gear 3 raises the
# timer, gear 1 refills control, gear 2 only loses), places dice that fit, rerolls
# for them, and rather ends a round short (engine damage costs no points) than
# loses control.
PAID_SHIFT_CONTROL = 4  # pay for a two-step shift only with this much control


def limit_here(state: State, spot: Mapping[str, Any]) -> int | None:
    """The speed limit of a field (the car's, a die's, an action's), None for road."""
    return limit_of(field_kind(state["track"], spot["row"], spot["lane"]))


def _rows_to_next_card(state: State) -> int:
    starts: list[int] = state["card_starts"]
    card_a: int = state["card_a"]
    row: int = state["car"]["row"]
    return starts[min(card_a + 1, len(starts) - 1)] - row


def _check_gear(state: State) -> int:
    """The gear to be in when the cards advance (RR-21): gear 3 gains a timer point
    (worth two) for a control point, so it is best unless the timer is full; then
    gear 1 refills control without loss when control is 4 or less."""
    if state["timer"] == TRACK_MAX and state["control"] <= TRACK_MAX - 2:
        return 1
    return 3


def _hurried(state: State) -> bool:
    """Whether the rounds left (RR-26) call for full speed: fewer than two rows
    left per round would not reach the finish."""
    rows_left: int = state["card_starts"][-1] - state["car"]["row"]
    round_number: int = state["round"]
    return (MAX_ROUNDS - round_number + 1) * 2 < rows_left


def heuristic_gear(state: State) -> Action | None:
    """Gear 3, or the check gear when the cards may advance this round; never above
    a limit the car sits on; a two-step shift only when control is plentiful."""
    to_card = _rows_to_next_card(state)
    wanted = 3
    if to_card <= MAX_GEAR and _check_gear(state) == 1 and not _hurried(state):
        wanted = 1 if to_card == 1 else to_card - 1  # up to card B, then cross in gear 1
    limit = limit_here(state, state["car"])
    if limit is not None:
        wanted = min(wanted, limit)
    if state["no_upshift"]:
        wanted = min(wanted, state["gear"])
    if abs(wanted - state["gear"]) > 1 and state["control"] < PAID_SHIFT_CONTROL:
        wanted = state["gear"] + (1 if wanted > state["gear"] else -1)
    if wanted == state["gear"]:
        return None
    return {"type": "gear", "gear": wanted}


def room_for(state: State, route: list[RouteDie], steps: int) -> bool:
    """Whether the route can still grow by steps fields (a dead end costs engine damage)."""
    if steps == 0:
        return True
    probe: State = {**state, "route": route}
    tip = route[-1] if route else state["car"]
    spots = [(tip["row"] + 1, tip["lane"]), *((tip["row"], side) for side in "LMR")]
    return any(
        target_problem(probe, row, lane) is None
        and room_for(state, [*route, probe_die(row, lane)], steps - 1)
        for row, lane in spots
    )


def _place_value(state: State, action: Action) -> tuple[bool, bool, bool, bool, int]:
    """Prefer a field from which the route can be completed and that the car may
    leave in this gear, then a die that fits or that a control point makes fit
    while control lasts, then going ahead, then the smaller misfit."""
    value = state["pool"][action["die"]]
    limit = limit_here(state, action)
    left = state["gear"] - len(state["route"]) - 1
    leavable = limit is None or limit >= state["gear"] or left == 0
    route = [*state["route"], probe_die(action["row"], action["lane"])]
    misfit = control_cost(value, action["lane"], True)
    good = misfit == 0 or (misfit == 1 and _misfit_control(state) < state["control"])
    ahead = action["row"] > (state["route"][-1] if state["route"] else state["car"])["row"]
    return (room_for(state, route, left), leavable, good, ahead, -misfit)


def _misfit_control(state: State) -> int:
    """The control that would make every placed die fit its lane."""
    return sum(control_cost(die["value"], die["lane"], True) for die in state["route"])


def _fix(state: State) -> Action | None:
    """A control point toward the lane of a placed die that misses it, when affordable."""
    for index, die in enumerate(state["route"]):
        misfit = control_cost(die["value"], die["lane"], True)
        if 0 < misfit <= state["control"]:
            target = nearest_value(die["value"], die["lane"], True)
            return control_to(index, die["value"], target)[0]
    return None


def _heuristic_dice(state: State, options: list[Action]) -> Action:
    """Place the best die while it fits (or a control point repairs it) or the rules
    demand one (RR-8); after a miss that control cannot repair, fill the route (the
    rest is not driven, and a full route avoids engine damage); otherwise reroll;
    otherwise fix with control and drive, short of the gear if need be."""
    places = [action for action in options if action["type"] == "place"]
    best = max(places, key=lambda action: _place_value(state, action)) if places else None
    forced = {"type": "move"} not in options
    lost = _misfit_control(state) > state["control"]
    if best is not None:
        if forced or lost or _place_value(state, best)[2]:
            return best
        if {"type": "reroll"} in options:
            return {"type": "reroll"}
    return _fix(state) or {"type": "move"}


def heuristic_step(state: State, options: list[Action]) -> Action:
    """The heuristic player's pick among the legal actions of state."""
    if state["phase"] == "shift":
        shift = None if state["shifted"] else heuristic_gear(state)
        return shift or {"type": "roll"}
    return _heuristic_dice(state, options)


def heuristic_actions(seed: str) -> list[Action]:
    """A sensible player without foresight: gear 3 while control lasts, fitting dice
    placed first, a reroll when nothing fits, control to fix a miss, a short route
    (engine damage) rather than a loss of control."""
    return play_out(GAME, GAME.new_game(seed), heuristic_step)[1]
