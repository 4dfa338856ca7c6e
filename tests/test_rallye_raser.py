"""Rallye Raser rules, one or more tests per rule of docs/rules/rallye-raser.md."""

from __future__ import annotations

import json
import re
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzles import IllegalAction, get_game
from puzzles.base import AnyGame
from puzzles.playout import random_playout, seeded_chooser
from puzzles.rallye_raser.engine import (
    GEAR_CHECK,
    MAX_ACTIONS_PER_ROUND,
    MAX_ROUNDS,
    RallyeRaser,
    start_state,
)
from puzzles.rallye_raser.states import DeckEntry
from puzzles.rallye_raser.track import (
    CARDS,
    DEALT_CARDS,
    LIMITS,
    card_problems,
    card_sections,
    dead_ends,
    deal_deck,
    deck_problems,
    rotated,
)
from puzzles.rng import Stream, dice
from solver.rallye_raser.players import heuristic_actions

# Hand-built positions are plain JSON objects: the engine is driven as the service drives
# it, through the interface every game shares.
GAME: AnyGame = RallyeRaser()
OPEN = ["...", "...", "...", "..."]
MOVE = {"type": "move"}
ROLL = {"type": "roll"}


def track_state(*cards: list[str], **changes) -> dict:
    """A hand-built start on a track of the given cards (no card-data checks)."""
    deck = [DeckEntry(id=f"T{i}", rotated=False) for i in range(len(cards))]
    return {**start_state("hand", deck, list(cards)), **changes}


def rolled(state: dict, pool: list[int], **changes) -> dict:
    """The state after a roll that showed pool (hand-chosen dice)."""
    rolled_now = {"phase": "dice", "rolls": 1, "placed_since_roll": False, "pool": pool}
    return {**state, **rolled_now, **changes}


def place(die: int, row: int, lane: str) -> dict:
    return {"type": "place", "die": die, "row": row, "lane": lane}


def play(state: dict, *actions: dict) -> dict:
    for action in actions:
        state = GAME.apply(state, action)
    return state


def refused(state: dict, action: dict, rule: str) -> None:
    with pytest.raises(IllegalAction) as error:
        GAME.apply(state, action)
    assert rule in error.value.reason


def test_registered_under_its_public_name():
    assert isinstance(get_game("rallye-raser"), RallyeRaser)


def test_rr1_start_values():
    state = GAME.new_game("start")
    assert (state["timer"], state["control"], state["gear"]) == (6, 6, 1)
    assert state["car"] == {"row": 0, "lane": "M"}
    assert state["round"] == 1 and state["phase"] == "shift"


def test_rr1_the_car_may_start_on_a_speed_limit_field():
    """quality-3 deals the Chicane unrotated as card A: the car starts on its limit 1
    in lane M, in gear 1. A shift to gear 2 before the first roll makes it leave
    the limit too fast: a Gasfuss on the start field (RR-18)."""
    state = GAME.new_game("quality-3")
    assert state["deck"][0] == {"id": "RR12", "rotated": False}
    start_field = GAME.view(state)["card_a"]["sections"][0]["fields"][1]
    assert start_field == {"lane": "M", "kind": "limit", "limit": 1}
    assert state["car"] == {"row": 0, "lane": "M"} and state["gear"] == 1
    state = play(state, {"type": "gear", "gear": 2}, ROLL, place(0, 1, "M"), place(0, 2, "M"))
    state = play(state, MOVE)
    assert state["last_round"][0] == {"type": "gasfuss", "row": 0, "lane": "M", "limit": 1}
    assert state["car"] == {"row": 0, "lane": "M"} and state["gear"] == 1


def test_rr2_card_data_meets_every_constraint():
    assert len(CARDS) == 18
    for card in CARDS.values():
        assert card_problems(card["sections"]) == [], card["id"]
        assert card_problems(rotated(card["sections"])) == [], card["id"]


@pytest.mark.parametrize(
    ("sections", "problem"),
    [
        (["...", "x2.", "..."], "no speed limit in lane M of a two-lane section"),
        (["...", ".x.", "..."], "lane M exists in every section"),
        (["...", "x.x", "..."], "every section has 2 or 3 lanes"),
        (["...", "..", "..."], "a section is three fields of '.', '1', '2' or 'x'"),
        (["..."] * 5, "a card has 1 to 4 sections"),
    ],
)
def test_rr2_card_constraints_are_checked(sections, problem):
    assert problem in card_problems(sections)


