"""The Crazy Rally solver: exact, cross-checked, and consistent with the engine."""

from __future__ import annotations

import random
from dataclasses import replace
from functools import cache

import pytest

from puzzles import get_game
from puzzles.crazy_rally.cards import ADJUSTMENTS, EVENTS, TRACK
from puzzles.crazy_rally.engine import EVENT_BONUS
from solver import solve
from solver.crazy_rally.model import KIND_OF, Node, Race, finish_bonus, races
from solver.crazy_rally.players import greedy_actions, heuristic_actions
from solver.crazy_rally.solver import (
    best_first,
    best_run,
    find_optimum,
    independent_optimum,
)

pytestmark = pytest.mark.slow  # these tests take seconds each

GAME = get_game("crazy-rally")
PROPERTY_SEEDS = [f"prop-{i}" for i in range(24)]


@cache
def optimum(seed: str):
    return find_optimum(seed)


def result(seed: str, actions: list) -> tuple[int | None, int]:
    final = GAME.replay(seed, actions)
    return GAME.score(final), GAME.tiebreak(final)


def beats(found: tuple[int | None, int], best) -> bool:
    score, tiebreak = found
    return score is not None and (score, tiebreak) > (best.optimum, best.tiebreak)


# ----- cross-checks over seeds ---------------------------------------------------------------
# daily-8 once exposed a bound that was too low after the last card.
@pytest.mark.parametrize("seed", ["cross-0", "cross-1", "cross-2", "cross-3", "cross-4", "daily-8"])
def test_independent_search_agrees_with_or_tools(seed: str):
    best = optimum(seed)
    assert independent_optimum(seed) == (best.optimum, best.tiebreak)
    assert best.proved


@pytest.mark.parametrize("seed", PROPERTY_SEEDS)
def test_witness_replays_and_no_player_beats_the_optimum(seed: str):
    best = optimum(seed)
    assert best.optimum is not None
    assert result(seed, best.actions) == (best.optimum, best.tiebreak)
    assert not beats(result(seed, greedy_actions(seed)), best)
    assert not beats(result(seed, heuristic_actions(seed)), best)
    chooser = random.Random(seed)
    for _ in range(5):
        state = GAME.new_game(seed)
        while not GAME.is_over(state):
            state = GAME.apply(state, chooser.choice(GAME.legal_actions(state)))
        assert not beats((GAME.score(state), GAME.tiebreak(state)), best)


def test_solve_verifies_the_witness_and_is_deterministic():
    first = solve("crazy-rally", "det-seed")
    assert first.proved and first.optimum is not None
    assert solve("crazy-rally", "det-seed").actions == first.actions


# ----- the compact model against the engine ---------------------------------------------------
def node_of(state: dict) -> Node:
    """The engine state as the model's (turn, draws, hand kinds, speed, manoeuvrability, body)."""
    draws = 46 - len(state["supply"])  # no reshuffle is reachable (solver.crazy_rally.model)
    hand = tuple(sorted(KIND_OF[card] for card in state["hand"]))
    return (state["turn"], draws, hand, state["speed"], state["manoeuvrability"], state["body"])


def race_of(seed: str, state: dict) -> Race:
    return next(race for race in races(seed) if list(race.setup) == state["applied"])


@pytest.mark.parametrize("seed", [f"model-{i}" for i in range(12)])
def test_model_successors_are_the_engines_transitions(seed: str):
    """At every state of a random run, the model's moves reach exactly the engine's results."""
    chooser = random.Random(seed)
    state = GAME.new_game(seed)
    while state["phase"] != "race":
        state = GAME.apply(state, chooser.choice(GAME.legal_actions(state)))
    race = race_of(seed, state)
    assert node_of(state) == race.start()
    while not GAME.is_over(state):
        engine = set()
        for action in GAME.legal_actions(state):
            after = GAME.apply(state, action)
            if GAME.is_over(after) and after["outcome"] != "finished":
                continue  # eliminated or crashed on the last card: no score, left out
            engine.add((node_of(after), after["distance"] - state["distance"]))
        model = {(child, gain) for _, child, gain in race.successors(node_of(state))}
        assert model == engine
        state = GAME.apply(state, chooser.choice(GAME.legal_actions(state)))


def exhaustive_best(race: Race, node: Node) -> tuple[int, int] | None:
    """The best (points still to come, final speed) from node, trying every move."""
    memo: dict[Node, tuple[int, int] | None] = {}

    def best(node: Node) -> tuple[int, int] | None:
        if node[0] == len(race.track):
            return finish_bonus(node), node[3]
        if node not in memo:
            values = [
                (gain + rest[0], rest[1])
                for _, child, gain in race.successors(node)
                if (rest := best(child)) is not None
            ]
            memo[node] = max(values, default=None)
        return memo[node]

    return best(node)


# The first turn from which a node's best continuation is found by trying every one.
FIRST_EXHAUSTED_TURN = 10


@pytest.mark.parametrize("seed", [f"bound-{i}" for i in range(6)])
def test_upper_bound_is_never_below_the_best_continuation(seed: str):
    chooser = random.Random(seed)
    race = races(seed)[chooser.randrange(8)]
    node = race.start()
    checked_turns = []
    while True:
        if node[0] >= FIRST_EXHAUSTED_TURN:
            best = exhaustive_best(race, node)
            assert best is None or race.upper_bound(node) >= best[0]
            checked_turns.append(node[0])
        options = list(race.successors(node)) if node[0] < len(race.track) else []
        if not options:
            break
        node = chooser.choice(options)[1]
    # Every node of the random path from that turn to its end, at least one.
    assert checked_turns == list(range(FIRST_EXHAUSTED_TURN, node[0] + 1)) != []


