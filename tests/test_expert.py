"""The expert (solver.expert): decisions from the view alone, its par, graded decisions.

Rule numbers are those of docs/rules/rallye-raser.md and docs/rules/crazy-rally.md.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from click.testing import CliRunner

from puzzles import GAMES, IllegalAction, get_game
from puzzles.base import State
from puzzles.crazy_rally.engine import TRACK_LENGTH
from puzzles.playout import random_playout, seeded_chooser
from puzzles.rallye_raser.engine import start_state
from puzzles.rallye_raser.track import CARDS, card_sections
from puzzles.rng import dice, shuffled
from service.operations.cli import main
from solver.expert import PlayerView, analyse, choose, grade, par, player_views, sample_name
from solver.rallye_raser.players import heuristic_actions
from solver.registry import KITS, registered
from tests import hill_climb

games = pytest.mark.parametrize("game_name", sorted(GAMES))


@pytest.fixture
def few_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fewer sampled states per decision: the same method, at a tenth of the cost."""
    for name, kit in list(KITS.items()):
        if kit.expert.rollouts is not None:
            rollouts = replace(kit.expert.rollouts, samples=4, screen_samples=2)
            monkeypatch.setitem(
                KITS, name, replace(kit, expert=replace(kit.expert, rollouts=rollouts))
            )


def run_prefix(game_name: str, seed: str, length: int) -> list[Any]:
    """The first actions of a run some player made (a random one: every kind of position)."""
    return random_playout(get_game(game_name), seed, seeded_chooser(seed, "expert"))[1][:length]


def expert_view(game_name: str, state: State, seen: dict[str, Any]) -> dict[str, Any]:
    return {**get_game(game_name).view(state), "seen": seen}


# ----- hidden shuffles: the same view, other unseen parts ------------------------------------
def rallye_raser_reshuffled(state: State, other_seed: str) -> State:
    """The same position with other future dice (RR-7: dice come from the seed by
    position) and the undrawn cards in another order (RR-3: only A and B are seen)."""
    drawn = state["card_a"] + 2
    deck = state["deck"][:drawn] + list(reversed(state["deck"][drawn:]))
    new = start_state(other_seed, deck, [card_sections(entry) for entry in deck])
    dynamic = {k: v for k, v in state.items() if k not in ("seed", "deck", "track", "card_starts")}
    return {**new, **dynamic}


def crazy_rally_reshuffled(state: State, other_seed: str) -> State:
    """The same position with the supply in another order (CR-5: its order is unseen)."""
    return {**state, "supply": shuffled(other_seed, "test", state["supply"])}


RESHUFFLE = {"rallye-raser": rallye_raser_reshuffled, "crazy-rally": crazy_rally_reshuffled}


@games
@pytest.mark.usefixtures("few_samples")
def test_hidden_shuffle_never_changes_the_decision(game_name: str):
    """Other future dice and another order of the undrawn cards (RR-3, RR-7), or of the
    supply (CR-5), under the same view: the expert decides the same."""
    game = get_game(game_name)
    seed = "hidden-1"
    lengths = (5, 12) if game_name == "crazy-rally" else (3, 20, 41)
    for length in lengths:
        actions = run_prefix(game_name, seed, length)
        state = game.replay(seed, actions)
        assert not game.is_over(state)
        seen = list(player_views(game_name, seed, actions))[-1]["seen"]
        other = RESHUFFLE[game_name](state, "hidden-other")
        assert game.view(other) == game.view(state)
        assert other != state  # something unseen did change
        for rng_seed in (0, 1):
            decided = choose(game_name, expert_view(game_name, state, seen), rng_seed)
            assert choose(game_name, expert_view(game_name, other, seen), rng_seed) == decided


def test_rr7_rr3_the_reshuffle_changes_future_dice_and_undrawn_cards():
    game = get_game("rallye-raser")
    state = game.replay("hidden-1", run_prefix("rallye-raser", "hidden-1", 3))
    other = rallye_raser_reshuffled(state, "hidden-other")
    rolls = [dice(s["seed"], state["round"] + 1, 0) for s in (state, other)]
    undrawn = [s["deck"][state["card_a"] + 2 :] for s in (state, other)]
    assert rolls[0] != rolls[1] and undrawn[0] != undrawn[1]


def test_cr5_the_reshuffle_changes_the_supply_order():
    game = get_game("crazy-rally")
    state = game.replay("hidden-1", run_prefix("crazy-rally", "hidden-1", 6))
    assert crazy_rally_reshuffled(state, "hidden-other")["supply"] != state["supply"]