def test_rr2_no_order_or_rotation_of_the_cards_traps_the_car():
    assert deck_problems([card["sections"] for card in CARDS.values()]) == []
    # A limit in lane L with nothing ahead and a limit beside it (RR-11) is a trap.
    trap = ["...", "11.", "x.."]
    assert dead_ends(trap) == [(1, "L")]
    assert deck_problems([trap, ["..."] * 3]) != []


def test_rr2_speed_limits_sit_next_to_each_other_somewhere():
    """Some card carries two limits side by side or one ahead of another, so that the
    Focus rule (RR-11) matters."""

    def adjacent_limits(sections: list[str]) -> int:
        pairs = 0
        for row, section in enumerate(sections):
            for lane, kind in enumerate(section):
                if kind in LIMITS:
                    pairs += lane < 2 and section[lane + 1] in LIMITS
                    pairs += row + 1 < len(sections) and sections[row + 1][lane] in LIMITS
        return pairs

    assert sum(adjacent_limits(card["sections"]) for card in CARDS.values()) >= 2


def test_rr3_deck_order_and_rotation_come_from_the_seed():
    deck = deal_deck("deck-seed")
    ids = [entry["id"] for entry in deck]
    assert len(ids) == DEALT_CARDS == 9 and len(set(ids)) == 9 and set(ids) <= set(CARDS)
    assert deal_deck("deck-seed") == deck
    assert len({json.dumps(deal_deck(f"s{i}")) for i in range(20)}) == 20
    state = GAME.new_game("deck-seed")
    rows = [row for entry in deck for row in card_sections(entry)]
    assert state["track"] == rows


def test_rr3_seeds_deal_different_cards_and_tracks_of_different_lengths():
    """Every card of the pool is dealt on some seed, and the track's length varies."""
    decks = [deal_deck(f"pool-{i}") for i in range(200)]
    assert {entry["id"] for deck in decks for entry in deck} == set(CARDS)
    lengths = {sum(len(card_sections(entry)) for entry in deck) for deck in decks}
    assert min(lengths) < 25 and max(lengths) > 30


def test_rr3_rotation_reverses_sections_and_swaps_l_and_r():
    assert rotated(["..x", "1.x", "..."]) == ["...", "x.1", "x.."]


def test_rr3_view_shows_cards_a_and_b_only():
    state = GAME.new_game("view-seed")
    view = GAME.view(state)
    shown = {view["card_a"]["id"], view["card_b"]["id"]}
    hidden = {entry["id"] for entry in state["deck"][2:]}
    assert shown == {entry["id"] for entry in state["deck"][:2]}
    assert view["cards_remaining"] == 7 and view["finish_rows"] is None
    assert not any(card_id in json.dumps(view) for card_id in hidden)


def test_rr4_dice_actions_need_the_roll_first():
    state = track_state(OPEN, OPEN)
    refused(state, place(0, 1, "M"), "RR-7")
    refused(state, MOVE, "RR-7")
    assert GAME.legal_actions(state)[-1] == ROLL


def test_rr4_once_the_run_is_over_the_round_is_the_last_one_played():
    """The view's round counts up while the run goes on; after the last round (a
    finish, the timer run out, or the RR-26 bound) it stays on that round, so it
    equals the rounds played and never exceeds max_rounds."""
    running = play(rolled(track_state(OPEN, OPEN), [3]), place(0, 1, "M"), MOVE)
    assert (GAME.view(running)["round"], running["rounds_played"]) == (2, 1)
    bound = track_state(OPEN, OPEN, round=MAX_ROUNDS, rounds_played=MAX_ROUNDS - 1)
    timer_out = track_state(OPEN, OPEN, round=12, rounds_played=11, timer=1)
    finish = last_row_state(1, round=7, rounds_played=6)
    for start, dice_shown, status in (
        (bound, [3], "round_limit"),
        (timer_out, [6], "timer_out"),
        (finish, [3], "finished"),
    ):
        row = start["car"]["row"] + 1
        view = GAME.view(play(rolled(start, dice_shown), place(0, row, "M"), MOVE))
        assert view["status"] == status
        assert view["round"] == view["rounds_played"] == start["round"] <= view["max_rounds"]


def test_rr5_one_gear_step_is_free():
    state = play(track_state(OPEN, OPEN), {"type": "gear", "gear": 2})
    assert (state["gear"], state["control"]) == (2, 6)


