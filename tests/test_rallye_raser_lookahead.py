"""The round search behind Rallye Raser's par (solver/rallye_raser/lookahead.py)."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

from puzzles.rallye_raser.engine import RallyeRaser
from solver.expert import PlayerView
from solver.rallye_raser.leaf_fit import RoundEnd, fit
from solver.rallye_raser.lookahead import (
    LEAF,
    LEAF_FILE,
    DialOdds,
    Leaf,
    LookaheadPlayer,
    dial_points,
    roll_outcomes,
)

GAME = RallyeRaser()


def test_rr7_every_roll_is_summed_over_with_its_probability() -> None:
    for count, distinct in ((1, 6), (2, 21), (3, 56)):
        outcomes = roll_outcomes(count)
        assert len(outcomes) == distinct
        assert math.isclose(sum(chance for _, chance in outcomes), 1.0)
        assert all(list(faces) == sorted(faces) for faces, _ in outcomes)


def test_rr24_rr25_the_dials_at_the_finish_score_a_clean_finish_or_an_unclean_one() -> None:
    # Timer 5 and control 6 with no check left: clean 2*6+6, unclean 2*4+6 (RR-24).
    odds = DialOdds(0.0, 0.8, 0.8)
    assert math.isclose(dial_points(5, 6, 0, odds), 0.8 * 18 + 0.2 * 14)
    assert dial_points(0, 6, 3, DialOdds(0.3, 0.8, 0.8)) == 0.0  # RR-22: no timer, no score


def test_rr21_more_control_never_reaches_fewer_points() -> None:
    for checks in range(4):
        for timer in range(1, 7):
            values = [dial_points(timer, control, checks, LEAF.odds) for control in range(7)]
            assert values == sorted(values)


def _views(seed: str, actions: int) -> list[Any]:
    """The player's view after each of the first actions of the search's own run."""
    state, player, watcher = GAME.new_game(seed), LookaheadPlayer(), PlayerView(GAME.name)
    watcher.see(dict(GAME.view(state)))
    views: list[Any] = [watcher.current()]
    for _ in range(actions):
        action = player.choose(state, GAME.legal_actions(state))
        state = GAME.apply(state, action)
        watcher.act(action)
        watcher.see(dict(GAME.view(state)))
        views.append(watcher.current())
    return views


def test_the_search_decides_from_the_view_alone() -> None:
    """Two states that agree with one view, their unseen dice and cards drawn from
    different samples, get the same choice (RR-3, RR-7: nothing unseen is read)."""
    for view in _views("lookahead-hidden", 12)[::3]:
        picks = []
        for sample in ("first", "second"):
            state = GAME.sample_state(view, view["seen"], sample)
            picks.append(LookaheadPlayer().choose(state, GAME.legal_actions(state)))
        assert picks[0] == picks[1]
        assert picks[0] in GAME.legal_actions(GAME.sample_state(view, view["seen"], "third"))


def test_the_shipped_leaf_is_its_generators_output() -> None:
    """leaf.json holds what leaf_fit writes: the command, the training seeds (never the
    seeds the par is measured on) and figures that load into a Leaf and back."""
    document = json.loads(LEAF_FILE.read_text())
    assert document["generator"].startswith("python -m solver.rallye_raser.leaf_fit ")
    assert not document["training_seeds"].startswith("quality-")
    leaf = Leaf.load()
    assert leaf.as_json() == document["leaf"]
    assert 0 <= leaf.odds.mishap <= 1 and leaf.rows_per_round > 0


def test_the_fit_recovers_the_figures_that_made_the_races() -> None:
    """Round ends whose final points are what some odds predict, and whose rounds are a
    linear function of rows, gear and damage, give back those figures."""
    odds, ends = DialOdds(0.15, 0.9, 0.7), []
    for timer, control, checks, gear in itertools.product(range(3, 7), range(7), range(4), (1, 3)):
        reserve, damaged, rows = control % 2 == 0, checks % 2 == 1, float(3 * checks + control)
        points = dial_points(timer, control, checks, odds) + 0.5 * reserve
        left = 0.25 + rows / 1.6 + (3 - gear) * 0.5 + damaged * 0.75
        end = RoundEnd(timer, control, checks, 0, reserve, gear, damaged, rows, left, points)
        ends.append(end)
    assert fit(ends) == Leaf(odds, 0.5, 1.6, 0.5, 0.75, 0.25)
