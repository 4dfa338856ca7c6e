"""Each game's exact solver, through its kit, and the checks every answer must pass.

Each game's solver (its kit's `find_optimum`) returns an Optimum; `solve` times it,
replays the witness through the engine and refuses any answer whose replay does not reach
exactly the claimed (score, tie-break): a wrong optimum is never returned.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from puzzles import get_game
from solver.kit import Optimum, SolverError
from solver.registry import kit_of


@dataclass(frozen=True)
class SolveResult:
    game: str
    seed: str
    rules_version: str
    optimum: int | None
    tiebreak: int | None
    proved: bool
    actions: list[Any]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def verify_witness(game_name: str, seed: str, found: Optimum) -> None:
    """Raise SolverError unless the witness replays to exactly the claimed result."""
    game = get_game(game_name)
    final = game.replay(seed, found.actions)
    if found.optimum is None:
        if found.actions:
            raise SolverError(f"{game_name}/{seed}: no finishing run claimed, yet a witness given")
        return
    reached = (game.score(final), game.tiebreak(final))
    if reached != (found.optimum, found.tiebreak):
        raise SolverError(
            f"{game_name}/{seed}: witness replays to {reached}, "
            f"solver claimed {(found.optimum, found.tiebreak)}"
        )


def solve(game_name: str, seed: str) -> SolveResult:
    """The optimum of (game, seed) with hindsight, verified by replaying its witness."""
    game = get_game(game_name)
    game.new_game(seed)  # ValueError for an invalid seed, before any work
    started = time.perf_counter()
    found = kit_of(game_name).find_optimum(seed)
    seconds = time.perf_counter() - started
    verify_witness(game_name, seed, found)
    return SolveResult(
        game=game_name,
        seed=seed,
        rules_version=game.rules_version,
        optimum=found.optimum,
        tiebreak=found.tiebreak,
        proved=found.proved,
        actions=list(found.actions),
        seconds=round(seconds, 4),
    )