# ----- the expert's input and choice -----------------------------------------------------------
def test_cr7_the_expert_remembers_the_track_of_the_test_round():
    game = get_game("crazy-rally")
    actions = run_prefix("crazy-rally", "memory", 8)
    view = list(player_views("crazy-rally", "memory", actions))[-1]
    state = game.replay("memory", actions)
    assert view["track"] is None  # the engine's view hides it during the race
    assert view["seen"]["track"] == state["track"]
    assert len(view["seen"]["track"]) == TRACK_LENGTH


def test_rr5_rr12_the_expert_remembers_the_moves_of_the_round():
    actions = [{"type": "gear", "gear": 2}]
    view = list(player_views("rallye-raser", "memory", actions))[-1]
    assert view["seen"]["shifted"] and not view["seen"]["reserved"]
    assert {"type": "gear", "gear": 3} not in legal_in_sample("rallye-raser", view)


def legal_in_sample(game_name: str, view: dict[str, Any]) -> list[Any]:
    game = get_game(game_name)
    return game.legal_actions(game.sample_state(view, view["seen"], "sample"))


@games
def test_sampled_states_show_the_players_view(game_name: str):
    game = get_game(game_name)
    actions = run_prefix(game_name, "views", 30)
    state = game.new_game("views")
    checked = 0
    for view, action in zip(player_views(game_name, "views", actions), actions, strict=False):
        sampled = game.sample_state(view, view["seen"], "sample")
        shown = {k: v for k, v in view.items() if k != "seen"}
        assert game.view(sampled) == shown
        assert game.legal_actions(sampled) == game.legal_actions(state)
        state = game.apply(state, action)
        checked += 1
    assert checked == len(actions) > 0  # the view before each action of the prefix


@games
@pytest.mark.usefixtures("few_samples")
def test_choice_is_legal_and_deterministic(game_name: str):
    game = get_game(game_name)
    actions = run_prefix(game_name, "choice", 10)
    state = game.replay("choice", actions)
    view = list(player_views(game_name, "choice", actions))[-1]
    decided = choose(game_name, view, rng_seed=3)
    assert decided in game.legal_actions(state)
    assert choose(game_name, json.loads(json.dumps(view)), rng_seed=3) == decided


def test_the_expert_needs_the_players_memory():
    view = get_game("crazy-rally").view(get_game("crazy-rally").new_game("memory"))
    with pytest.raises(ValueError, match="memory"):
        choose("crazy-rally", view)


def test_the_expert_refuses_a_game_that_is_over():
    game = get_game("crazy-rally")
    _, actions = random_playout(game, "over", seeded_chooser("over"))
    view = list(player_views("crazy-rally", "over", actions))[-1]
    with pytest.raises(ValueError, match="over"):
        choose("crazy-rally", view)


def test_player_view_follows_a_run_step_by_step():
    game = get_game("crazy-rally")
    actions = run_prefix("crazy-rally", "watch", 10)
    watcher = PlayerView("crazy-rally")
    state = game.new_game("watch")
    watcher.see(game.view(state))
    for action in actions:
        state = game.apply(state, action)
        watcher.act(action)
        watcher.see(game.view(state))
    assert watcher.current() == list(player_views("crazy-rally", "watch", actions))[-1]


# ----- par and grading ------------------------------------------------------------------------
@pytest.mark.slow
@games
def test_par_is_the_experts_legal_run(game_name: str):
    game = get_game(game_name)
    result = par(game_name, "par-1")
    final = game.replay("par-1", result["actions"])  # IllegalAction if not legal
    assert game.is_over(final)
    assert (result["par"], result["par_tiebreak"]) == (
        game.score(final),
        game.tiebreak(final) if game.is_finished(final) else None,
    )
    assert set(result) == {"par", "par_tiebreak", "actions", "seconds"}


@pytest.mark.usefixtures("few_samples")
def test_analysis_of_the_experts_own_choices_loses_nothing():
    actions: list[Any] = []
    game = get_game("crazy-rally")
    state = game.new_game("graded")
    watcher = PlayerView("crazy-rally")
    watcher.see(game.view(state))
    while not game.is_over(state):
        action = choose("crazy-rally", watcher.current())
        state = game.apply(state, action)
        actions.append(action)
        watcher.act(action)
        watcher.see(game.view(state))
    graded = analyse("crazy-rally", "graded", actions, optimum=(200, 9))
    assert graded["decisions"], "a run has decisions"
    for decision in graded["decisions"]:
        assert decision["expert"] == decision["action"]
        assert decision["loss"] == {
            "points": 0.0,
            "points_error": 0.0,
            "tiebreak": 0.0,
            "tiebreak_error": 0.0,
        }


