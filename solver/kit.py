"""A game's kit: everything particular to one game that the generic code reads.

A game is one package per layer: `puzzles/<game>/` holds its engine (the rules,
their stakes, what a turn is, what the tie-break counts, what a player remembers
and the states that agree with it), `solver/<game>/` its exact solver, its
reference players and the expert's parts, and `solver/<game>/kit.py` puts them
together, with what the site shows of the game, in one `GameKit`, registered by one
call (solver.registry.register) that registers the engine too. The service and
the front end then serve the game from the kit and the engine alone: no table of
game names, no test of a game's type anywhere else; a game with no board of its own
in web/static/js/boards/ is drawn by the generic board.

A kit is a frozen dataclass of typed parts rather than an abstract class: its
parts are the functions the game's modules already define, put together without
forwarding methods, and mypy checks each against the signature the field names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic

from puzzles.base import Action, Game, S

# A view as the API shows it: the JSON object of the engine's view.
View = dict[str, Any]


class SolverError(RuntimeError):
    """A solver produced an answer that the engine does not confirm."""


@dataclass(frozen=True)
class Optimum:
    """What a game's solver found: the best (score, tie-break) and a witness."""

    optimum: int | None
    tiebreak: int | None
    actions: list[Action]
    proved: bool


@dataclass(frozen=True)
class Rollouts(Generic[S]):
    """How the expert measures a choice by playing on: `outlook` is the (points,
    tie-break) of a base player played on to the end from a state; each decision is
    measured on `samples` sampled states, `screen_samples` of which first screen every
    candidate. A graded decision's loss is measured on further states, never on those
    the expert chose on: `samples` more at a time, up to `grade_samples` in all, while
    its 95% error in points is above `grade_error`."""

    outlook: Callable[[S], tuple[float, float]]
    samples: int
    screen_samples: int
    grade_error: float
    grade_samples: int


@dataclass(frozen=True)
class ExpertParts(Generic[S]):
    """What the expert (solver.expert) needs of a game beyond its engine (whose memory of
    what the player has seen, and states sampled to agree with it, it plays in).

    `base_action` is the base player's pick and `result` the (points, tie-break) of a
    finished run; a point is worth `point_weight` tie-break steps. A choice is measured
    in one of two ways:
    - `rollouts`: every candidate is played on by the base player in sampled states,
      and the expert departs from the base player where another choice measures better;
    - `action_outlook`: the base player is the expert, and it values any action exactly,
      as the expected (points, tie-break) of the run after it, the base playing on.
    """

    base_action: Callable[[S, list[Action]], Action]
    result: Callable[[S], tuple[int, int]]
    point_weight: int
    rollouts: Rollouts[S] | None = None
    action_outlook: Callable[[S, Action], tuple[float, float]] | None = None

    def __post_init__(self) -> None:
        if (self.rollouts is None) == (self.action_outlook is None):
            raise ValueError("an expert measures choices by rollouts or by action_outlook")


@dataclass(frozen=True)
class Mark:
    """One mark of a shared run's strip: how a turn went, with no card, die or value."""

    symbol: str  # in the share text
    words: str  # in the legend and the preview image


@dataclass(frozen=True)
class Example:
    """A position of the "How to play" page: its caption, the kinds of action played on
    the way (the first legal one of the first kind that is legal) and when to stop."""

    caption: str
    kinds: tuple[str, ...]
    wanted: Callable[[View, list[Action]], bool]


@dataclass(frozen=True)
class LessonStep:
    """One step of a guided first game: the action to play, and what the guide says of it."""

    action: Action
    text: str


@dataclass(frozen=True)
class Lesson:
    """A guided first game played to its end: every step, and what the guide says once the
    last one is played."""

    steps: tuple[LessonStep, ...]
    done: str


@dataclass(frozen=True)
class Presentation(Generic[S]):
    """What the site shows of a game beyond its board: a line on the home page, the
    example positions of its "How to play" page, and its share strip's marks, one per
    turn (`turn_mark` reads the state at the end of a turn).

    `lesson`, where a game has one, leads its guided first game (a seed) through a whole
    race in words worked out from the engine; a game without one is guided through its
    first turns in its board's own words."""

    blurb: str
    examples: tuple[Example, ...]
    marks: Mapping[str, Mark]
    turn_mark: Callable[[S], str]
    lesson: Callable[[str], Lesson] | None = None


@dataclass(frozen=True)
class GameKit(Generic[S]):
    """One game: its engine, its exact solver (the optimum of a seed with hindsight, and a
    witness run), its reference players (the yardsticks of a seed's difficulty), the
    expert's parts and what the site shows of it; and, where there is one, a second
    exact solver built another way, whose (optimum, tie-break) checks the first
    (bench.solver). Where the greedy player plans with a sight of chances to come, the
    kit names a blind one too, which aims the same way without it: the grades of a
    player without foresight are measured against that one (bench.calibration)."""

    engine: Game[S, Any, Any]
    find_optimum: Callable[[str], Optimum]
    greedy_actions: Callable[[str], list[Action]]
    heuristic_actions: Callable[[str], list[Action]]
    expert: ExpertParts[S]
    presentation: Presentation[S]
    independent_optimum: Callable[[str], tuple[int | None, int | None]] | None = None
    blind_greedy_actions: Callable[[str], list[Action]] | None = None

    @property
    def name(self) -> str:
        return self.engine.name


# A kit of whichever game: the registry's, and the generic code's.
AnyKit = GameKit[Any]
