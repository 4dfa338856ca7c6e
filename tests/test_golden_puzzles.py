"""Golden puzzles: a seed must replay the same for as long as rules_version stays.

The digest covers several start states and a reproducible random run of each
game. If it changes while rules_version does not, stored runs and optima would
silently change meaning, so the test fails. After a deliberate rules or card
change, bump rules_version and run `python tests/test_golden_puzzles.py --update`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from puzzles import GAMES, Game
from puzzles.playout import random_playout, seeded_chooser

GOLDEN_FILE = Path(__file__).with_name("golden_puzzles.json")
GOLDEN_SEEDS = ("golden-1", "golden-2", "2026-11-30", "Z")


def puzzle_digest(game: Game) -> str:
    material = []
    for seed in GOLDEN_SEEDS:
        final, actions = random_playout(game, seed, seeded_chooser(seed, "golden"))
        material.append([game.new_game(seed), actions, final])
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def current_golden() -> dict[str, dict[str, str]]:
    return {
        name: {"rules_version": game.rules_version, "digest": puzzle_digest(game)}
        for name, game in sorted(GAMES.items())
    }


@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_puzzles_change_only_with_rules_version(name: str):
    stored = json.loads(GOLDEN_FILE.read_text())[name]
    game = GAMES[name]
    digest = puzzle_digest(game)
    if stored["rules_version"] == game.rules_version:
        assert digest == stored["digest"], (
            f"{name}: puzzles changed but rules_version is still {game.rules_version}; "
            "bump it, then update the golden file"
        )
    else:
        pytest.fail(
            f"{name}: rules_version is {game.rules_version}, golden file has "
            f"{stored['rules_version']}; run python tests/test_golden_puzzles.py --update"
        )


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    GOLDEN_FILE.write_text(json.dumps(current_golden(), indent=2) + "\n")
    print(f"wrote {GOLDEN_FILE}")
