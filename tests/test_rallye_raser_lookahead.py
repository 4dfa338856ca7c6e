"""The round search behind Rallye Raser's par (solver/rallye_raser/lookahead.py)."""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
from collections import Counter
from typing import Any

import pytest

from bench.agreement import deeper_look
from bench.calibration import reference_players
from bench.par_ledger import causes
from puzzles.rallye_raser.engine import RallyeRaser
from solver.expert import PlayerView, analyse, player_views
from solver.rallye_raser import expert as rallye_raser_expert
from solver.rallye_raser import grade_fit
from solver.rallye_raser.leaf_fit import ODDS_GRID, RoundEnd, fit, odds_given
from solver.rallye_raser.lookahead import (
    LEAF,
    LEAF_FILE,
    ROUND_PRICE,
    UNFINISHED,
    Ahead,
    DialOdds,
    Leaf,
    LookaheadPlayer,
    Outlook,
    dial_points,
    outlook_of,
    roll_outcomes,
)
from solver.rallye_raser.players import distance_outlook, heuristic_actions
from solver.registry import kit_of

GAME = RallyeRaser()


def test_rr7_every_roll_is_summed_over_with_its_probability() -> None:
    for count, distinct in ((1, 6), (2, 21), (3, 56)):
        outcomes = roll_outcomes(count)
        assert len(outcomes) == distinct
        assert math.isclose(sum(chance for _, chance in outcomes), 1.0)
        assert all(list(faces) == sorted(faces) for faces, _ in outcomes)


def test_rr24_rr25_the_dials_at_the_finish_score_a_clean_finish_or_an_unclean_one() -> None:
    # Timer 5 and control 6 with no check left: clean 2*6+6, unclean 2*4+6 (RR-24).
    odds = DialOdds(0.0, 0.8, 0.8, 0.0)
    assert math.isclose(dial_points(5, 6, 0, odds), 0.8 * 18 + 0.2 * 14)
    assert dial_points(0, 6, 3, DialOdds(0.3, 0.8, 0.8, 0.0)) == 0.0  # RR-22: no timer, no score


def test_rr21_more_control_never_reaches_fewer_points() -> None:
    for checks in range(4):
        for timer in range(1, 7):
            values = [dial_points(timer, control, checks, LEAF.odds) for control in range(7)]
            assert values == sorted(values)


def test_rr15_rr21_a_check_in_gear_3_can_cost_a_control_point_for_its_route() -> None:
    # Timer 4, control 2, one check left. Free, gear 3 gives timer 5 and control 1, and a
    # clean finish 2*6+1 = 13; a gear-1 check gives 2*4+4 = 12. When the route of gear 3
    # costs a control point to fit, gear 3 ends at 2*6+0 = 12 and is no better.
    free, dear = DialOdds(0.0, 1.0, 1.0, 0.0), DialOdds(0.0, 1.0, 1.0, 1.0)
    assert dial_points(4, 2, 1, free) == 13
    assert dial_points(4, 2, 1, dear) == 12
    for timer, control, checks in itertools.product(range(1, 7), range(7), range(4)):
        assert dial_points(timer, control, checks, dear) <= dial_points(
            timer, control, checks, free
        )


def test_rr5_after_a_gear_1_check_onto_a_card_of_one_row_gear_3_costs_a_control_point() -> None:
    """A car that crosses in gear 1 onto a card of one row stands on its last row in gear
    1: the next check in gear 3 needs a shift of two steps (RR-5). The leaf counts it
    only for a card in view at the round's start (RR-3: cards A and B)."""
    starts = [0, 4, 8, 10, 14, 16, 17, 18, 20, 24]
    outlook = Outlook(9, 18, 0.0, 20)
    assert outlook.then_gear_cost((16, "L"), starts) == 1  # next card: row 17 alone
    assert outlook.then_gear_cost((10, "M"), starts) == 0  # next card: rows 14 and 15
    assert Outlook(9, 17, 2.5, 20).then_gear_cost((16, "L"), starts) == 0  # not in view
    # Waiting on a card's last row with the timer full, then checking in gear 1, is no
    # better than checking in gear 1 now when the card after has one row: the car that
    # sat 16 rounds on such a row (quality-4) valued waiting 0.8 points above crossing.
    waiting = dial_points(6, 4, 3, LEAF.odds, 1, 1)
    crossed = dial_points(5, 6, 2, LEAF.odds, 1)
    assert waiting <= crossed < dial_points(6, 4, 3, LEAF.odds, 1, 0)
    for timer, control, checks in itertools.product(range(1, 7), range(7), range(4)):
        dear = dial_points(timer, control, checks, LEAF.odds, 0, 1)
        assert dear <= dial_points(timer, control, checks, LEAF.odds, 0, 0)


