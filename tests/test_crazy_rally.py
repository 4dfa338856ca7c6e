"""Crazy Rally rules engine: one or more tests per rule of docs/rules/crazy-rally.md."""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzles import IllegalAction, get_game
from puzzles.crazy_rally.cards import ADJUSTMENTS, DECK_IDS, EVENTS, TRACK
from puzzles.crazy_rally.engine import supply_order, track_order

GAME = get_game("crazy-rally")
SEED = "rules"


def drive(card: str, mode: str = "accelerate", event: str | None = None) -> dict[str, Any]:
    return {"type": "drive", "card": card, "mode": mode, "event": event}


def setup_actions(seed: str, picks: tuple[int, int, int] = (0, 0, 0)) -> list[dict[str, Any]]:
    state = GAME.new_game(seed)
    actions = []
    for pick in picks:
        action = GAME.legal_actions(state)[pick]
        actions.append(action)
        state = GAME.apply(state, action)
    return actions


def race_state(**overrides: Any) -> dict[str, Any]:
    """A state at the first decision of the race, with chosen fields replaced."""
    state = GAME.replay(SEED, [*setup_actions(SEED), {"type": "start"}])
    return {**state, **overrides}


def white(card_id: str) -> bool:
    return TRACK[card_id].colour == "white"


def first_track(colour: str, **properties: int) -> str:
    """The id of a track card of colour with the given properties."""
    return next(
        card.id
        for card in TRACK.values()
        if card.colour == colour and all(getattr(card, k) == v for k, v in properties.items())
    )


# A neutral track card: white 11 never binds below speed 11.
FAST = first_track("white", speed=11, difficulty=1)


def track_with(first: str) -> list[str]:
    return [first] + [card for card in TRACK if card != first]


# ----- CR-1 card data -------------------------------------------------------------------------
def test_cr1_track_cards():
    cards = list(TRACK.values())
    assert len(cards) == 14
    assert sum(card.flag for card in cards) == 7
    assert sum(card.colour == "red" for card in cards) == 2
    assert all(card.colour in ("white", "red") for card in cards)
    assert {card.speed for card in cards if card.colour == "white"} >= {10, 11}
    assert all(2 <= card.damage <= 4 for card in cards)
    # A red minimum never exceeds the lowest possible car maximum (7).
    assert all(card.speed <= 7 for card in cards if card.colour == "red")


def test_cr1_adjustment_cards():
    by_colour = Counter(card.colour for card in ADJUSTMENTS.values())
    assert by_colour == {"blue": 15, "yellow": 15, "purple": 12}
    for card in ADJUSTMENTS.values():
        assert 1 <= len(card.symbols) <= 3
        assert set(card.symbols) <= {"tyre", "wheel", "nut"}


def test_cr1_only_purple_cards_change_the_speed_by_three():
    for card in ADJUSTMENTS.values():
        if card.colour == "purple":
            assert (card.speed_up, card.braking) == (3, 3)
        else:
            assert card.speed_up in (1, 2) and card.braking in (1, 2)
    values = {(c.speed_up, c.braking) for c in ADJUSTMENTS.values() if c.colour != "purple"}
    assert values == {(1, 1), (1, 2), (2, 1), (2, 2)}


def test_cr1_cards_with_more_symbols_carry_weaker_speed_values():
    for colour in ("blue", "yellow"):
        strength: dict[int, list[int]] = {}
        for card in ADJUSTMENTS.values():
            if card.colour == colour:
                strength.setdefault(len(card.symbols), []).append(card.speed_up + card.braking)
        assert max(strength[3]) <= min(strength[1])
        assert sum(strength[3]) / len(strength[3]) < sum(strength[2]) / len(strength[2])


def test_cr1_event_cards():
    assert len(EVENTS) == 8
    assert Counter(event.colour for event in EVENTS.values()) == dict.fromkeys(
        {event.colour for event in EVENTS.values()}, 2
    )
    assert len({event.colour for event in EVENTS.values()}) == 4
    assert {event.effect for event in EVENTS.values()} == {"draw_two", "speed_up", "slow_down"}
    assert len(DECK_IDS) == 50