def test_rr5_each_further_step_costs_one_control():
    state = play(track_state(OPEN, OPEN), {"type": "gear", "gear": 3})
    assert (state["gear"], state["control"]) == (3, 5)
    broke = track_state(OPEN, OPEN, control=0)
    refused(broke, {"type": "gear", "gear": 3}, "RR-5")
    assert {"type": "gear", "gear": 3} not in GAME.legal_actions(broke)


def test_rr5_gear_changes_once_and_only_before_the_roll():
    state = play(track_state(OPEN, OPEN), {"type": "gear", "gear": 2})
    refused(state, {"type": "gear", "gear": 3}, "RR-5")
    refused(play(track_state(OPEN, OPEN), ROLL), {"type": "gear", "gear": 2}, "RR-5")


def test_rr6_no_upshift_after_engine_damage():
    state = rolled(track_state(OPEN, OPEN, gear=2), [3, 3])
    state = play(state, place(0, 1, "M"), MOVE)  # one die for gear 2: engine damage
    assert state["gear"] == 1 and state["no_upshift"]
    refused(state, {"type": "gear", "gear": 2}, "RR-6")
    state = play(state, ROLL, place(0, 2, "M"), MOVE)
    assert not state["no_upshift"]


def test_rr7_dice_are_fixed_by_position():
    state = play(track_state(OPEN, OPEN), ROLL)
    assert state["pool"] == list(dice("hand", 1, 0))
    with_reserve = play(track_state(OPEN, OPEN, reserve=5), ROLL)
    assert with_reserve["pool"] == list(dice("hand", 1, 0))[:2]


def test_rr8_reroll_needs_a_placed_die_and_at_most_two():
    state = play(track_state(OPEN, OPEN, gear=3), ROLL)
    refused(state, {"type": "reroll"}, "RR-8")
    state = play(state, place(0, 1, "M"), {"type": "reroll"})
    assert state["pool"] == list(dice("hand", 1, 1))[:2]
    state = play(state, place(0, 2, "M"), {"type": "reroll"})
    assert state["pool"] == list(dice("hand", 1, 2))[:1]
    state = play(state, place(0, 3, "M"))
    refused(state, {"type": "reroll"}, "RR-8")


def test_rr8_reserving_is_not_placing():
    state = play(track_state(OPEN, OPEN, gear=3), ROLL, {"type": "reserve", "die": 0})
    refused(state, {"type": "reroll"}, "RR-8 (reroll): place a die of the latest roll")
    refused(state, MOVE, "RR-8")
    assert {"type": "reroll"} not in GAME.legal_actions(state)
    assert MOVE not in GAME.legal_actions(state)


def test_rr8_every_roll_needs_a_placed_die_before_driving():
    first = play(track_state(OPEN, OPEN, gear=2), ROLL)
    refused(first, MOVE, "RR-8 (reroll): place a die of the latest roll on the road before driving")
    rerolled = play(first, place(0, 1, "M"), {"type": "reroll"})
    refused(rerolled, MOVE, "RR-8")
    state = play(rerolled, place(0, 2, "M"), MOVE)
    assert state["car"]["row"] == 2


def boxed_in() -> dict:
    """Rolled, with no field for a die: lane L ends ahead of the car on limit (0, L),
    and lane M beside it is a limit it may not enter (RR-11)."""
    boxed = rolled(track_state(["11."], ["x1.", "..."], gear=2), [3, 3])
    return {**boxed, "car": {"row": 0, "lane": "L"}}


def test_rr8_driving_needs_no_placement_when_none_is_possible():
    """A full route, or one with no field left to extend it, lets the player drive
    without placing a die of the latest roll (the duty to place lapses for driving)."""
    full = play(track_state(OPEN, OPEN, gear=1), ROLL, place(0, 1, "M"), {"type": "reroll"})
    state = play(full, {"type": "reserve", "die": 0}, MOVE)
    assert state["car"] == {"row": 1, "lane": "M"} and state["reserve"] is not None
    boxed = boxed_in()
    assert GAME.legal_actions(boxed)[-1] == MOVE
    assert play(boxed, MOVE)["car"] == {"row": 0, "lane": "L"}