def test_rr15_the_first_control_point_is_worth_more_than_a_round_to_the_shipped_leaf() -> None:
    """The shipped odds price the control a full route of gear 3 needs: with both dials
    full and every check to come, the first control point spent is worth more than the
    price of a round, so the search does not spend it to save one. Odds that let gear 3
    come off without it valued that point at 0.09 (docs/puzzle-quality.md)."""
    first_point = dial_points(6, 6, 8, LEAF.odds) - dial_points(6, 5, 8, LEAF.odds)
    assert first_point > 2 * ROUND_PRICE


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


@pytest.mark.parametrize("outlook", [outlook_of, distance_outlook], ids=["expert", "blind-greedy"])
def test_the_search_decides_from_the_view_alone(outlook: Any) -> None:
    """Two states that agree with one view, their unseen dice and cards drawn from
    different samples, get the same choice (RR-3, RR-7: nothing unseen is read), by the
    expert's aim and by the blind greedy player's."""
    for view in _views("lookahead-hidden", 12)[::3]:
        picks = []
        for sample in ("first", "second"):
            state = GAME.sample_state(view, view["seen"], sample)
            player = LookaheadPlayer(outlook=outlook)
            picks.append(player.choose(state, GAME.legal_actions(state)))
        assert picks[0] == picks[1]
        assert picks[0] in GAME.legal_actions(GAME.sample_state(view, view["seen"], "third"))


def test_the_blind_greedy_player_values_a_finish_then_distance_then_the_dials() -> None:
    """A finish above any round's end (the better score first, RR-24), an unfinished
    race below all (RR-22, RR-26), and between, fewer rounds to go above any dials."""
    outlook = distance_outlook(GAME.new_game("blind-greedy"), LEAF)
    further = Ahead(1, 0, 3, 0, 0, 20.0, False)
    richer = Ahead(6, 6, 3, 0, 0, 20.5, False)
    finishes = [Ahead(t, 0, 0, None, 0, 30.0, False, 2.0 * t) for t in (1, 2)]
    worths = [outlook.value(ahead)[0] for ahead in (UNFINISHED, richer, further, *finishes)]
    assert worths == sorted(worths) and len(set(worths)) == len(worths)
    assert worths[0] == -math.inf


def test_calibration_grades_a_blind_greedy_player_where_the_greedy_one_peeks() -> None:
    """Rallye Raser's greedy player plans a round seeing its rerolls' dice, so the grades
    of choices made without that sight are checked on its blind twin as well; Crazy
    Rally's greedy player sees nothing to come and has none."""
    assert list(reference_players(kit_of("rallye-raser"))) == [
        "greedy",
        "blind greedy",
        "heuristic",
    ]
    assert list(reference_players(kit_of("crazy-rally"))) == ["greedy", "heuristic"]


def _expert_run(seed: str, length: int) -> list[Any]:
    state, player, actions = GAME.new_game(seed), LookaheadPlayer(), []
    for _ in range(length):
        action = player.choose(state, GAME.legal_actions(state))
        state = GAME.apply(state, action)
        actions.append(action)
    return actions


def test_a_run_played_as_the_expert_loses_nothing_by_its_decisions() -> None:
    """The grades are the search's own values, exact over the dice of the round: a run of
    the search's own choices is graded at exactly no loss, so a player who plays as well
    as par is told they lost nothing."""
    actions = _expert_run("graded-exact", 30)
    graded = analyse(GAME.name, "graded-exact", actions, optimum=(18, -13))
    assert graded["samples"] == 0 and graded["decisions"]
    assert graded["decision_loss"] == {
        "points": 0.0,
        "points_error": 0.0,
        "tiebreak": 0.0,
        "tiebreak_error": 0.0,
    }
    assert all(d["action"] == d["expert"] for d in graded["decisions"])


