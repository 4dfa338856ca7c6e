"""The Rallye Raser solver: its round model against the engine, and its optimum."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from typing import cast

import pytest

from puzzles import get_game
from puzzles.rallye_raser.engine import MAX_ROUNDS, RallyeRaser, start_state
from puzzles.rallye_raser.states import DeckEntry, State
from puzzles.rng import Stream, dice
from solver import solve
from solver.kit import Optimum
from solver.rallye_raser.bound import UNREACHABLE, rounds_bound
from solver.rallye_raser.players import blind_greedy_actions, greedy_actions, heuristic_actions
from solver.rallye_raser.round import Track, dice_ends
from solver.rallye_raser.solver import (
    build_graph,
    dominates,
    earliest_finish,
    independent_optimum,
    node_key,
    optimum_from,
    round_arcs,
)

pytestmark = pytest.mark.slow  # these tests take seconds each

GAME = get_game("rallye-raser")
rallye_raser = RallyeRaser()  # the engine with its own state type
SEEDS = [f"solver-{i}" for i in range(20)]
ROUNDS = (2, 5, 9, 14, 20)  # round starts at which the round model is checked


@cache
def solved(seed: str):
    return solve("rallye-raser", seed)


# --- the round model against exhaustive play through the engine ----------------


def _intra_key(state: State) -> tuple:
    route = tuple((d["row"], d["lane"], d["value"]) for d in state["route"])
    return (
        state["phase"],
        state["gear"],
        state["shifted"],
        state["rolls"],
        state["placed_since_roll"],
        state["reserved_this_round"],
        tuple(sorted(state["pool"])),
        route,
        state["reserve"],
        state["control"],
    )


def engine_round_results(start: State) -> set[tuple]:
    """Every result of one round, by trying every legal action sequence in the engine."""
    results: set[tuple] = set()
    seen: set[tuple] = set()
    stack = [start]
    while stack:
        state = stack.pop()
        key = _intra_key(state)
        if key in seen:
            continue
        seen.add(key)
        for action in GAME.legal_actions(state):
            after = GAME.apply(state, action)
            if action["type"] != "move":
                stack.append(after)
            elif GAME.score(after) is not None:
                results.add(("finish", GAME.score(after)))
            elif not GAME.is_over(after):
                results.add(node_key(after))
    return results


def model_round_results(start: State) -> set[tuple]:
    key = node_key(start)
    arcs = round_arcs(Track(start["seed"], start), key[:-2], [key[-2:]])
    return {("finish", arc.score) if arc.head is None else arc.head for arc in arcs}


def one_row_start(seed: str, **changes) -> State:
    """A track of one section: the finish zone lies directly ahead of the car."""
    start = start_state(seed, [DeckEntry(id="T", rotated=False)], [["..."]])
    return cast(State, {**start, **changes})  # changes: some of the state's own fields


def round_starts() -> list[State]:
    """Round-start states met along the heuristic player's runs of a few seeds, and
    hand-made ones next to the finish."""
    starts = []
    for seed in ("model-a", "model-b", "model-c", "model-d", "model-e"):
        state = GAME.new_game(seed)
        for action in heuristic_actions(seed):
            if state["phase"] == "shift" and not state["shifted"] and state["round"] in ROUNDS:
                starts.append(state)
            state = GAME.apply(state, action)
    for gear, reserve in ((1, None), (3, 5), (2, 2)):
        starts.append(one_row_start("model-f", gear=gear, reserve=reserve, timer=3, control=2))
    # Gear 1 in round 1: after the first die the route is full, so a reroll places
    # nothing (RR-8: it opens no second reroll).
    starts.append(GAME.new_game("kestrel-41"))
    return starts


def random_run(seed: str, label: str) -> list[dict]:
    """The actions of a run that picks legal actions at random (reproducibly)."""
    stream, state, actions = Stream(seed, label), GAME.new_game(seed), []
    while not GAME.is_over(state):
        options = GAME.legal_actions(state)
        actions.append(options[stream.below(len(options))])
        state = GAME.apply(state, actions[-1])
    return actions


def _covered(result: tuple, model: set[tuple]) -> bool:
    if result[0] == "finish":
        return any(m[0] == "finish" and m[1] >= result[1] for m in model)
    return any(
        m[0] != "finish" and m[:3] == result[:3] and m[4] == result[4] and dominates(m, result)
        for m in model
    )


@pytest.mark.parametrize(
    "start", round_starts(), ids=lambda s: f"{s['seed']}-r{s['round']}-g{s['gear']}"
)
def test_round_model_matches_exhaustive_engine_play(start):
    engine = engine_round_results(start)
    model = model_round_results(start)
    assert model <= engine, "the model claims a result the engine cannot reach"
    missing = [result for result in engine if not _covered(result, model)]
    assert not missing, "the model misses results no model result dominates"


def test_rr8_the_model_rerolls_only_after_a_die_of_the_latest_roll_is_placed():
    """kestrel-41, round 1, gear 1 (a route of one die, full once placed): the rolls
    show 6 4 2, then 4 3, then 5 3. The first reroll follows the placed die; it
    places nothing, so no second reroll follows, and its 5 is never reserved."""
    assert [dice("kestrel-41", 1, k) for k in range(3)] == [(6, 4, 2), (4, 3, 3), (5, 3, 1)]
    ends = dice_ends("kestrel-41", 1, None, 1, True)
    assert {end.reserve for end in ends} == {None, 6, 4, 2, 3}
    assert all(end.recipe.count(("reroll",)) <= 1 for end in ends)


# --- hand-made positions -----------------------------------------------------------


def test_three_dice_for_lane_m_next_to_the_finish_score_eighteen_at_once():
    """Gear 3 with a first roll of three dice for lane M (3 or 4): a perfect finish in
    round 1, 2 x 6 + 6."""
    for seed in ("hand-5", "hand-8"):
        assert all(value in (3, 4) for value in dice(seed, 1, 0))
        found = optimum_from(one_row_start(seed, gear=3))
        assert (found.optimum, found.tiebreak) == (18, -1)


def test_a_low_timer_cannot_be_raised_without_a_card_advance():
    """Timer 4 on a one-card track: no card advance, so no gear check ever raises
    the timer, and the best is a perfect finish, 2 x 5 + 6 = 16, as soon as a roll
    shows a die for lane M: in gear 1, the first roll of round 38 does."""
    seed = "hand-4"
    assert {3, 4} & set(dice(seed, 38, 0))
    found = optimum_from(one_row_start(seed, gear=1, timer=4, round=38, rounds_played=37))
    assert (found.optimum, found.tiebreak) == (16, -38)


def test_no_finishing_run_is_reported_as_none():
    """The last round the safety bound allows, in gear 1 with the upshift banned, two
    sections before the finish: one die cannot reach it."""
    start: State = {
        **start_state("hand-5", [{"id": "T", "rotated": False}], [["...", "..."]]),
        "round": MAX_ROUNDS,
        "rounds_played": MAX_ROUNDS - 1,
        "no_upshift": True,
    }
    assert optimum_from(start) == Optimum(None, None, [], True)
    assert independent_optimum("hand-5", start) == (None, None)


LAST_ROUND = {"round": MAX_ROUNDS, "rounds_played": MAX_ROUNDS - 1}


@pytest.mark.parametrize(
    ("seed", "changes"),
    [
        ("hand-1", {"gear": 1, "timer": 3, "control": 0}),  # no die for M: unclean only
        ("hand-3", {"gear": 2, "timer": 5, "control": 1}),
        ("hand-9", {"gear": 3, "timer": 2, "control": 3, "reserve": 6}),
        ("hand-11", {"gear": 2, "timer": 1, "control": 2, "no_upshift": True}),
        ("hand-15", {"gear": 3, "timer": 4, "control": 0, "reserve": 2}),
        ("hand-57", {"gear": 1, "timer": 6, "control": 6, "car": {"row": 0, "lane": "L"}}),
    ],
)
def test_last_round_optimum_equals_exhaustive_engine_play(seed, changes):
    """In the last round the optimum is the best finish any legal action sequence of
    the engine reaches, which judges perfect and unclean finishes by the dice."""
    start = one_row_start(seed, **LAST_ROUND, **changes)
    scores = [result[1] for result in engine_round_results(start) if result[0] == "finish"]
    found = optimum_from(start)
    assert found.optimum == max(scores, default=None)
    assert found.tiebreak == (-MAX_ROUNDS if scores else None)


def test_bound_counts_gear_checks_only_on_card_advance():
    """On a single card no gear check ever runs (RR-21), so from timer 4 the best
    is a perfect finish at 2 x 5 + 6 = 16: the bound must not let a check every
    round raise the timer. On two cards one check runs: from timer 6 and control 4
    a check in gear 1 gives (5, 6), and a perfect finish then 18."""
    one_card = rounds_bound(17, (0, 6))
    assert all(one_card[(4, 6, gear, False, 0)] == UNREACHABLE for gear in (1, 2, 3))
    assert rounds_bound(16, (0, 6))[(4, 6, 3, False, 0)] == 2
    assert rounds_bound(18, (0, 6))[(6, 4, 3, False, 0)] == UNREACHABLE
    assert rounds_bound(18, (0, 3, 6))[(6, 4, 3, False, 0)] < UNREACHABLE


@pytest.mark.parametrize("seed", ["bound-4", "bound-5"])
def test_bound_never_exceeds_the_optimal_round(seed):
    start: State = {**rallye_raser.new_game(seed), "timer": 3, "control": 2}
    found = optimum_from(start)
    track = Track(seed, start)
    assert earliest_finish(track, node_key(start), found.optimum) <= -found.tiebreak


def test_witness_from_a_hand_made_position_replays():
    start = one_row_start("hand-6", gear=3, timer=4, control=2, round=37, rounds_played=36)
    found = optimum_from(start)
    state = start
    for action in found.actions:
        state = GAME.apply(state, action)
    assert (GAME.score(state), -state["rounds_played"]) == (found.optimum, found.tiebreak)


# --- whole seeds -------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_independent_search_agrees(seed):
    result = solved(seed)
    assert independent_optimum(seed) == (result.optimum, result.tiebreak)


@pytest.mark.parametrize("seed", SEEDS)
def test_no_playout_beats_the_optimum_and_the_witness_replays(seed):
    result = solved(seed)  # solve() replays the witness and checks its result
    assert result.proved
    best = (result.optimum, result.tiebreak)
    runs = [greedy_actions(seed), heuristic_actions(seed)]
    runs += [random_run(seed, f"random-{i}") for i in range(3)]
    for actions in runs:
        final = GAME.replay(seed, actions)
        if GAME.score(final) is not None:
            assert result.optimum is not None
            assert (GAME.score(final), GAME.tiebreak(final)) <= best


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_the_blind_greedy_player_finishes_within_the_optimum(seed):
    """Its search is the expert's, a round at a time (a few seconds a run): two seeds."""
    result = solved(seed)
    final = GAME.replay(seed, blind_greedy_actions(seed))
    assert GAME.score(final) is not None
    assert (GAME.score(final), GAME.tiebreak(final)) <= (result.optimum, result.tiebreak)