# ----- CR-2 .. CR-7 setup -----------------------------------------------------------------------
def test_cr2_car_starts_at_7_7_7_speed_5_distance_0():
    state = GAME.new_game(SEED)
    view = GAME.view(state)
    assert view["car"] == {"max_speed": 7, "manoeuvrability": 7, "body": 7}
    assert (view["speed"], view["distance"], view["phase"]) == (5, 0, "setup")


def test_cr3_two_cards_of_each_colour_and_one_event_are_dealt():
    state = GAME.new_game(SEED)
    for colour, pair in state["pairs"].items():
        assert len(set(pair)) == 2
        assert all(ADJUSTMENTS[card].colour == colour for card in pair)
    assert len(state["hand"]) == 1 and state["hand"][0] in EVENTS
    assert GAME.new_game(SEED) == state


def test_cr4_applied_card_changes_the_car_the_other_goes_to_hand():
    state = GAME.new_game(SEED)
    for colour in ("blue", "yellow", "purple"):
        assert GAME.view(state)["setup"]["colour"] == colour
        chosen, other = state["pairs"][colour]
        car = dict(state["car"])
        state = GAME.apply(state, {"type": "apply", "card": chosen})
        symbols = Counter(ADJUSTMENTS[chosen].symbols)
        assert state["car"] == {
            "max_speed": car["max_speed"] + symbols["tyre"],
            "manoeuvrability": car["manoeuvrability"] + symbols["wheel"],
            "body": car["body"] + symbols["nut"],
        }
        assert other in state["hand"] and chosen not in state["hand"]
    assert state["phase"] == "preview"
    assert (state["manoeuvrability"], state["body"]) == (
        state["car"]["manoeuvrability"],
        state["car"]["body"],
    )


def test_cr4_only_a_card_of_the_current_pair_may_be_applied():
    state = GAME.new_game(SEED)
    yellow = state["pairs"]["yellow"][0]
    with pytest.raises(IllegalAction, match="CR-4"):
        GAME.apply(state, {"type": "apply", "card": yellow})
    with pytest.raises(IllegalAction, match="CR-4"):
        GAME.apply(state, {"type": "apply", "card": state["pairs"]["blue"][0], "extra": 1})


@pytest.mark.parametrize("seed", ["a", "b", "c"])
def test_cr5_supply_order_does_not_depend_on_the_setup_choices(seed: str):
    order = supply_order(seed)
    assert sorted(order) == sorted(DECK_IDS)
    supplies = []
    for picks in [(0, 0, 0), (1, 1, 1), (0, 1, 0)]:
        state = GAME.replay(seed, setup_actions(seed, picks))
        hand = set(state["hand"])
        assert state["supply"] == [card for card in order if card not in hand]
        assert set(state["applied"]) <= set(state["supply"])  # applied cards stay in the supply
        supplies.append(state["supply"])
    common = set.intersection(*(set(s) for s in supplies))
    assert len({tuple(c for c in s if c in common) for s in supplies}) == 1


@given(seed=st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True))
def test_cr6_two_flag_cards_on_top_then_the_other_twelve(seed: str):
    track = track_order(seed)
    assert sorted(track) == sorted(TRACK)
    assert TRACK[track[0]].flag and TRACK[track[1]].flag


def test_cr6_the_flag_cards_below_the_top_two_are_shuffled_in():
    positions = {
        i for n in range(40) for i, card in enumerate(track_order(f"t{n}")) if TRACK[card].flag
    }
    assert positions - {0, 1}  # the five remaining flag cards land anywhere below


