"""Properties every engine must have, for all seeds (hypothesis)."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puzzles import GAMES, Game, IllegalAction
from puzzles.playout import random_playout

seeds = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
choosers = st.randoms(use_true_random=False)
property_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

pytestmark = pytest.mark.slow  # these tests take seconds each
games = pytest.mark.parametrize("game", list(GAMES.values()), ids=list(GAMES))


def as_json(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def walk(game: Game, seed: str, rnd: random.Random):
    """Yield (state, legal actions, chosen action) along one random run, then the end."""
    state = game.new_game(seed)
    while not game.is_over(state):
        options = game.legal_actions(state)
        action = rnd.choice(options)
        yield state, options, action
        state = game.apply(state, action)
    yield state, game.legal_actions(state), None


@games
@property_settings
@given(seed=seeds, rnd=choosers)
def test_random_play_ends_within_the_bound(game: Game, seed: str, rnd: random.Random):
    final, actions = random_playout(game, seed, lambda n: rnd.randrange(n))
    assert game.is_over(final)
    assert len(actions) <= game.max_actions


@games
@property_settings
@given(seed=seeds, rnd=choosers)
def test_replay_equals_step_by_step_apply(game: Game, seed: str, rnd: random.Random):
    final, actions = random_playout(game, seed, lambda n: rnd.randrange(n))
    assert game.replay(seed, actions) == final
    assert game.replay(seed, json.loads(json.dumps(actions))) == final


@games
@property_settings
@given(seed=seeds, rnd=choosers)
def test_states_views_and_actions_survive_json(game: Game, seed: str, rnd: random.Random):
    for state, options, _ in walk(game, seed, rnd):
        assert json.loads(json.dumps(state)) == state
        assert json.loads(json.dumps(game.view(state))) == game.view(state)
        assert json.loads(json.dumps(options)) == options


@games
@property_settings
@given(seed=seeds, rnd=choosers)
def test_legal_actions_are_empty_exactly_when_over(game: Game, seed: str, rnd: random.Random):
    for state, options, _ in walk(game, seed, rnd):
        assert (options == []) == game.is_over(state)
        assert len({as_json(a) for a in options}) == len(options), "duplicate legal actions"


@games
@property_settings
@given(seed=seeds, rnd=choosers)
def test_score_is_none_exactly_while_unfinished(game: Game, seed: str, rnd: random.Random):
    for state, _, action in walk(game, seed, rnd):
        if action is not None:
            assert game.score(state) is None
        else:
            assert game.is_finished(state) == (game.score(state) is not None)
            assert isinstance(game.tiebreak(state), int)


@games
@property_settings
@given(seed=seeds, rnd=choosers)
def test_apply_never_changes_its_input(game: Game, seed: str, rnd: random.Random):
    for state, _, action in walk(game, seed, rnd):
        if action is not None:
            before = copy.deepcopy(state)
            game.apply(state, action)
            assert state == before


JUNK_ACTIONS = [
    None,
    0,
    "roll",
    [],
    {},
    [1, 2],
    {"type": "no-such-action"},
    {"type": None},
    {"type": []},
    {"type": {"a": 1}},
]


@games
@property_settings
@given(seed=seeds, rnd=choosers)
def test_actions_outside_legal_actions_are_refused_unchanged(
    game: Game, seed: str, rnd: random.Random
):
    seen: dict[str, object] = {}
    for state, options, _action in walk(game, seed, rnd):
        legal = {as_json(a) for a in options}
        candidates = [a for key, a in seen.items() if key not in legal] + JUNK_ACTIONS
        before = copy.deepcopy(state)
        for illegal in rnd.sample(candidates, min(4, len(candidates))):
            with pytest.raises(IllegalAction) as refused:
                game.apply(state, illegal)
            assert refused.value.reason
            assert state == before
        seen.update((as_json(a), a) for a in options)


@games
@pytest.mark.parametrize("bad_seed", ["", "x" * 65, "white space", "é", "a/b"])
def test_invalid_seeds_raise_value_error(game: Game, bad_seed: str):
    with pytest.raises(ValueError):
        game.new_game(bad_seed)


@games
def test_new_game_is_deterministic_and_seed_dependent(game: Game):
    assert game.new_game("same") == game.new_game("same")
    assert len({as_json(game.new_game(f"s{i}")) for i in range(10)}) > 1


@games
def test_replay_reports_the_index_of_the_illegal_action(game: Game):
    _, actions = random_playout(game, "index", lambda n: 0)
    broken = [*actions[:2], {"type": "no-such-action"}, *actions[2:]]
    with pytest.raises(IllegalAction) as refused:
        game.replay("index", broken)
    assert refused.value.index == 2
