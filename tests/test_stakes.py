"""The stakes served with the legal actions say exactly what the engine will do."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from puzzles import GAMES
from puzzles.crazy_rally.cards import ADJUSTMENTS, EVENTS
from puzzles.playout import random_playout, seeded_chooser
from puzzles.rallye_raser.track import card_index, lane_fits

SEEDS = [f"stakes-{n}" for n in range(12)]
# The fewest cases of each kind a test checks along a seed's random run (the runs of
# SEEDS give 10 to 214): a test whose loop checked less would pass on almost nothing.
MIN_CHECKED = 5


def positions(game_name: str, seed: str) -> list[tuple[Any, list[Any], list[list[Any]]]]:
    """Every position of a random run: its state, legal actions and their notes."""
    engine = GAMES[game_name]
    _, actions = random_playout(engine, seed, seeded_chooser(seed, "stakes"))
    state = engine.new_game(seed)
    found = []
    for action in actions:
        legal = engine.legal_actions(state)
        found.append((state, legal, engine.stakes(state, legal)["notes"]))
        state = engine.apply(state, action)
    return found


def kinds(notes: list[dict[str, str]]) -> set[str]:
    return {note["kind"] for note in notes}


@pytest.mark.parametrize("seed", SEEDS)
def test_rallye_raser_warns_exactly_when_the_engine_loses_control_damages_or_checks(seed: str):
    engine = GAMES["rallye-raser"]
    seen: set[str] = set()
    checked: Counter[str] = Counter()
    for state, legal, notes in positions("rallye-raser", seed):
        assert len(notes) == len(legal)
        for action, said in zip(legal, notes, strict=True):
            seen |= kinds(said)
            if action["type"] in ("place", "place_reserve"):
                checked["placement"] += 1
                value = state["pool"][action["die"]] if "die" in action else state["reserve"]
                fits = lane_fits(action["lane"], value)
                assert ("loss_of_control" in kinds(said)) == (not fits)
                on_b = card_index(state["card_starts"], action["row"]) == state["card_a"] + 1
                assert ("gear_check" in kinds(said)) == (
                    on_b and action["row"] < state["card_starts"][-1]
                )
            if action["type"] == "move":
                checked["move"] += 1
                events = {e["type"] for e in engine.apply(state, action)["last_round"]}
                for kind in ("loss_of_control", "engine_damage", "gear_check", "gasfuss", "finish"):
                    assert (kind in kinds(said)) == (kind in events)
    assert {"loss_of_control", "fits"} <= seen
    # A random run offers placements and moves in several rounds: each kind was checked.
    assert checked["placement"] >= MIN_CHECKED and checked["move"] >= MIN_CHECKED, checked


@pytest.mark.parametrize("seed", SEEDS)
def test_crazy_rally_says_the_speed_and_body_a_turns_cards_cost(seed: str):
    engine = GAMES["crazy-rally"]
    drives = 0
    for state, legal, notes in positions("crazy-rally", seed):
        for action, said in zip(legal, notes, strict=True):
            if action["type"] != "drive":
                continue
            drives += 1
            after = engine.apply(state, action)["last"]
            card = ADJUSTMENTS[action["card"]]
            assert (
                ("purple" in kinds(said))
                == (card.colour == "purple")
                == bool(after["purple_damage"])
            )
            assert ("clamp" in kinds(said)) == bool(after["clamps"])
            assert ("event" in kinds(said)) == (action["event"] in EVENTS)
            speed = next(n["text"] for n in said if n["kind"] == "speed")
            assert speed.startswith(f"speed {state['speed']} → ")
    # Every turn of the race offers a drive for each card in hand: many were checked.
    assert drives >= MIN_CHECKED, drives


def test_the_score_now_is_what_a_finish_now_would_score():
    engine = GAMES["rallye-raser"]
    checked = positions("rallye-raser", SEEDS[0])
    for state, _legal, _notes in checked:
        assert engine.stakes(state, [])["score_now"] == 2 * state["timer"] + state["control"]
    assert len(checked) >= MIN_CHECKED