def test_upper_bound_counts_every_event_held_after_the_last_card():
    race = races("bound-last")[0]
    # The last card drawn was an event: no draw is left to bring another one.
    draws = 1 + next(i for i, card in enumerate(race.supply) if card in EVENTS and i >= 14)
    finished = (14, draws, (KIND_OF["B01"], *sorted(KIND_OF[e] for e in EVENTS)), 6, 3, 2)
    assert race.upper_bound(finished) == finish_bonus(finished) == 8 * EVENT_BONUS


@pytest.mark.parametrize("seed", ["short-0", "short-1", "short-2", "short-3"])
def test_pruned_graph_agrees_with_exhaustive_search_on_shortened_tracks(seed: str):
    """The first seven cards of a real seed: every state is tried, with no bound at all."""
    shortened = [replace(race, track=race.track[:7]) for race in races(seed)]
    exhaustive = max(filter(None, (exhaustive_best(race, race.start()) for race in shortened)))
    found = best_run(shortened)
    assert found is not None
    assert (found.score, found.tiebreak) == exhaustive == best_first(shortened)


# ----- small positions worked out by hand -------------------------------------------------------
def short_race(track: list[str], hand: list[str], supply: list[str], **car: int) -> Race:
    values = {"max_speed": 8, "manoeuvrability": 7, "body": 7, **car}
    return Race(
        setup=("B02", "Y02", "P02"),
        hand=tuple(hand),
        supply=tuple(supply),
        supply_kinds=tuple(KIND_OF[card] for card in supply),
        track=tuple(TRACK[card] for card in track),
        **values,
    )


def white(speed: int, difficulty: int | None = None) -> str:
    return next(
        c.id
        for c in TRACK.values()
        if c.colour == "white" and c.speed == speed and difficulty in (None, c.difficulty)
    )


def adjustment(speed_up: int, braking: int) -> str:
    return next(
        c.id
        for c in ADJUSTMENTS.values()
        if (c.speed_up, c.braking) == (speed_up, braking) and c.colour != "purple"
    )


def event_of(effect: str, nth: int = 0) -> str:
    return [e.id for e in EVENTS.values() if e.effect == effect][nth]


def test_overspeed_is_a_free_brake_on_a_two_card_track():
    """Track: white 11, then white 6 (difficulty 1); hand 2/2 and a +1 event; car maximum 7.

    Turn 1: accelerate 2 to speed 7, the car's maximum (the +1 event would only be
    clamped): 7 points. Turn 2 draws another 2/2: braking to 5 scores 5, while
    accelerating is clamped to 7 (1 body) and the white 6 cuts it to 6 for
    1 + 1 manoeuvrability: 6 points. The event stays in hand. Nothing beats
    7 + 6 + the bonus, and the final speed on a white 6 is at most 6.
    """
    card = adjustment(2, 2)
    race = short_race(
        [white(11), white(6, 1)],
        [card, event_of("speed_up")],
        [adjustment(2, 2), adjustment(1, 1), adjustment(1, 2)],
        max_speed=7,
    )
    found = best_run([race])
    assert found is not None
    assert (found.score, found.tiebreak) == (7 + 6 + EVENT_BONUS, 6)
    assert found.moves == [(KIND_OF[card], True, None), (KIND_OF[card], True, None)]
    assert best_first([race]) == (7 + 6 + EVENT_BONUS, 6)


def test_a_draw_two_event_on_the_last_card_can_cost_the_held_events():
    """Rule CR-9 after the event's draw: one white 11, car maximum 6.

    The hand after the turn's draw: a 1/1 card, draw-two, +1 and -1. Playing
    draw-two brings two more events: four events and no adjustment card, so the
    hand is replaced by four adjustment cards and no event is left (6 points).
    Holding the three events scores 6 + 3 bonuses (+1 is useless at the maximum).
    """
    race = short_race(
        [white(11)],
        [adjustment(1, 1), event_of("draw_two"), event_of("speed_up")],
        [event_of("slow_down"), event_of("speed_up", 1), event_of("slow_down", 1),
         *(adjustment(*values) for values in [(2, 2), (1, 1), (1, 2), (2, 1)])],
        max_speed=6,
    )  # fmt: skip
    found = best_run([race])
    assert found is not None
    assert (found.score, found.tiebreak) == (6 + 3 * EVENT_BONUS, 6)
    assert found.moves == [(KIND_OF[adjustment(1, 1)], True, None)]
    assert best_first([race]) == (6 + 3 * EVENT_BONUS, 6)
    draw_two = KIND_OF[event_of("draw_two")]
    after = [child for move, child, _ in race.successors(race.start()) if move[2] == draw_two]
    assert after and all(finish_bonus(child) == 0 for child in after)


def test_a_crash_on_the_last_card_is_avoided():
    """One white 4 of difficulty 3, no manoeuvrability left, a 1/1 card in hand.

    Accelerating to 6 is too fast by 2 (loses 5): a crash on the last card, no
    score. Braking to 4 is fine: 4 points, final speed 4.
    """
    race = short_race([white(4, 3)], [adjustment(1, 1)], [adjustment(1, 1)], manoeuvrability=0)
    found = best_run([race])
    assert found is not None and (found.score, found.tiebreak) == (4, 4)
    assert found.moves == [(KIND_OF[adjustment(1, 1)], False, None)]


def test_no_finishing_run_when_every_card_eliminates_the_car():
    """Body strength 1 and only purple cards: every move costs the last body point."""
    race = short_race([white(11)], ["P01"], ["P02", "P03"], body=1)
    assert best_run([race]) is None
    assert best_first([race]) is None
