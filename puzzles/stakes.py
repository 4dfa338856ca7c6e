"""What each legal action costs or does, for any game: served with the legal actions,
so the browser says it before a choice is made without knowing a rule."""

from __future__ import annotations

from typing import Any

from puzzles.base import Action, Game, State
from puzzles.crazy_rally import stakes as crazy_rally_stakes
from puzzles.rallye_raser import stakes as rallye_raser_stakes
from puzzles.rallye_raser.engine import RallyeRaser


def stakes(engine: Game, state: State, legal: list[Action]) -> dict[str, Any]:
    """{"score_now": the score if the run finished now, "notes": notes per legal action}."""
    if isinstance(engine, RallyeRaser):
        return rallye_raser_stakes.stakes(engine, state, legal)
    return crazy_rally_stakes.stakes(state, legal)