def test_no_choice_is_worth_more_than_the_experts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Graded by the odds the search plays by, every decision of another player's run
    costs the points and rounds the search weighs (a round at ROUND_PRICE points) at
    least nothing: the search's choice is the best it sees. The run includes drives with
    dice that miss their lanes (RR-17) and control spent die by die (RR-15), each
    valued as played."""
    play_odds_only = LookaheadPlayer(dataclasses.replace(LEAF, graded_odds=None))
    monkeypatch.setattr(rallye_raser_expert, "LOOKAHEAD", play_odds_only)
    actions = heuristic_actions("graded-exact")[:60]
    graded = analyse(GAME.name, "graded-exact", actions, optimum=(18, -13))
    kinds = {d["action"]["type"] for d in graded["decisions"]}
    assert {"gear", "place", "move", "control"} <= kinds
    for decision in graded["decisions"]:
        loss = decision["loss"]
        assert loss["points_error"] == 0.0 and loss["tiebreak_error"] == 0.0
        assert loss["points"] + ROUND_PRICE * loss["tiebreak"] >= -1e-3  # rounded to 0.001


def test_a_rounds_ends_average_to_what_a_grade_reports_of_its_start() -> None:
    """RR-7: the ends of a round played as the search chooses, each with its chance, add
    up to one and average to the (points, rounds) the grade reports of the round's
    start, in every gear (RR-5) and with a reserve die held (RR-12): what grade_fit
    reads under other odds is the grade's own sum."""
    state, player, held = GAME.new_game("graded-exact"), LookaheadPlayer(), 0
    for action in _expert_run("graded-exact", 160):
        if state["phase"] == "shift" and not state["shifted"]:
            held += state["reserve"] is not None
            for search in player.gear_searches(state, every=True).values():
                ends = search.start_ends(state["reserve"])
                points, rounds = search.start_parts(state["reserve"])
                assert math.isclose(sum(ends.values()), 1.0)
                read = sum(p * end.points(LEAF, LEAF.grade_odds) for end, p in ends.items())
                assert math.isclose(read, points, abs_tol=1e-9)
                assert math.isclose(sum(p * end.rounds for end, p in ends.items()), rounds)
        state = GAME.apply(state, action)
    assert held


def test_the_search_weighs_a_rounds_end_by_its_odds_and_a_grade_by_the_graded_odds() -> None:
    """A round's end with no control left (RR-15, RR-17): the search weighs it by the
    odds it plays by, less the price of its rounds; a grade reports its points by the
    graded odds, and by the play's own when a leaf has none."""
    play, graded = DialOdds(0.2, 1.0, 1.0, 1.0), DialOdds(0.1, 1.0, 0.8, 0.5)
    ahead = Ahead(4, 0, 3, 0, 0, 20.0, False)
    leaf = Leaf(play, 0.0, 1.2, 0.0, 0.5, 0.0, graded)
    worth, parts = Outlook(9, 18, 0.0, 10, leaf).value(ahead)
    assert worth == dial_points(4, 0, 3, play, 0, 0) - ROUND_PRICE * 20.0
    assert parts == (dial_points(4, 0, 3, graded, 0, 0), 20.0)
    assert parts[0] > dial_points(4, 0, 3, play, 0, 0)  # a free gear 3 is within reach
    worth, parts = Outlook(9, 18, 0.0, 10, dataclasses.replace(leaf, graded_odds=None)).value(ahead)
    assert worth == parts[0] - ROUND_PRICE * parts[1]


def test_the_graded_odds_make_a_rounds_end_worth_what_the_next_round_expects() -> None:
    """grade_fit, in small: round ends one round from the finish (RR-24), whose next
    round loses a control point on the way and finishes cleanly as chosen odds say,
    give back those odds among their neighbours, for each player and control left."""
    true = DialOdds(0.1, 0.9, 1.0, 1.0)
    steps = []
    for timer, control in itertools.product(range(2, 7), range(1, 7)):
        ends: dict[Ahead, float] = {}
        for hurt, chance in ((0, 1 - true.mishap), (1, true.mishap)):
            left = control - hurt
            clean, unclean = 2 * min(6, timer + 1) + left, 2 * (timer - 1) + left
            for points, likely in ((clean, true.clean_finish), (unclean, 1 - true.clean_finish)):
                finish = Ahead(timer, left, 0, None, 0, 21.0, False, float(points))
                ends[finish] = ends.get(finish, 0.0) + chance * likely
        ended = Ahead(timer, control, 0, 0, 0, 20.0, False)
        steps.append(grade_fit.RoundStep("heuristic", control, ended, ends))
    near = [true._replace(mishap=0.2), true, true._replace(clean_finish=0.8)]
    assert grade_fit.fit(steps, LEAF, near) == true
    assert grade_fit.per_run(steps, LEAF, true, 1)["heuristic"] == 0.0
    assert grade_fit.per_run(steps, LEAF, near[0], 1)["heuristic"] > 0.0


