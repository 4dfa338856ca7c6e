"""What a run shares: a spoiler-free strip and the share text, and the facts both come from.

The strip has one mark per track card driven (Crazy Rally) or per round (Rallye Raser),
saying only how that card or round went: within limits, too fast, too slow or a crash;
clean, a Gasfuss, a loss of control, engine damage or the finish. It names no card, no
die and no value, so sharing today's daily gives away nothing of its puzzle. The marks
come from replaying the run (a millisecond), never from anything the client sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from puzzles import GAMES

SITE = "Rally Daily"
# Each mark: its symbol in the share text, and its words (the legend, the image's).
MARKS: dict[str, tuple[str, str]] = {
    "within_limits": ("🟩", "within limits"),
    "too_fast": ("🟥", "too fast"),
    "too_slow": ("🟦", "too slow"),
    "crash": ("💥", "crash"),
    "clean": ("🟩", "clean round"),
    "gasfuss": ("🟨", "Gasfuss"),
    "loss_of_control": ("🌀", "loss of control"),
    "engine_damage": ("🔧", "engine damage"),
    "finish": ("🏁", "finish"),
}
# A Rallye Raser round shows its worst event: engine damage, then a loss of control,
# then a Gasfuss; a round without any is clean.
ROUND_EVENTS = ("finish", "engine_damage", "loss_of_control", "gasfuss")


def _crazy_rally_mark(last: dict[str, Any]) -> str:
    if last["crashed"]:
        return "crash"
    if last["too_fast"]:
        return "too_fast"
    return "too_slow" if last["too_slow"] else "within_limits"


def _rallye_raser_mark(events: list[dict[str, Any]]) -> str:
    happened = {event["type"] for event in events}
    return next((kind for kind in ROUND_EVENTS if kind in happened), "clean")


def strip(game_name: str, seed: str, actions: list[Any]) -> list[str]:
    """The marks of a run of seed: one per track card driven or per round played."""
    game = GAMES[game_name]
    state = game.new_game(seed)
    marks = []
    for action in actions:
        state = game.apply(state, action)
        if action["type"] == "drive":
            marks.append(_crazy_rally_mark(state["last"]))
        elif action["type"] == "move":
            marks.append(_rallye_raser_mark(state["last_round"]))
    return marks


@dataclass(frozen=True)
class ShareFacts:
    """What a run's share says: its puzzle, its result against the optimum, its strip."""

    game: str
    number: int | None  # the daily's number; None for a practice seed
    practice: bool  # not an official run
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
        return f"{SITE} · {GAMES[self.game].title}{number}{practice}"

    def result(self) -> str:
        """The score against the optimum (and par), with the rounds for Rallye Raser."""
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
        if self.game == "rallye-raser" and tiebreak is not None:
            rounds = -tiebreak
            return f"{points} in {rounds} round{'' if rounds == 1 else 's'}"
        return points

    @property
    def symbols(self) -> str:
        return "".join(MARKS[mark][0] for mark in self.marks)

    def text(self) -> str:
        """The share text: title, result, strip, link."""
        return "\n".join([self.title, self.result(), self.symbols, self.url])

    def legend(self) -> list[tuple[str, str, str]]:
        """(mark, symbol, words) of each mark the strip uses, in the strip's first order."""
        seen = dict.fromkeys(self.marks)
        return [(mark, *MARKS[mark]) for mark in seen]
