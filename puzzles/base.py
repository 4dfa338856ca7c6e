"""The one interface every game implements.

Modelled on OpenSpiel's game/state API and Simon Tatham's backend interface: a
game is fully described by its name and a seed; states and actions are plain
JSON values; the engine is pure (state in, new state out) and deterministic.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypedDict, TypeVar

from puzzles.rng import validate_seed

Action = Any  # a plain JSON value: dict, list, str, int, bool or None
# The JSON form of an action's field besides "type". A service checks forms before any
# engine sees a value (Python reads `true` as 1); which values are legal is the engine's call.
FieldForm = Literal["integer", "string", "string or null"]
# Each action type -> its fields besides "type" -> their form.
ActionForms = dict[str, dict[str, FieldForm]]
# Each engine types its own states, views and memories (TypedDicts of its package): a
# state (S) in and out, the view of one (V), and what a player remembers (M) that the view
# of the moment no longer shows (their own moves of the turn, the cards gone by), which
# with the view is all the player knows (OpenSpiel's information state).
S = TypeVar("S")
V = TypeVar("V")
M = TypeVar("M")
# The generic code and the tests hold a state, view or memory of whichever game as its
# JSON object; they hand it back only to the game that made it.
State = dict[str, Any]
Memory = dict[str, Any]
# Which way of a tie-break's count is better, in words, and the sign that turns the count
# into a tie-break where higher is better.
Better = Literal["fewer", "lower", "more", "higher"]
BETTER_SIGNS: dict[Better, int] = {"fewer": -1, "lower": -1, "more": 1, "higher": 1}


@dataclass(frozen=True)
class TiebreakRule:
    """What a game's tie-break counts and which way is better.

    `Game.tiebreak` gives a number where higher is better whatever the game, so that runs
    rank by (score, tie-break) alike: the count itself, or minus the count when fewer is
    better (`of`).
    """

    counts: str  # what the tie-break counts, in words: "rounds", "final speed"
    better: Better
    # How the site says it: what an amount of it is called ("rounds", "speed"), the
    # reading of a count of 1 ("in 1 round") and of any other, "{n}" standing for the
    # count ("in {n} rounds"), and whether a shared result gives it beside the score.
    unit: str
    one: str
    many: str
    shared: bool

    @property
    def sign(self) -> int:
        """The tie-break is sign x the count: -1 when fewer (or lower) is better, else 1."""
        return BETTER_SIGNS[self.better]

    def of(self, count: int) -> int:
        """The tie-break of a run whose count is count."""
        return self.sign * count

    def describe(self) -> str:
        """In words: "rounds, fewer is better, given as minus the rounds"."""
        given = f", given as minus the {self.counts}" if self.sign < 0 else ""
        return f"{self.counts}, {self.better} is better{given}"

    def words(self, tiebreak: int) -> str:
        """A tie-break as a person reads it: "in 17 rounds", "final speed 9"."""
        count = self.sign * tiebreak
        return self.one if count == 1 else self.many.format(n=count)

    @property
    def rule(self) -> str:
        """The rule in a sentence: "Tie-break: rounds, fewer is better."."""
        return f"Tie-break: {self.counts}, {self.better} is better."

    @property
    def heading(self) -> str:
        """A column of tie-breaks: "Rounds (fewer is better)"."""
        return f"{self.counts.capitalize()} ({self.better} is better)"


class Note(TypedDict):
    """One thing a legal action costs or does, said before it is played."""

    kind: str  # what the note is about: "loss_of_control", "speed", ...
    text: str  # the note in words


class Stakes(TypedDict):
    """What every legal action of a state costs or does (served with the legal actions)."""

    score_now: int  # the score if the run finished now
    notes: list[list[Note]]  # one list per legal action, in the same order


@dataclass(frozen=True)
class Turn:
    """What a game calls one turn, and the types of the actions that end one: replays step
    by turns, a shared run shows a mark per turn, the guided first game counts them."""

    name: str
    ends_with: tuple[str, ...]

    def ends(self, action: Action) -> bool:
        return isinstance(action, dict) and action.get("type") in self.ends_with


class IllegalAction(Exception):  # noqa: N818 - the public contract fixes this name
    """An action that the rules do not allow here.

    `reason` names the rule broken; `index` is the position of the action in a
    replayed run (None when a single action was applied).
    """

    def __init__(self, reason: str, index: int | None = None) -> None:
        super().__init__(reason if index is None else f"action {index}: {reason}")
        self.reason = reason
        self.index = index


class Game(ABC, Generic[S, V, M]):
    """A seeded solitaire: the rules engine of one game.

    A Game[S, V, M] plays states of type S, shows views of type V and keeps memories of
    type M; the registry holds games of every type (AnyGame). Subclasses implement
    `_new_game`, `legal_actions`, `_apply`, `is_over`, `score`, `tiebreak`, `view`,
    `stakes`, `reveals`, `resample` and the memory of a player (`fresh_memory`,
    `remember`, `sample_state`), and say what a turn is and what the tie-break counts;
    validation of seeds and of the game being over, replay and the cutting of a line
    into batches are shared here.

    What the player has not been shown (a die not rolled yet, a card not drawn or
    not dealt face up) is the engine's to say, with `reveals` and `resample`. The
    rules depend on it only through the actions that reveal: whether any action is
    legal, the reason of a refusal and the stakes said before it, and the whole
    outcome of an action that reveals nothing, are the same in every state that
    `resample` can give (tests/test_hidden_information.py).

    A player who never sees the state, as the expert (solver.expert), knows the view
    and what earlier views showed: `fresh_memory` and `remember` keep the latter, and
    `sample_state` makes a state that agrees with both, the unseen drawn from a sample.
    """

    name: str
    rules_version: str
    title: str
    # No legal run is longer than this many actions (the service refuses longer runs).
    max_actions: int
    action_forms: ActionForms
    turn: Turn
    # What `tiebreak` counts and which way is better, said beside it in each engine.
    tiebreak_rule: TiebreakRule

    def new_game(self, seed: str) -> S:
        """The start state of the seed (ValueError for an invalid seed)."""
        return self._new_game(validate_seed(seed))

    def apply(self, state: S, action: Action) -> S:
        """A new state after action; the given state is never changed.

        Raises IllegalAction naming the rule when the action is not legal.
        """
        if self.is_over(state):
            raise IllegalAction("the game is over: no further action is legal")
        return self._apply(state, action)

    def replay(self, seed: str, actions: Iterable[Action]) -> S:
        """The state after applying actions in order from the seed's start."""
        state = self.new_game(seed)
        for index, action in enumerate(actions):
            try:
                state = self.apply(state, action)
            except IllegalAction as error:
                raise IllegalAction(error.reason, index) from None
        return state

    def batches(self, state: S, actions: Iterable[Action]) -> list[list[Action]]:
        """Actions legal in order from state, cut after each one that reveals something:
        the fewest requests that play them on an attempt (each batch may end with a
        revealing action, never go on after one)."""
        cut: list[list[Action]] = [[]]
        for action in actions:
            cut[-1].append(action)
            if self.reveals(state, action):
                cut.append([])
            state = self.apply(state, action)
        return [batch for batch in cut if batch]

    def is_finished(self, state: S) -> bool:
        """True when the run is over and reached the finish (so it has a score)."""
        return self.score(state) is not None

    @abstractmethod
    def _new_game(self, seed: str) -> S: ...

    @abstractmethod
    def _apply(self, state: S, action: Action) -> S: ...

    @abstractmethod
    def legal_actions(self, state: S) -> list[Action]:
        """Every legal action, in a stable order; empty exactly when the game is over."""

    @abstractmethod
    def is_over(self, state: S) -> bool: ...

    @abstractmethod
    def score(self, state: S) -> int | None:
        """The score of a finished run; None while running or when it ended unfinished."""

    @abstractmethod
    def tiebreak(self, state: S) -> int:
        """The tie-break of the run so far, higher is better: `tiebreak_rule.of` its count."""

    @abstractmethod
    def view(self, state: S) -> V:
        """What the player may see now: no undrawn card, no die not yet rolled."""

    @abstractmethod
    def reveals(self, state: S, action: Action) -> bool:
        """Whether action, were it legal in state, could show the player something they
        have not been shown (a die rolled, a card drawn or dealt): decided from what the
        player has seen and the action alone, so the same in every resampled state."""

    @abstractmethod
    def resample(self, state: S, sample: str) -> S:
        """A state the player cannot tell from state: everything they have been shown so
        far kept (the view, and what earlier views showed), everything else (the order of
        cards not drawn, dice not rolled) drawn from the string sample instead of the
        seed. OpenSpiel's resample_from_infostate."""

    @abstractmethod
    def fresh_memory(self) -> M:
        """What a player remembers before the first view: nothing seen yet."""

    @abstractmethod
    def remember(self, memory: M, action: Action | None, view: V) -> None:
        """Update memory with the player's own action (None at the start) and the view
        after it."""

    @abstractmethod
    def sample_state(self, view: V, memory: M, sample: str) -> S:
        """A state with this view, agreeing with what memory holds: everything the player
        has not seen drawn from the string sample. The state of a player who knows only
        the view and the memory (OpenSpiel's resample_from_infostate)."""

    @abstractmethod
    def stakes(self, state: S, legal: list[Action]) -> Stakes:
        """What each of the legal actions costs or does, said before it is played, and the
        score if the run finished now: the browser says it without knowing a rule. Nothing
        here may tell what the view does not show."""


# A game of whichever state, view and memory types: the registry's, and the generic code's.
AnyGame = Game[Any, Any, Any]