def test_rr8_a_roll_none_of_whose_dice_can_be_placed_opens_no_reroll():
    """rr-4: a reroll needs a die of the latest roll on the road, always. Seed
    kestrel-41, round 1 in gear 1: a die of the roll fills the route, the reroll
    places nothing (the route is full), so no second reroll may hunt for a reserve
    value; reserving one of the dice in front of the player and driving stay open."""
    state = play(GAME.new_game("kestrel-41"), ROLL)
    assert state["gear"] == 1 and state["pool"] == [6, 4, 2]
    state = play(state, place(1, 1, "M"), {"type": "reroll"})
    assert state["pool"] == [4, 3] and state["rolls"] == 2
    assert {"type": "reroll"} not in GAME.legal_actions(state)
    refused(state, {"type": "reroll"}, "RR-8 (reroll): place a die of the latest roll")
    assert {"type": "reserve", "die": 0} in GAME.legal_actions(state)
    assert play(state, {"type": "reserve", "die": 0}, MOVE)["reserve"] == 4
    boxed = boxed_in()
    assert {"type": "reroll"} not in GAME.legal_actions(boxed)
    refused(boxed, {"type": "reroll"}, "none can be placed now: drive on")


def test_rr8_the_last_die_of_a_roll_is_not_reserved_before_one_is_placed():
    state = play(rolled(track_state(OPEN, OPEN, gear=3), [3, 3, 3]), place(0, 1, "M"))
    state = play(state, place(0, 2, "M"), {"type": "reroll"})
    assert len(state["pool"]) == 1
    refused(state, {"type": "reserve", "die": 0}, "RR-8")


def test_rr9_route_holds_as_many_dice_as_the_gear():
    state = play(rolled(track_state(OPEN, OPEN), [3, 4, 3]), place(0, 1, "M"))
    refused(state, place(0, 2, "M"), "RR-9")


@pytest.mark.parametrize(
    ("row", "lane"),
    [(0, "M"), (2, "M"), (1, "L"), (1, "R"), (-1, "M")],
    ids=["own-field", "two-ahead", "diagonal-left", "diagonal-right", "backwards"],
)
def test_rr10_route_steps_are_ahead_or_beside(row, lane):
    refused(rolled(track_state(OPEN, OPEN), [3, 3, 3]), place(0, row, lane), "RR-10")


def test_rr10_route_may_run_onto_the_next_card_but_not_beyond_card_b():
    state = rolled(track_state(["..."], ["..."], ["..."], gear=3), [3, 3, 3])
    state = play(state, place(0, 1, "M"))
    assert state["route"][-1]["row"] == 1
    refused(state, place(0, 2, "M"), "RR-10 (route): that road card is not drawn yet")


def test_rr10_absent_and_used_fields_are_refused():
    state = rolled(track_state(["...", "x.x", "..."], gear=3), [1, 3, 5])
    refused(state, place(0, 0, "M"), "RR-10")
    state = play(state, place(0, 0, "L"))
    refused(state, place(0, 0, "M"), "already used")  # the car's own field
    state = rolled(track_state(["...", "x.x"], OPEN, gear=3), [3, 3, 3])
    state = play(state, place(0, 1, "M"))
    refused(state, place(0, 1, "L"), "absent")


def test_rr10_beside_steps_in_the_same_section():
    state = rolled(track_state(OPEN, OPEN, gear=3), [1, 1, 5])
    state = play(state, place(0, 0, "L"), place(0, 1, "L"))
    assert [(d["row"], d["lane"]) for d in state["route"]] == [(0, "L"), (1, "L")]


def test_rr11_focus_forbids_limit_to_limit():
    state = rolled(track_state(["...", "12.", "..."], gear=2), [3, 1])
    state = play(state, place(0, 1, "M"))
    refused(state, place(0, 1, "L"), "RR-11")
    on_limit = rolled(track_state([".1.", ".2."], gear=1), [3])
    refused(on_limit, place(0, 1, "M"), "RR-11")


def test_rr12_one_reservation_per_round():
    state = rolled(track_state(OPEN, OPEN, gear=1), [1, 3, 5])
    state = play(state, {"type": "reserve", "die": 0}, place(0, 1, "M"))
    state = play(state, {"type": "modify", "step": 0, "delta": 1})
    assert state["reserve"] is None and state["route"][0]["value"] == 4
    refused(state, {"type": "reserve", "die": 0}, "RR-12 (reserve): one reservation per round")


def test_rr12_a_carried_reserve_spent_may_be_followed_by_one_new():
    state = rolled(track_state(OPEN, OPEN, gear=1), [4, 2, 5], reserve=1)
    state = play(state, place(0, 1, "M"), {"type": "modify", "step": 0, "delta": 1})
    state = play(state, {"type": "reserve", "die": 0})
    assert state["reserve"] == 2
    state = play(state, {"type": "modify", "step": 0, "delta": -1})
    assert state["route"][0]["value"] == 3
    refused(state, {"type": "reserve", "die": 0}, "RR-12")


