"""The project's random generator: golden vectors pin it forever (see puzzles/rng.py)."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from puzzles import rng


def test_golden_vectors():
    # These values must never change: if they do, every stored run replays differently.
    assert rng.RNG_VERSION == 1
    assert rng.dice("golden", 1, 1) == (4, 4, 3)
    assert rng.dice("golden", 7, 3) == (2, 4, 1)
    assert rng.dice("x", 25, 2) == (2, 2, 6)
    assert rng.shuffled("golden", "deck", list(range(10))) == [2, 8, 9, 4, 6, 5, 3, 1, 7, 0]
    assert rng.coin_flips("golden", "rot", 9) == [False, True] + [False] * 7
    assert rng.Stream("golden", "t").below(10**12) == 418533910368


def test_dice_are_fixed_by_position_not_by_history():
    assert rng.dice("abc", 3, 2) == rng.dice("abc", 3, 2)
    assert rng.dice("abc", 3, 2, count=2) == rng.dice("abc", 3, 2)[:2]


def test_different_positions_and_seeds_differ():
    rolls = {rng.dice("abc", r, k) for r in range(1, 6) for k in range(1, 4)}
    assert len(rolls) > 10
    assert rng.dice("abc", 1, 1) != rng.dice("abd", 1, 1) or rng.dice("abc", 1, 2) != rng.dice(
        "abd", 1, 2
    )


def test_dice_are_uniform_enough():
    counts = Counter(v for r in range(1, 400) for v in rng.dice("uniform", r, 1))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    assert all(150 < c < 250 for c in counts.values()), counts


def test_shuffle_is_a_permutation_fixed_by_seed_and_label():
    items = list(range(20))
    a = rng.shuffled("seed", "deck", items)
    assert sorted(a) == items
    assert a == rng.shuffled("seed", "deck", items)
    assert a != rng.shuffled("seed", "other", items)
    assert items == list(range(20))


@pytest.mark.parametrize("bad", ["", "a" * 65, "has space", "ümlaut", "semi;colon", None, 7])
def test_invalid_seeds_raise_value_error(bad):
    with pytest.raises(ValueError, match="invalid seed"):
        rng.validate_seed(bad)


@given(st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True))
def test_valid_seeds_pass(seed):
    assert rng.validate_seed(seed) == seed