@pytest.mark.usefixtures("few_samples")
def test_analysis_splits_the_gap_into_decisions_and_luck():
    actions = run_prefix("crazy-rally", "graded", 40)
    game = get_game("crazy-rally")
    final = game.replay("graded", actions)
    graded = analyse("crazy-rally", "graded", actions, rng_seed=5, optimum=(110, 8))
    points = game.score(final) or 0
    assert graded["result"]["points"] == points
    assert graded["gap"]["points"] == 110 - points
    split = graded["decision_loss"]["points"] + graded["luck"]["points"]
    assert split == pytest.approx(graded["gap"]["points"], abs=1e-6)
    assert graded["rng_seed"] == 5 and graded["samples"] == 4
    decisions = graded["decisions"]
    assert [d["index"] for d in decisions] == sorted(d["index"] for d in decisions)
    for decision in decisions:
        assert decision["action"] == actions[decision["index"]]
        assert decision["expert"] in game.legal_actions(
            game.replay("graded", actions[: decision["index"]])
        )


def test_analysis_refuses_an_illegal_run():
    with pytest.raises(IllegalAction):
        analyse("crazy-rally", "graded", [{"type": "start"}], optimum=(100, 5))


# ----- the command line -----------------------------------------------------------------------
@pytest.mark.usefixtures("few_samples")
def test_rally_par_json():
    result = CliRunner().invoke(main, ["par", "crazy-rally", "cli-par", "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert set(printed) == {"par", "par_tiebreak", "actions", "seconds"}
    final = get_game("crazy-rally").replay("cli-par", printed["actions"])
    assert printed["par"] == get_game("crazy-rally").score(final)


@pytest.mark.slow
@pytest.mark.usefixtures("few_samples")
def test_rally_analyse_json(tmp_path):
    run_file = tmp_path / "run.json"
    actions = heuristic_actions("cli-analyse")[:30]
    run_file.write_text(json.dumps(actions))
    command = ["analyse", "rallye-raser", "cli-analyse", str(run_file), "--json"]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["optimum"]["points"] == 18  # every rr-4 seed measured so far
    assert {"decisions", "decision_loss", "luck", "gap", "rng_seed", "samples"} <= set(printed)


def test_rally_analyse_refuses_an_illegal_run_with_exit_2(tmp_path):
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps([{"type": "move"}]))
    result = CliRunner().invoke(main, ["analyse", "rallye-raser", "x", str(run_file), "--json"])
    assert result.exit_code == 2
    assert json.loads(result.output)["index"] == 0


def test_unknown_cards_are_drawn_from_the_cards_not_seen():
    view = list(player_views("rallye-raser", "cards", []))[-1]
    sampled = get_game("rallye-raser").sample_state(view, view["seen"], "sample")
    seen = {entry["id"] for entry in view["seen"]["cards_seen"]}
    undrawn = [entry["id"] for entry in sampled["deck"][2:]]
    assert len(undrawn) == view["cards_remaining"]
    assert not seen & set(undrawn) and set(undrawn) <= set(CARDS)


def test_a_loss_is_measured_on_samples_other_than_those_the_expert_chose_on():
    """The expert's choice is the best of several noisy means on its samples, so its lead
    there is overstated: a player's loss is read on the sampled states after them."""
    with registered(hill_climb.KIT):
        game, rollouts = get_game(hill_climb.GAME.name), hill_climb.KIT.expert.rollouts
        assert rollouts is not None
        state = game.new_game("climb-1")
        watcher = PlayerView(hill_climb.GAME.name)
        watcher.see(game.view(state))
        view = watcher.current()
        rest = next(a for a in game.legal_actions(state) if a["type"] == "rest")
        graded = grade(hill_climb.GAME.name, view, rest)
        assert graded is not None and graded["expert"] != rest
        fresh = range(rollouts.samples, rollouts.grade_samples)
        states = [game.sample_state(view, view["seen"], sample_name(view, 0, i)) for i in fresh]
        losses = [
            rollouts.outlook(game.apply(s, graded["expert"]))[0]
            - rollouts.outlook(game.apply(s, rest))[0]
            for s in states
        ]
        assert graded["loss"]["points"] == pytest.approx(sum(losses) / len(losses), abs=1e-3)