def test_rr12_one_reserve_kept_across_rounds_and_not_rolled():
    state = rolled(track_state(OPEN, OPEN, gear=1), [6, 3, 2])
    state = play(state, {"type": "reserve", "die": 0})
    assert state["reserve"] == 6 and state["pool"] == [3, 2]
    refused(state, {"type": "reserve", "die": 0}, "RR-12")
    state = play(state, place(0, 1, "M"), MOVE)
    assert state["reserve"] == 6
    state = play(state, ROLL)
    assert state["reserve"] == 6 and len(state["pool"]) == 2


def test_rr13_reserve_placed_as_route_die():
    state = rolled(track_state(OPEN, OPEN, gear=1), [2], reserve=4)
    state = play(state, {"type": "place_reserve", "row": 1, "lane": "M"})
    assert state["reserve"] is None and state["route"][0]["value"] == 4
    state = play(state, MOVE, ROLL)
    assert state["car"] == {"row": 1, "lane": "M"} and len(state["pool"]) == 3


def test_rr14_reserve_spent_changes_a_placed_die_by_its_value():
    state = rolled(track_state(OPEN, OPEN, gear=1), [1], reserve=3)
    state = play(state, place(0, 1, "M"))
    refused(state, {"type": "modify", "step": 0, "delta": -1}, "RR-14")  # 1 - 3 < 1
    state = play(state, {"type": "modify", "step": 0, "delta": 1})
    assert state["route"][0]["value"] == 4 and state["reserve"] is None
    refused(state, {"type": "modify", "step": 0, "delta": 1}, "RR-12")


def test_rr15_control_changes_a_placed_die_by_one():
    state = play(rolled(track_state(OPEN, OPEN, gear=1), [6]), place(0, 1, "M"))
    refused(state, {"type": "control", "step": 0, "delta": 1}, "RR-15")
    state = play(state, {"type": "control", "step": 0, "delta": -1})
    assert state["route"][0]["value"] == 5 and state["control"] == 5
    broke = {**state, "control": 0}
    refused(broke, {"type": "control", "step": 0, "delta": -1}, "RR-15")


def test_rr16_dice_matching_their_lanes_move_the_car_along_the_route():
    state = rolled(track_state(OPEN, OPEN, gear=3), [4, 2, 1])
    state = play(state, place(0, 1, "M"), place(1, 1, "L"), place(0, 2, "L"), MOVE)
    assert state["car"] == {"row": 2, "lane": "L"}
    assert (state["timer"], state["control"], state["round"]) == (6, 6, 2)


def test_rr17_loss_of_control_stops_on_the_wrong_field():
    state = rolled(track_state(OPEN, OPEN, gear=3, timer=4), [3, 6, 3])
    state = play(state, place(0, 1, "M"), place(0, 2, "M"), place(0, 3, "M"), MOVE)
    assert state["car"] == {"row": 2, "lane": "M"}
    assert state["timer"] == 4 - 1  # still on card A: no gear check
    assert state["last_round"][0] == {"type": "loss_of_control", "row": 2, "lane": "M", "value": 6}


def test_rr18_gasfuss_keeps_the_car_on_the_limit_and_drops_the_gear():
    start = track_state(["...", ".1.", "..."], OPEN, gear=2)
    state = play(rolled(start, [3, 3]), place(0, 1, "M"), place(0, 2, "M"), MOVE)
    assert state["car"] == {"row": 1, "lane": "M"}
    assert state["gear"] == 1 and state["last_round"][0]["type"] == "gasfuss"
    assert state["control"] == 6  # gear check in gear 1: control +2, capped at 6


def test_rr18_leaving_a_limit_within_it_is_fine():
    start = track_state(["...", ".2.", "..."], OPEN, gear=2)
    state = play(rolled(start, [3, 3]), place(0, 1, "M"), place(0, 2, "M"), MOVE)
    assert state["car"] == {"row": 2, "lane": "M"} and state["gear"] == 2


def test_rr19_engine_damage_when_fewer_dice_than_the_gear():
    state = rolled(track_state(OPEN, OPEN, gear=3, control=3), [3, 3, 3])
    state = play(state, place(0, 1, "M"), place(0, 2, "M"), MOVE)
    assert state["car"] == {"row": 2, "lane": "M"}
    assert state["gear"] == 1 and state["no_upshift"]
    assert (state["timer"], state["control"]) == (6, 3)  # no card advance, no gear check