def test_cr7_the_track_is_shown_only_during_the_test_round():
    state = GAME.new_game(SEED)
    assert GAME.view(state)["track"] is None
    state = GAME.replay(SEED, setup_actions(SEED))
    assert [card["id"] for card in GAME.view(state)["track"]] == state["track"]
    assert GAME.legal_actions(state) == [{"type": "start"}]
    with pytest.raises(IllegalAction, match="CR-11"):
        GAME.apply(state, drive(next(c for c in state["hand"] if c in ADJUSTMENTS)))
    state = GAME.apply(state, {"type": "start"})
    assert state["phase"] == "race" and GAME.view(state)["track"] is None
    with pytest.raises(IllegalAction, match="CR-7"):
        GAME.apply(state, {"type": "start"})


# ----- CR-8 .. CR-10 drawing ---------------------------------------------------------------------
def test_cr8_each_turn_begins_by_drawing_the_top_supply_card():
    before = GAME.replay(SEED, setup_actions(SEED))
    state = GAME.apply(before, {"type": "start"})
    assert state["hand"] == [*before["hand"], before["supply"][0]]
    assert state["supply"] == before["supply"][1:]
    assert state["drawn"] == [before["supply"][0]]


def test_cr9_a_hand_without_adjustment_cards_is_discarded_and_redrawn():
    # After playing B-card the hand holds only two events; the draw adds a third event.
    events = list(EVENTS)
    adjustment = next(iter(ADJUSTMENTS))
    supply = [events[2], "Y01", "Y02", "Y03", "Y04"]
    state = race_state(
        hand=[adjustment, events[0], events[1]], supply=supply, discard=[], track=track_with(FAST)
    )
    after = GAME.apply(state, drive(adjustment))
    assert after["redrawn"] == [events[0], events[1], events[2]]
    assert after["hand"] == ["Y01", "Y02", "Y03"]
    assert after["discard"] == [adjustment, events[0], events[1], events[2]]


def draw_two_turn(hand_events: list[str], supply: list[str], **overrides: Any) -> dict[str, Any]:
    """Play B01 with a draw-two event, holding hand_events besides (no other adjustment card)."""
    state = race_state(
        hand=["B01", event_of("draw_two"), *hand_events],
        supply=supply,
        discard=[],
        track=track_with(FAST),
        **overrides,
    )
    return GAME.apply(state, drive("B01", "accelerate", event_of("draw_two")))


def test_cr9_the_draw_two_events_draw_is_checked_at_once():
    # Left with a +1 event, the event draws two more events: the three are replaced
    # before the next turn's draw (which would otherwise have brought Y04).
    plus, minus, other = event_of("speed_up"), event_of("slow_down"), event_of("draw_two", 1)
    after = draw_two_turn([plus], [minus, other, "Y01", "Y02", "Y03", "Y04"])
    assert after["last"]["event_redrawn"] == [plus, minus, other]
    assert after["last"]["event_drawn"] == ["Y01", "Y02", "Y03"]
    assert after["hand"] == ["Y01", "Y02", "Y03", "Y04"]
    assert after["drawn"] == ["Y04"] and after["redrawn"] == []


def test_cr9_the_redraw_repeats_until_the_hand_holds_an_adjustment_card():
    held = event_of("speed_up")
    only_events = [event_of("slow_down"), event_of("draw_two", 1), event_of("speed_up", 1),
                   event_of("slow_down", 1), event_of("draw_two", 2)]  # fmt: skip
    after = draw_two_turn([held], [*only_events, "Y01", "Y02", "Y03", "Y04"])
    assert after["last"]["event_redrawn"] == [held, *only_events]  # twice three events
    assert after["last"]["event_drawn"] == ["Y01", "Y02", "Y03"]
    assert after["hand"] == ["Y01", "Y02", "Y03", "Y04"]


def test_cr9_a_draw_with_an_adjustment_card_keeps_the_hand():
    plus = event_of("speed_up")
    after = draw_two_turn([plus], ["Y01", event_of("slow_down"), "Y02"])
    assert after["last"]["event_redrawn"] == []
    assert after["hand"] == [plus, "Y01", event_of("slow_down"), "Y02"]