def test_witness_is_the_same_in_another_process():
    """Set order varies with Python's hash seed; the witness must not."""
    seed = SEEDS[0]
    script = (
        "import json, sys; from solver.rallye_raser.solver import find_optimum; "
        f"print(json.dumps(find_optimum({seed!r}).actions))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    output = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(output) == solved(seed).actions


@pytest.mark.parametrize(
    ("seed", "timer", "control"), [("bound-1", 5, 6), ("bound-2", 5, 6), ("bound-3", 6, 3)]
)
def test_lower_bound_never_cuts_the_optimum(seed, timer, control):
    """On a short track late in the run (18 points reachable, but later than the
    bound's first horizon), the search without the bound's pruning and without
    dominance finds the same best (score, round) as the solver."""
    cards = [["...", "x.2", "..."], ["..x", "...", ".1.", "x.."]]
    deck = [DeckEntry(id=f"T{i}", rotated=False) for i in range(len(cards))]
    start: State = {
        **start_state(seed, deck, cards),
        "round": 31,
        "rounds_played": 30,
        "timer": timer,
        "control": control,
    }
    graph = build_graph(Track(seed, start), hope=False, dominance=False)
    best = max(((arc.score, -arc.tail[0]) for arc in graph.finishes.values()), default=None)
    found = optimum_from(start)
    assert best == (found.optimum, found.tiebreak)
