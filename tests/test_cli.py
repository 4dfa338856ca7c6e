"""The `rally` command line as the contract describes it, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from puzzles import GAMES, get_game
from puzzles.playout import random_playout, seeded_chooser

pytestmark = pytest.mark.processes  # these tests run service processes

games = pytest.mark.parametrize("game_name", sorted(GAMES))


def rally(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.operations.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@games
def test_replay_json_reports_a_complete_run(game_name: str):
    game = get_game(game_name)
    final, actions = random_playout(game, "cli", seeded_chooser("cli"))
    result = rally("replay", game_name, "cli", "-", "--json", stdin=json.dumps(actions))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "score": game.score(final),
        "tiebreak": game.tiebreak(final),
        "finished": game.score(final) is not None,
        "over": True,
    }


@games
def test_replay_of_an_unfinished_run(game_name: str, tmp_path):
    game = get_game(game_name)
    first = game.legal_actions(game.new_game("cli"))[0]
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps([first]))
    result = rally("replay", game_name, "cli", str(run_file), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["over"] is False and summary["finished"] is False
    assert summary["score"] is None


@games
def test_replay_illegal_action_exits_2_with_index_and_reason(game_name: str):
    game = get_game(game_name)
    first = game.legal_actions(game.new_game("cli"))[0]
    run = [first, {"type": "no-such-action"}]
    result = rally("replay", game_name, "cli", "-", "--json", stdin=json.dumps(run))
    assert result.returncode == 2
    error = json.loads(result.stdout)
    assert error["index"] == 1 and error["reason"] and error["error"]


@games
def test_legal_lists_the_engine_legal_actions(game_name: str):
    game = get_game(game_name)
    state = game.new_game("cli")
    first = game.legal_actions(state)[0]
    result = rally("legal", game_name, "cli", "-", "--json", stdin=json.dumps([first]))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == game.legal_actions(game.apply(state, first))


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("replay", "no-such-game", "s", "-", "--json"), "[]", "unknown game"),
        (("replay", "rallye-raser", "bad seed!", "-", "--json"), "[]", "invalid seed"),
        (("legal", "crazy-rally", "s", "-", "--json"), "{not json", "not valid JSON"),
        (("legal", "crazy-rally", "s", "-", "--json"), '{"a": 1}', "JSON list"),
    ],
)
def test_bad_input_exits_2_with_a_clear_error(args, stdin, message):
    result = rally(*args, stdin=stdin)
    assert result.returncode == 2
    assert message in json.loads(result.stdout)["error"]


def test_play_runs_a_whole_game_from_the_terminal():
    game = get_game("crazy-rally")
    state, answers = game.new_game("term"), []
    while not game.is_over(state):
        answers.append("0")
        state = game.apply(state, game.legal_actions(state)[0])
    result = rally("play", "crazy-rally", "term", stdin="\n".join(answers) + "\n")
    assert result.returncode == 0, result.stderr
    assert f"score: {game.score(state)}" in result.stdout


def test_solve_json_prints_the_contract_fields_and_a_witness_that_replays():
    result = rally("solve", "crazy-rally", "cli-solve", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert set(answer) == {
        "game",
        "seed",
        "rules_version",
        "optimum",
        "tiebreak",
        "proved",
        "actions",
        "seconds",
    }
    game = get_game("crazy-rally")
    final = game.replay("cli-solve", answer["actions"])
    assert (game.score(final), game.tiebreak(final)) == (answer["optimum"], answer["tiebreak"])
    assert answer["proved"] is True and answer["rules_version"] == game.rules_version


def test_solve_batch_prints_a_summary_table():
    result = rally("solve", "crazy-rally", "--count", "2", "--start", "5")
    assert result.returncode == 0, result.stderr
    assert "seeds: 2  unproved: 0" in result.stdout
    assert "solve seconds: median" in result.stdout
    assert "solving crazy-rally" in result.stderr  # the progress bar


@pytest.mark.parametrize(
    "args", [("solve", "crazy-rally"), ("solve", "crazy-rally", "s", "--count", "2")]
)
def test_solve_needs_exactly_one_of_seed_and_count(args):
    result = rally(*args, "--json")
    assert result.returncode == 2
    assert "either SEED or --count" in json.loads(result.stdout)["error"]