def test_rr19_after_a_gasfuss_the_dice_are_compared_with_the_limit():
    """Gear 3, two dice, a Gasfuss on a limit 2: two dice match the gear now shown."""
    start = rolled(track_state(["...", ".2.", "..."], OPEN, gear=3), [3, 3, 3])
    state = play(start, place(0, 1, "M"), place(0, 2, "M"), MOVE)
    assert state["last_round"][0]["type"] == "gasfuss"
    assert (state["gear"], state["no_upshift"]) == (2, False)
    assert all(event["type"] != "engine_damage" for event in state["last_round"])
    one_die = play(rolled(track_state(["...", "x.1", "..."], OPEN, gear=3), [3]), place(0, 1, "M"))
    assert play(one_die, MOVE)["gear"] == 1  # one die for gear 3, no Gasfuss: damage


def test_rr20_card_advance_when_the_car_ends_on_card_b():
    state = rolled(track_state(["..."] * 2, OPEN, OPEN, gear=2), [3, 3])
    state = play(state, place(0, 1, "M"), place(0, 2, "M"), MOVE)
    assert state["card_a"] == 1
    view = GAME.view(state)
    assert view["card_a"]["first_row"] == 2 and view["card_b"]["first_row"] == 6
    assert view["cards_remaining"] == 0 and view["finish_rows"] == [10, 11, 12]


def test_rr20_no_advance_while_on_card_a():
    state = play(rolled(track_state(OPEN, OPEN), [3]), place(0, 1, "M"), MOVE)
    assert state["card_a"] == 0


@pytest.mark.parametrize(
    ("gear", "before", "after"),
    [(3, (4, 4), (5, 3)), (2, (4, 4), (3, 5)), (1, (4, 4), (3, 6)), (3, (6, 0), (6, 0))],
)
def test_rr21_gear_check_on_card_advance(gear, before, after):
    """The car ends on card B (row 3): the cards advance and the gear check runs."""
    start = track_state(["..."] * 3, OPEN, OPEN, gear=gear, timer=before[0], control=before[1])
    start = {**start, "car": {"row": 3 - gear, "lane": "M"}}
    dice_rows = range(4 - gear, 4)
    state = play(rolled(start, [3] * gear), *[place(0, r, "M") for r in dice_rows], MOVE)
    assert state["card_a"] == 1
    assert (state["timer"], state["control"]) == after
    timer_change, control_change = GEAR_CHECK[gear]
    assert state["last_round"][-1] == {
        "type": "gear_check",
        "gear": gear,
        "timer": timer_change,
        "control": control_change,
    }


def test_rr21_no_gear_check_without_a_card_advance():
    start = track_state(OPEN, OPEN, gear=3, timer=4, control=4)
    state = play(rolled(start, [3, 3, 3]), *[place(0, r, "M") for r in (1, 2, 3)], MOVE)
    assert state["card_a"] == 0 and (state["timer"], state["control"]) == (4, 4)
    assert [event["type"] for event in state["last_round"]] == []


def test_rr21_advancing_onto_the_last_card_checks_and_then_no_more():
    start = track_state(["..."], ["...", "...", "..."], gear=1, timer=4, control=4)
    state = play(rolled(start, [3]), place(0, 1, "M"), MOVE)  # onto the last card
    assert state["card_a"] == 1 and (state["timer"], state["control"]) == (3, 6)
    assert GAME.view(state)["card_b"] is None
    state = play(state, ROLL, place(0, 2, "M"), MOVE)  # along the last card
    assert (state["timer"], state["control"]) == (3, 6) and state["status"] == "running"


def test_rr21_crossing_a_short_last_card_into_the_finish_meets_no_check():
    """Card B is the last card, one section long: from the last row of card A a
    route of two dice crosses it into the finish zone. The finish skips step IV
    (RR-24), so the cards never advance onto the last card and no gear check runs:
    such a run meets seven checks, not eight."""
    start = track_state(["...", "..."], ["..."], gear=2, timer=5, control=4)
    start = {**start, "car": {"row": 1, "lane": "M"}}
    assert GAME.view(start)["finish_rows"] == [3, 4, 5]
    state = play(rolled(start, [3, 4]), place(0, 2, "M"), place(0, 3, "M"), MOVE)
    assert state["status"] == "finished" and state["card_a"] == 0
    assert state["last_round"] == [{"type": "finish", "perfect": True}]
    assert (state["timer"], state["control"]) == (6, 4)