def test_cr9_cr20_the_last_turns_event_draw_is_checked_and_discarded_events_score_nothing():
    plus, minus, other = event_of("speed_up"), event_of("slow_down"), event_of("draw_two", 1)
    after = draw_two_turn([plus], [minus, other, "Y01", "Y02", "Y03"], turn=13, distance=80)
    assert after["outcome"] == "finished"
    assert after["hand"] == ["Y01", "Y02", "Y03"]
    assert GAME.score(after) == after["distance"]  # the three events went to the discard pile


def test_cr10_an_empty_supply_is_replaced_by_the_shuffled_discard_pile():
    state = race_state(hand=["B01", "B02"], supply=[], discard=["Y05", "Y06", "P01"])
    after = GAME.apply(state, drive("B01"))
    assert after["reshuffles"] == 1
    assert sorted(after["hand"] + after["supply"]) == sorted(["B02", "Y05", "Y06", "P01", "B01"])
    assert after["discard"] == []
    assert after == GAME.apply(state, drive("B01"))  # the shuffle is fixed by the seed


# ----- CR-11 .. CR-14 playing cards ---------------------------------------------------------------
def blue(speed_up: int | None = None, braking: int | None = None) -> str:
    """The id of the first blue card with the given speed-up and braking values."""
    return next(
        card.id
        for card in ADJUSTMENTS.values()
        if card.colour == "blue"
        and speed_up in (None, card.speed_up)
        and braking in (None, card.braking)
    )


def event_of(effect: str, nth: int = 0) -> str:
    return [e.id for e in EVENTS.values() if e.effect == effect][nth]


def test_cr11_accelerate_by_speed_up_or_brake_by_braking():
    card = ADJUSTMENTS[blue(speed_up=2)]
    state = race_state(hand=[card.id], speed=5, track=track_with(FAST))
    assert GAME.apply(state, drive(card.id))["speed"] == 7
    assert GAME.apply(state, drive(card.id, "brake"))["speed"] == 5 - card.braking


def test_cr11_speed_never_drops_below_zero():
    card = blue(braking=2)
    state = race_state(hand=[card], speed=1, track=track_with(FAST))
    assert GAME.apply(state, drive(card, "brake"))["speed"] == 0


def test_cr11_playing_one_adjustment_card_from_the_hand_is_compulsory():
    state = race_state(hand=["B01", "E1"])
    for bad in [
        drive("E1"),
        drive("B02"),
        drive("B01", "coast"),
        {"type": "drive", "card": "B01", "mode": "brake"},
    ]:
        with pytest.raises(IllegalAction):
            GAME.apply(state, bad)
    assert {action["card"] for action in GAME.legal_actions(state)} == {"B01"}


def test_cr12_purple_cards_cost_one_body_either_way():
    state = race_state(hand=["P01"], speed=5, body=7, track=track_with(FAST))
    assert GAME.apply(state, drive("P01"))["body"] == 6
    braked = GAME.apply(state, drive("P01", "brake"))
    assert (braked["body"], braked["speed"], braked["last"]["purple_damage"]) == (6, 2, 1)


def car_with_maximum(maximum: int, **overrides: Any) -> dict[str, Any]:
    state = race_state(track=track_with(FAST), **overrides)
    return {**state, "car": {**state["car"], "max_speed": maximum}}


def test_cr13_speed_above_the_maximum_becomes_the_maximum_and_costs_one_body():
    state = car_with_maximum(8, hand=[blue(speed_up=2)], speed=7, body=7)
    after = GAME.apply(state, drive(blue(speed_up=2)))
    assert (after["speed"], after["body"], after["last"]["clamps"]) == (8, 6, 1)


def test_cr13_a_plus_one_event_over_the_maximum_is_clamped_too():
    card, plus = blue(speed_up=2), event_of("speed_up")
    state = car_with_maximum(8, hand=[card, plus], speed=6, body=7)  # the card reaches 8
    after = GAME.apply(state, drive(card, "accelerate", plus))
    assert (after["speed"], after["body"], after["last"]["clamps"]) == (8, 6, 1)


