"""What a run shares: a spoiler-free strip and the share text, and the facts both come from.

The strip has one mark per turn (a track card driven in Crazy Rally, a round in Rallye
Raser), saying only how that turn went: within limits, too fast, too slow or a crash;
clean, a Gasfuss, a loss of control, engine damage or the finish. Each game's marks are
its kit's (solver.kit.Presentation). A mark names no card, no die and no value, so
sharing today's daily gives away nothing of its puzzle. The marks come from replaying
the run (a millisecond), never from anything the client sends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from solver.kit import Mark
from solver.registry import KITS, kit_of

SITE = "Rally Daily"


def marks() -> Mapping[str, Mark]:
    """Every game's marks by name (a mark of the same name means the same in any game)."""
    return {name: mark for kit in KITS.values() for name, mark in kit.presentation.marks.items()}


def strip(game_name: str, seed: str, actions: list[Any]) -> list[str]:
    """The marks of a run of seed: one per turn played (a track card driven, a round)."""
    kit = kit_of(game_name)
    game = kit.engine
    state = game.new_game(seed)
    found = []
    for action in actions:
        state = game.apply(state, action)
        if game.turn.ends(action):
            found.append(kit.presentation.turn_mark(state))
    return found


@dataclass(frozen=True)
class ShareFacts:
    """What a run's share says: its puzzle, its result against the optimum, its strip."""

    game: str
    number: int | None  # the daily's number; None for a practice seed
    practice: bool  # not its player's attempt at a daily on the daily's day
    score: int | None  # None: the run did not finish
    tiebreak: int
    optimum: int | None  # None until solved (or when no run can finish)
    optimum_tiebreak: int | None
    par: int | None
    par_tiebreak: int | None
    marks: list[str]
    url: str

    @property
    def title(self) -> str:
        number = f" #{self.number}" if self.number is not None else ""
        practice = " · practice" if self.practice else ""
        return f"{SITE} · {kit_of(self.game).engine.title}{number}{practice}"

    def result(self) -> str:
        """The score against the optimum (and par), with the tie-break where the game's
        share gives it (Rallye Raser's rounds)."""
        parts = [
            self._points(self.score, self.tiebreak) if self.score is not None else "did not finish"
        ]
        if self.optimum is not None:
            parts.append(f"optimum {self._points(self.optimum, self.optimum_tiebreak, unit=False)}")
        if self.par is not None:
            parts.append(f"par {self._points(self.par, self.par_tiebreak, unit=False)}")
        return " · ".join(parts)

    def _points(self, score: int, tiebreak: int | None, unit: bool = True) -> str:
        points = f"{score} points" if unit else str(score)
        reading = kit_of(self.game).engine.tiebreak_rule
        if reading.shared and tiebreak is not None:
            return f"{points} {reading.words(tiebreak)}"
        return points

    @property
    def symbols(self) -> str:
        shown = kit_of(self.game).presentation.marks
        return "".join(shown[mark].symbol for mark in self.marks)

    def text(self) -> str:
        """The share text: title, result, strip, link."""
        return "\n".join([self.title, self.result(), self.symbols, self.url])

    def text_inviting(self, league: str, invite_url: str) -> str:
        """The share text, then an invitation to a league of the player's: its name and its
        invite link."""
        return f"{self.text()}\nJoin my league “{league}” on {SITE}: {invite_url}"

    def legend(self) -> list[tuple[str, str, str]]:
        """(mark, symbol, words) of each mark the strip uses, in the strip's first order."""
        shown = kit_of(self.game).presentation.marks
        return [(mark, shown[mark].symbol, shown[mark].words) for mark in dict.fromkeys(self.marks)]