def test_rr21_a_finished_run_meets_eight_checks_or_seven_from_card_a():
    """The heuristic player's runs: on checks-0 the car reaches the last card, so the
    cards advance eight times; on checks-5 the last card is one section long and the
    car crosses it into the finish from card A, so they advance seven times."""
    for seed, checks, last_card_a in (("checks-0", 8, 8), ("checks-5", 7, 7)):
        state, met = GAME.new_game(seed), 0
        for action in heuristic_actions(seed):
            state = GAME.apply(state, action)
            if action == MOVE:
                met += any(event["type"] == "gear_check" for event in state["last_round"])
        assert state["status"] == "finished" and (met, state["card_a"]) == (checks, last_card_a)
    assert len(card_sections(GAME.new_game("checks-5")["deck"][-1])) == 1


def test_rr22_timer_zero_ends_the_game_unfinished():
    state = rolled(track_state(OPEN, OPEN, gear=3, timer=1), [1, 3, 3])
    state = play(state, place(0, 1, "M"), place(0, 2, "M"), place(0, 3, "M"), MOVE)
    assert state["timer"] == 0 and state["status"] == "timer_out"
    assert GAME.is_over(state) and GAME.score(state) is None
    assert GAME.legal_actions(state) == []


def test_rr22_gear_check_can_empty_the_timer():
    state = play(rolled(track_state(["..."], OPEN, timer=1), [3]), place(0, 1, "M"), MOVE)
    assert state["status"] == "timer_out" and GAME.score(state) is None


def last_row_state(gear: int, **changes) -> dict:
    """The car on the last row of the last card (the rulebook's finishing example)."""
    state = track_state(["..."], ["...", "..."], card_a=1, gear=gear, timer=5, control=4)
    return {**state, "car": {"row": 2, "lane": "M"}, **changes}


def test_rr23_moving_beyond_the_last_card_finishes_and_skips_step_iv():
    state = rolled(last_row_state(3), [4, 6, 1])
    state = play(state, place(0, 3, "M"), place(0, 3, "R"), place(0, 4, "R"), MOVE)
    assert state["status"] == "finished" and state["car"] == {"row": 3, "lane": "M"}
    assert state["timer"] == 4 and state["control"] == 4  # unclean finish, no gear check
    assert GAME.view(state)["finish_rows"] == [3, 4, 5]


def test_rr24_rulebook_example_perfect_finish_in_gear_three():
    """Gear 3 on the last field of the final card: three dice in the car's lane M."""
    state = rolled(last_row_state(3), [3, 4, 4])
    state = play(state, place(0, 3, "M"), place(0, 4, "M"), place(0, 5, "M"), MOVE)
    assert state["status"] == "finished" and state["timer"] == 6
    assert state["last_round"] == [{"type": "finish", "perfect": True}]


def test_rr24_fewer_dice_than_the_gear_make_the_finish_unclean():
    state = play(rolled(last_row_state(2), [3, 3]), place(0, 3, "M"), MOVE)
    assert state["status"] == "finished" and state["timer"] == 4 and state["gear"] == 2


def test_rr24_loss_of_control_into_the_finish_zone_is_an_unclean_finish():
    state = play(rolled(last_row_state(1), [5]), place(0, 3, "M"), MOVE)
    assert state["status"] == "finished" and state["timer"] == 5 - 1 - 1
    assert state["last_round"][-1] == {"type": "finish", "perfect": False}


def test_rr24_a_die_beyond_the_finish_that_misses_its_lane_is_unclean():
    """The car finishes with the first die; the perfect finish still needs every die
    of the route to fit the car's lane."""
    state = rolled(last_row_state(3), [3, 4, 6])
    state = play(state, place(0, 3, "M"), place(0, 4, "M"), place(0, 5, "M"), MOVE)
    assert state["status"] == "finished" and state["timer"] == 4


def test_rr25_score_and_tiebreak():
    state = rolled(last_row_state(1, round=7, rounds_played=6), [3])
    state = play(state, place(0, 3, "M"), MOVE)
    assert GAME.score(state) == 2 * 6 + 4
    assert GAME.tiebreak(state) == -7
    assert (GAME.tiebreak_rule.counts, GAME.tiebreak_rule.better) == ("rounds", "fewer")
    assert GAME.tiebreak_rule.describe() == "rounds, fewer is better, given as minus the rounds"


def test_rr26_run_ends_unfinished_after_the_round_limit():
    state = rolled(track_state(OPEN, OPEN, round=MAX_ROUNDS, rounds_played=MAX_ROUNDS - 1), [3])
    state = play(state, place(0, 1, "M"), MOVE)
    assert state["status"] == "round_limit" and GAME.is_over(state)
    assert GAME.score(state) is None and GAME.tiebreak(state) == -MAX_ROUNDS
    assert GAME.max_actions == MAX_ROUNDS * MAX_ACTIONS_PER_ROUND