def test_cr13_card_and_plus_one_event_both_over_the_maximum_cost_two_body():
    card, plus = blue(speed_up=2), event_of("speed_up")
    state = car_with_maximum(8, hand=[card, plus], speed=7, body=7)
    after = GAME.apply(state, drive(card, "accelerate", plus))  # 9 -> 8, then 9 -> 8
    assert (after["speed"], after["body"], after["last"]["clamps"]) == (8, 5, 2)


def test_cr12_cr13_a_purple_card_and_a_plus_one_event_over_the_maximum_cost_three_body():
    plus = event_of("speed_up")
    state = car_with_maximum(8, hand=["P01", plus], speed=7, body=7)
    after = GAME.apply(state, drive("P01", "accelerate", plus))
    assert (after["speed"], after["body"]) == (8, 7 - 1 - 2)
    assert (after["last"]["purple_damage"], after["last"]["clamps"]) == (1, 2)


@pytest.mark.parametrize(("effect", "speed"), [("speed_up", 8), ("slow_down", 6)])
def test_cr14_speed_events_change_the_speed_by_one(effect: str, speed: int):
    event = event_of(effect)
    card = blue(speed_up=2)
    state = race_state(hand=[card, event], speed=5, track=track_with(FAST))
    after = GAME.apply(state, drive(card, "accelerate", event))
    assert after["speed"] == speed
    assert event not in after["hand"] and event in after["discard"]


def test_cr14_draw_two_adds_two_cards_usable_from_the_next_turn():
    event = next(e.id for e in EVENTS.values() if e.effect == "draw_two")
    state = race_state(hand=["B01", "B02", event], supply=["Y01", "Y02", "Y03"])
    after = GAME.apply(state, drive("B01", "accelerate", event))
    assert after["last"]["event_drawn"] == ["Y01", "Y02"]
    assert after["hand"] == ["B02", "Y01", "Y02", "Y03"]  # then the next turn's draw
    assert {a["card"] for a in GAME.legal_actions(after)} == {"B02", "Y01", "Y02", "Y03"}


def test_cr14_an_event_must_be_in_the_hand():
    state = race_state(hand=["B01", "E1"])
    with pytest.raises(IllegalAction, match="CR-14"):
        GAME.apply(state, drive("B01", "accelerate", "E2"))
    with pytest.raises(IllegalAction, match="CR-14"):
        GAME.apply(state, drive("B01", "accelerate", "B01"))


# ----- CR-15 .. CR-19 the track card -------------------------------------------------------------
def test_cr15_too_fast_on_a_white_card_costs_difficulty_plus_excess():
    track = first_track("white", speed=6, difficulty=3)
    card = blue(speed_up=2)
    state = race_state(hand=[card], speed=6, manoeuvrability=9, track=track_with(track))
    after = GAME.apply(state, drive(card))  # speed 8 on a 6: excess 2
    assert (after["speed"], after["manoeuvrability"], after["distance"]) == (6, 9 - 3 - 2, 6)
    assert after["last"]["too_fast"] == 2


def test_cr15_at_or_below_the_white_value_nothing_happens():
    track = first_track("white", speed=6, difficulty=3)
    card = blue(speed_up=1)
    state = race_state(hand=[card], speed=5, manoeuvrability=9, track=track_with(track))
    after = GAME.apply(state, drive(card))
    assert (after["speed"], after["manoeuvrability"]) == (6, 9)


def test_cr16_too_slow_on_a_red_card_costs_difficulty_plus_shortfall():
    track = first_track("red", speed=6)
    card = blue(braking=2)
    state = race_state(hand=[card], speed=4, manoeuvrability=9, track=track_with(track))
    after = GAME.apply(state, drive(card, "brake"))  # speed 2 on a red 6
    difficulty = TRACK[track].difficulty
    assert (after["speed"], after["manoeuvrability"]) == (6, 9 - difficulty - 4)
    assert after["last"]["too_slow"] == 4
    faster = GAME.apply({**state, "speed": 8}, drive(card, "brake"))  # 6: not too slow
    assert (faster["speed"], faster["manoeuvrability"]) == (6, 9)