def test_the_deeper_look_plays_both_choices_in_the_same_futures() -> None:
    """bench.agreement's deeper look, in small: the expert plays on after each choice in
    the same sampled futures, so the same choice twice differs by nothing, and a
    differing choice is measured as a mean with its error."""
    actions = heuristic_actions("graded-exact")
    graded = analyse(GAME.name, "graded-exact", actions, optimum=(18, -13))
    late = [d for d in graded["decisions"] if d["action"] != d["expert"]][-1]
    view = list(player_views(GAME.name, "graded-exact", actions))[late["index"]]
    assert deeper_look(GAME.name, view, late["expert"], late["expert"], 3) == (0.0, 0.0)
    mean, error = deeper_look(GAME.name, view, late["action"], late["expert"], 3)
    assert math.isfinite(mean) and math.isfinite(error) and error >= 0


def test_the_shipped_leaf_is_its_generators_output() -> None:
    """leaf.json holds what leaf_fit writes: the command, the training seeds (never the
    seeds the par is measured on) and figures that load into a Leaf and back; odds
    chosen by the par's strength instead of the fit's say so, and keep the fit's."""
    document = json.loads(LEAF_FILE.read_text())
    assert document["generator"].startswith("python -m solver.rallye_raser.leaf_fit ")
    assert not document["training_seeds"].startswith("quality-")
    chosen = document["odds_chosen"]
    assert chosen["measured_by"].startswith("python -m bench.par_ledger ")
    assert DialOdds(**chosen["fitted"]) != Leaf.load().odds
    leaf = Leaf.load()
    assert leaf.as_json() == document["leaf"]
    assert 0 <= leaf.odds.mishap <= 1 and leaf.rows_per_round > 0
    graded = document["graded"]
    assert graded["generator"].startswith("python -m solver.rallye_raser.grade_fit ")
    assert graded["training_seeds"].startswith("fit-")
    assert leaf.graded_odds is not None and leaf.graded_odds != leaf.odds
    before, after = graded["per_run_with_play_odds"], graded["per_run_with_graded_odds"]
    for player in ("greedy", "heuristic"):
        assert abs(after[player]) < abs(before[player])


def test_the_fit_recovers_the_figures_that_made_the_races() -> None:
    """Round ends whose final points are what some odds predict, and whose rounds are a
    linear function of rows, gear and damage, give back those figures."""
    odds, ends = DialOdds(0.15, 0.9, 0.7, 0.5), []
    for timer, control, checks, gear in itertools.product(range(3, 7), range(7), range(4), (1, 3)):
        reserve, damaged, rows = control % 2 == 0, checks % 2 == 1, float(3 * checks + control)
        points = dial_points(timer, control, checks, odds) + 0.5 * reserve
        left = 0.25 + rows / 1.6 + (3 - gear) * 0.5 + damaged * 0.75
        end = RoundEnd(timer, control, checks, 0, reserve, gear, damaged, rows, left, points)
        ends.append(end)
    near = [odds._replace(mishap=0.1), odds, odds._replace(top_gear_control=0.25)]
    near += [odds._replace(top_gear_check=0.75), odds._replace(clean_finish=0.85)]
    assert fit(ends, near) == Leaf(odds, 0.5, 1.6, 0.5, 0.75, 0.25)
    assert odds in ODDS_GRID


def test_leaf_fit_holds_the_odds_it_is_given() -> None:
    """leaf_fit --odds: four chances, in DialOdds' order; anything else is refused."""
    assert odds_given("0.2,1,1,1") == DialOdds(0.2, 1.0, 1.0, 1.0)
    for wrong in ("0.2,1,1", "0.2,1,1,1.5", "a,b,c,d"):
        with pytest.raises((argparse.ArgumentTypeError, ValueError)):
            odds_given(wrong)


def test_the_par_ledger_puts_each_spent_control_point_down_to_its_cause() -> None:
    """bench.par_ledger: a shift of two gears costs a control point (RR-5), and a control
    point spent on a placed die is spent fitting dice (RR-15)."""
    state = GAME.new_game("quality-0")
    shifted = GAME.apply(state, {"type": "gear", "gear": 3})
    assert causes(state, {"type": "gear", "gear": 3}, shifted) == Counter(two_step_shifts=1)
    rolled = GAME.apply(shifted, {"type": "roll"})
    place = next(a for a in GAME.legal_actions(rolled) if a["type"] == "place")
    placed = GAME.apply(rolled, place)
    control = next(a for a in GAME.legal_actions(placed) if a["type"] == "control")
    assert causes(placed, control, GAME.apply(placed, control)) == Counter(fit_dice=1)