@pytest.mark.parametrize(
    "action",
    [
        {**place(0, 1, "M"), "extra": 1},
        {"type": "place", "die": True, "row": 1, "lane": "M"},
        {"type": "place", "die": 0.0, "row": 1, "lane": "M"},
        {"type": "place", "die": 0, "row": 1.0, "lane": "M"},
        {"type": "place", "die": 0, "row": 1, "lane": "X"},
        {"type": "place", "die": 0, "row": 1, "lane": 1},
        {"type": "control", "step": 0, "delta": -1.0},
        {"type": "control", "step": 0, "delta": True},
        {"type": "control", "step": False, "delta": 1},
        {"type": "modify", "step": 0, "delta": 1.0},
        {"type": "reserve", "die": "0"},
        {"type": "move", "extra": None},
    ],
)
def test_rr27_fields_of_the_wrong_json_type_are_refused(action):
    state = play(rolled(track_state(OPEN, OPEN, gear=2), [3, 3], reserve=1), place(0, 1, "M"))
    before = json.dumps(state)
    refused(state, action, "RR-27 (actions)")
    assert json.dumps(state) == before


@pytest.mark.parametrize("gear", [2.0, True, "2", None])
def test_rr27_gear_is_an_integer(gear):
    refused(track_state(OPEN, OPEN), {"type": "gear", "gear": gear}, "RR-27")


def test_rr27_integers_as_sent_are_stored_exactly():
    state = play(track_state(OPEN, OPEN), {"type": "gear", "gear": 2})
    assert type(state["gear"]) is int


def test_every_rule_has_a_test():
    """Every RR-n of the rules document is cited by a test named test_rrn_..."""
    document = (Path(__file__).parents[1] / "docs" / "rules" / "rallye-raser.md").read_text()
    numbers = {int(n) for n in re.findall(r"\*\*RR-(\d+) ", document)}
    tested = {int(n) for n in re.findall(r"^def test_rr(\d+)_", Path(__file__).read_text(), re.M)}
    assert numbers and numbers <= tested, sorted(numbers - tested)


def playthrough(seed: str, pick) -> list[dict]:
    """The states of one run whose actions pick chooses among the legal ones."""
    state = GAME.new_game(seed)
    states = [state]
    while not GAME.is_over(state):
        options = GAME.legal_actions(state)
        state = GAME.apply(state, options[pick(len(options))])
        states.append(state)
    return states


@settings(max_examples=40, deadline=None)
@given(seed=st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True))
def test_invariants_hold_along_random_runs(seed: str):
    """Dials stay in range, the car never rests on an absent field nor drives backwards."""
    states = playthrough(seed, Stream(seed, "invariants").below)
    assert len(states) > 1 and GAME.is_over(states[-1])  # every step of a whole run checked
    for before, after in pairwise(states):
        assert 0 <= after["timer"] <= 6 and 0 <= after["control"] <= 6
        assert 1 <= after["gear"] <= 3
        assert after["car"]["row"] >= before["car"]["row"]
        if after["car"]["row"] < len(after["track"]):
            lane = "LMR".index(after["car"]["lane"])
            assert after["track"][after["car"]["row"]][lane] != "x"


def test_rr8_placing_the_reserve_does_not_open_a_reroll():
    state = rolled(track_state(OPEN, OPEN, gear=2), [2, 2], reserve=3)
    state = play(state, {"type": "place_reserve", "row": 1, "lane": "M"})
    refused(state, {"type": "reroll"}, "RR-8")


def test_rr12_the_reserve_may_be_filled_again_once_spent():
    state = rolled(track_state(OPEN, OPEN, gear=1), [4, 6], reserve=1)
    state = play(state, place(0, 1, "M"), {"type": "modify", "step": 0, "delta": -1})
    state = play(state, {"type": "reserve", "die": 0})
    assert state["reserve"] == 6 and state["route"][0]["value"] == 3


@settings(max_examples=30, deadline=None)
@given(seed=st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True))
def test_rr25_scores_stay_within_0_to_18(seed: str):
    """Finished runs of a sensible player (which nearly always finishes) and of
    random play both score within 0..18."""
    random_run = random_playout(GAME, seed, seeded_chooser(seed, "score-bounds"))[1]
    for actions in (heuristic_actions(seed), random_run):
        score = GAME.score(GAME.replay(seed, actions))
        assert score is None or 0 <= score <= 18