def test_cr17_below_zero_manoeuvrability_is_a_crash():
    track = first_track("white", speed=4)
    card = blue(speed_up=2)
    state = race_state(
        hand=[card], speed=6, manoeuvrability=2, body=9, track=track_with(track), distance=10
    )
    after = GAME.apply(state, drive(card))  # 8 on a 4: loses 3 + 4
    assert (after["speed"], after["manoeuvrability"]) == (0, state["car"]["manoeuvrability"])
    assert after["body"] == 9 - TRACK[track].damage
    assert after["distance"] == 10  # a crash covers no distance
    assert after["last"]["crashed"]


def test_cr17_exactly_zero_manoeuvrability_is_no_crash():
    track = first_track("white", speed=4)
    card = blue(speed_up=1)
    loss = TRACK[track].difficulty + 2
    state = race_state(hand=[card], speed=5, manoeuvrability=loss, track=track_with(track))
    after = GAME.apply(state, drive(card))
    assert (after["speed"], after["manoeuvrability"]) == (4, 0)


def test_cr18_body_zero_or_less_eliminates_the_car():
    state = race_state(hand=["P01", "B01"], body=1, track=track_with(FAST))
    after = GAME.apply(state, drive("P01"))
    assert after["outcome"] == "eliminated" and GAME.is_over(after)
    assert GAME.score(after) is None and GAME.legal_actions(after) == []


def test_cr19_the_speed_after_the_track_card_is_added_to_the_distance():
    card = blue(speed_up=2)
    state = race_state(hand=[card], speed=5, distance=20, track=track_with(FAST))
    assert GAME.apply(state, drive(card))["distance"] == 27


# ----- CR-20 end and score ---------------------------------------------------------------------
def last_turn_state(**overrides: Any) -> dict[str, Any]:
    return race_state(turn=13, **overrides)


def test_cr20_the_solo_score_is_distance_plus_one_per_unused_event():
    track = list(TRACK)
    track[13] = FAST
    state = last_turn_state(hand=["B01", "E1", "E2"], speed=5, distance=80, track=track)
    after = GAME.apply(state, drive("B01"))
    assert after["outcome"] == "finished"
    assert GAME.score(after) == 80 + 6 + 2 * 1
    assert GAME.tiebreak(after) == 6
    assert GAME.tiebreak_rule.describe() == "final speed, higher is better"
    assert GAME.view(after)["score"] == 88
    assert GAME.view(after)["event_bonus"] == 1


def test_cr20_a_crash_on_the_last_card_has_no_score():
    track = list(TRACK)
    track[13] = first_track("white", speed=4)
    state = last_turn_state(hand=["P01"], speed=9, manoeuvrability=0, body=9, track=track)
    after = GAME.apply(state, drive("P01"))
    assert after["outcome"] == "crashed_last" and GAME.score(after) is None


def test_cr20_a_run_ends_after_the_fourteenth_card():
    state = GAME.replay(SEED, [*setup_actions(SEED), {"type": "start"}])
    turns = 0
    while not GAME.is_over(state):
        state = GAME.apply(state, GAME.legal_actions(state)[0])
        turns += 1
    assert turns <= 14
    assert state["turn"] == 14 or state["outcome"] == "eliminated"


# ----- CR-21 view and actions --------------------------------------------------------------------
def test_cr21_view_hides_the_supply_and_the_track_during_the_race():
    state = race_state()
    view = GAME.view(state)
    assert "supply" not in view and view["track"] is None
    assert view["supply_size"] == len(state["supply"])
    shown = {card["id"] for card in view["hand"] + view["events"]}
    assert shown == set(state["hand"])
    assert not shown & set(state["supply"])


