"""Crazy Rally's heuristic player in positions built by hand (docs/rules/crazy-rally.md).

It is the expert's rollout policy (solver.crazy_rally.expert): where it plays a position
worse than the expert would, every graded decision that leads there is charged as a
loss, and the grades no longer add up to what a run scored below par (issue 26). These
positions are ones it used to lose."""

from __future__ import annotations

from typing import Any, cast

from puzzles import get_game
from puzzles.crazy_rally.cards import ADJUSTMENTS, DECK_IDS
from puzzles.crazy_rally.states import State
from puzzles.playout import play_out
from solver.crazy_rally.expert import outlook
from solver.crazy_rally.players import HeuristicPlayer

GAME = get_game("crazy-rally")


def position(hand: list[str], supply: list[str], track: list[str], **fields: Any) -> State:
    """A race state at turn 14 - len(track), with the supply's top cards in this order
    (the others after them) and the rest of the track as given."""
    start = GAME.new_game("players")
    while start["phase"] != "race":
        start = GAME.apply(start, GAME.legal_actions(start)[0])
    rest = sorted(card for card in DECK_IDS if card not in {*hand, *supply})
    turn = 14 - len(track)
    built: dict[str, Any] = {
        **start,
        "hand": hand,
        "supply": supply + rest,
        "track": ["T01"] * turn + track,  # the cards already passed play no part
        "turn": turn,
        **fields,
    }
    return cast(State, built)


def played_on(state: State) -> tuple[State, list[dict[str, Any]]]:
    player = HeuristicPlayer()
    player.track = list(state["track"])
    return play_out(GAME, state, player.choose)


def test_cr4_the_heuristic_player_takes_tyres_over_more_symbols_while_the_car_is_slow():
    """Blue B10 (wheel, wheel, nut) or B12 (tyre, tyre) for a car of maximum speed 7:
    the tyres (CR-4). Taking the card with more symbols left the car slow, and the
    expert's tyre was charged at this step and again at the next (issue 26)."""
    state = GAME.new_game("players")
    state["pairs"]["blue"] = ["B10", "B12"]
    choice = HeuristicPlayer().choose(state, GAME.legal_actions(state))
    assert choice == {"type": "apply", "card": "B12"}


def test_cr12_cr18_the_heuristic_player_spends_its_purple_cards_while_the_car_can_pay():
    """At the start: two purple cards in hand, more to come. Held for the blue and
    yellow cards, they come due late, each costing 1 body strength (CR-12), when the
    car can no longer pay and is eliminated (CR-18); played early they cost the same."""
    state = position(
        ["B14", "Y05", "P03", "P11", "E8"],
        ["E5", "B01", "P08", "E7", "P07", "Y13", "Y06", "Y09", "B03", "P09", "P04", "Y14",
         "P02", "E2", "P06", "B15"],
        ["T05", "T06", "T01", "T13", "T08", "T09", "T03", "T07", "T04", "T11", "T02", "T14",
         "T10", "T12"],
        car={"max_speed": 10, "manoeuvrability": 10, "body": 7},
        speed=5, manoeuvrability=10, body=7, distance=0,
    )  # fmt: skip
    final, actions = played_on(state)
    assert final["outcome"] == "finished"
    assert ADJUSTMENTS[actions[0]["card"]].costs_body
    assert outlook(state)[0] == GAME.score(final)


def test_cr15_cr17_cr18_the_heuristic_player_does_not_arrive_where_no_card_saves_it():
    """Speed 7, manoeuvrability 0, body 3; next a red 4, then a white 6 of difficulty 3
    with damage 4. Arriving at the white 6 at speed 10 with a hand that brakes by 3 at
    most is a sure crash there (CR-15, CR-17), and its damage eliminates the car
    (CR-18): the purple card brakes now, not accelerates."""
    state = position(
        ["P04", "P02", "E8", "E5", "E7"],
        ["Y13", "B02", "B07", "P07", "P01"],
        ["T14", "T10", "T12"],
        car={"max_speed": 10, "manoeuvrability": 10, "body": 7},
        speed=7, manoeuvrability=0, body=3, distance=78,
    )  # fmt: skip
    final, actions = played_on(state)
    assert actions[0]["card"] == "P04" and actions[0]["mode"] == "brake"
    assert final["outcome"] == "finished"
