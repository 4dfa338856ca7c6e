"""The weekend rally of Crazy Rally (rule CR-22, docs/rules/crazy-rally.md): the rulebook's
"Consecutive Games", one game a stage, played as the three Crazy Rally dailies of a
Friday, Saturday and Sunday (UTC).

A player enters by playing the first stage. Their rally's score is the sum of the
stages' scores, its tie-break the last stage's; a stage not finished (its attempt ended
unfinished, or its day ended without an official run) ends their rally there, out. While
the weekend runs, a player who has finished every stage so far is still running; once
all three are finished the rally is complete. The standings rank the players still in
(complete or running) by stages finished, then score, then tie-break, equal ones sharing
a rank; those out follow, unranked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from service.storage.league_reads import OfficialResult
from service.storage.rally import StagePlay

RALLY_GAME = "crazy-rally"
STAGES = 3
FRIDAY = 4  # date.weekday()

COMPLETE = "complete"
RUNNING = "running"
OUT = "out"


def is_start(day: date) -> bool:
    """True for a Friday: the day a rally's first stage is played."""
    return day.weekday() == FRIDAY


def start_of(day: date) -> date:
    """The Friday of the latest rally to have started by day (day itself on a Friday)."""
    return day - timedelta(days=(day.weekday() - FRIDAY) % 7)


def first_start_on_or_after(day: date) -> date:
    """The first Friday on or after day."""
    return day + timedelta(days=(FRIDAY - day.weekday()) % 7)


def stage_days(start: date) -> list[date]:
    """The days of the rally starting on start: Friday, Saturday, Sunday."""
    return [start + timedelta(days=offset) for offset in range(STAGES)]


@dataclass(frozen=True)
class Standing:
    """A player's rally as it stands: the stages they finished, in order, and where that
    leaves them."""

    name: str | None
    player_id: str
    finished: list[OfficialResult]
    status: str

    @property
    def total(self) -> int:
        return sum(stage.score for stage in self.finished)

    @property
    def tiebreak(self) -> int | None:
        """The last finished stage's tie-break (None before the first)."""
        return self.finished[-1].tiebreak if self.finished else None

    def key(self) -> tuple[int, int, int]:
        """What ranks it, higher first: stages finished, score, tie-break."""
        return len(self.finished), self.total, self.tiebreak or 0


def standing(
    player_id: str, name: str | None, plays: Sequence[StagePlay], days_over: Sequence[bool]
) -> Standing | None:
    """Where a player's rally stands, given their play of each stage and which stages' days
    are over; None when they have not entered it (never started the first stage)."""
    first = plays[0]
    if first.result is None and not first.attempted:
        return None
    finished: list[OfficialResult] = []
    for play, day_over in zip(plays, days_over, strict=True):
        if play.result is None:
            status = OUT if day_over or play.over else RUNNING
            return Standing(name, player_id, finished, status)
        finished.append(play.result)
    return Standing(name, player_id, finished, COMPLETE)


def ranked(standings: Sequence[Standing]) -> list[tuple[int | None, Standing]]:
    """The players still in, best first, equal ones sharing a rank (and listed by name, as
    the database orders names: service.storage.rally); then those out, unranked, the furthest
    first."""

    def order(entry: Standing) -> tuple[int, int, int, bool, str, str]:
        stages, total, tiebreak = entry.key()
        name = (entry.name or "").lower()
        return -stages, -total, -tiebreak, entry.name is None, name, entry.player_id

    still_in = sorted((s for s in standings if s.status != OUT), key=order)
    out = sorted((s for s in standings if s.status == OUT), key=order)
    ranks: list[tuple[int | None, Standing]] = []
    for position, entry in enumerate(still_in):
        tied = position > 0 and still_in[position - 1].key() == entry.key()
        ranks.append((ranks[-1][0] if tied else position + 1, entry))
    return ranks + [(None, entry) for entry in out]