MALFORMED = [
    None,
    3,
    "drive",
    {},
    {"type": []},
    {"type": "drive", "card": ["B01"], "mode": "accelerate", "event": None},
    {"type": "drive", "card": "B01", "mode": ["brake"], "event": None},
    {"type": "drive", "card": "B01", "mode": "brake", "event": {"id": "E1"}},
]


@pytest.mark.parametrize("junk", MALFORMED)
def test_cr21_malformed_actions_are_refused(junk: Any):
    state = race_state(hand=["B01", "E1"])
    with pytest.raises(IllegalAction):
        GAME.apply(state, junk)


# Values whose JSON form is not the contract's: a bool is an int subclass in Python and
# 2.0 == 2, so only a type check tells them from what the contract expects.
NOT_A_STRING = [True, False, 0, 1, 2.0, 1.5, ["B01"], {"id": "B01"}]


@pytest.mark.parametrize("value", NOT_A_STRING)
@pytest.mark.parametrize(
    ("phase_state", "action", "field", "rule"),
    [
        ("setup", {"type": "apply", "card": None}, "card", "CR-4"),
        ("setup", {"type": None}, "type", "CR-21"),
        ("preview", {"type": None}, "type", "CR-21"),
        ("race", drive("B01"), "type", "CR-21"),
        ("race", drive("B01"), "card", "CR-11"),
        ("race", drive("B01"), "mode", "CR-11"),
        ("race", drive("B01", "accelerate", "E1"), "event", "CR-14"),
    ],
)
def test_cr21_a_field_of_the_wrong_json_type_is_refused_naming_the_rule(
    value: Any, phase_state: str, action: dict[str, Any], field: str, rule: str
):
    states = {
        "setup": GAME.new_game(SEED),
        "preview": GAME.replay(SEED, setup_actions(SEED)),
        "race": race_state(hand=["B01", "E1"]),
    }
    state = states[phase_state]
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction, match=rule):
        GAME.apply(state, {**action, field: value})
    assert state == before


def test_cr21_every_legal_action_is_plain_json_of_strings():
    state = GAME.new_game(SEED)
    positions = 0
    while not GAME.is_over(state):
        for action in GAME.legal_actions(state):
            assert json.loads(json.dumps(action)) == action
            assert all(type(v) is str or v is None for v in action.values())
        state = GAME.apply(state, GAME.legal_actions(state)[-1])
        positions += 1
    # Every action of a finished run's positions: setup, start and the fourteen turns.
    assert GAME.is_finished(state) and positions == GAME.max_actions


# ----- properties over random runs ------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(seed=st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True), choice=st.randoms())
def test_cards_are_conserved_and_values_stay_in_range(seed: str, choice: random.Random):
    state = GAME.new_game(seed)
    while not GAME.is_over(state):
        state = GAME.apply(state, choice.choice(GAME.legal_actions(state)))
        if state["phase"] in ("race", "over"):
            cards = state["hand"] + state["supply"] + state["discard"]
            assert sorted(cards) == sorted(DECK_IDS)
            assert 0 <= state["speed"] <= state["car"]["max_speed"]
            assert 0 <= state["manoeuvrability"] <= state["car"]["manoeuvrability"]
        if state["phase"] == "race":
            assert any(card in ADJUSTMENTS for card in state["hand"])


@settings(max_examples=30, deadline=None)
@given(seed=st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True), choice=st.randoms())
def test_every_legal_action_applies_and_illegal_twins_do_not(seed: str, choice: random.Random):
    state = GAME.replay(seed, [*setup_actions(seed), {"type": "start"}])
    before = copy.deepcopy(state)
    for action in GAME.legal_actions(state):
        GAME.apply(state, action)
    outside = [c for c in ADJUSTMENTS if c not in state["hand"]]
    with pytest.raises(IllegalAction):
        GAME.apply(state, drive(choice.choice(outside)))
    assert state == before
