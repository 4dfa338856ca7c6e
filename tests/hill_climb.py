"""Hill Climb: a small game of the tests' own, registered to show that a game is served
from its kit alone (tests/test_a_game_of_its_own.py).

Its rules, numbered as a rules document numbers them:

- HC-1 The climb: up a hill of GOAL steps, in at most MAX_TURNS turns, starting with
  START_ENERGY energy (at most MAX_ENERGY).
- HC-2 The wind: each turn the wind adds 0, 1 or 2 steps, fixed by the seed for that
  turn and unseen until the turn is played.
- HC-3 A turn is a push, of effort 1 or 2 (that many steps, for that much energy), or a
  rest (1 energy back); the wind's steps come on top of either.
- HC-4 A push needs the energy it costs.
- HC-5 Reaching the top finishes the climb: it scores the energy left plus 2 for each
  turn left, and fewer turns win a tie. A climb not at the top after MAX_TURNS turns
  ends without a score.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from puzzles.base import (
    Action,
    ActionForms,
    Game,
    IllegalAction,
    Note,
    Stakes,
    TiebreakRule,
    Turn,
)
from puzzles.playout import play_out
from puzzles.rng import Stream
from solver.kit import Example, ExpertParts, GameKit, Mark, Optimum, Presentation, Rollouts

GOAL = 6  # reached by pushes alone, without any wind: every climb can finish
MAX_TURNS = 6
START_ENERGY = 4
MAX_ENERGY = 5
EFFORTS = (1, 2)
WINDS = 3  # a wind adds 0, 1 or 2 steps
ACTION_FORMS: ActionForms = {"push": {"effort": "integer"}, "rest": {}}
Status = Literal["climbing", "finished", "out_of_turns"]


class State(TypedDict):
    seed: str
    turn: int  # turns played
    position: int  # steps climbed
    energy: int
    winds: list[int]  # the wind of each turn played
    status: Status


class View(TypedDict):
    position: int
    goal: int
    energy: int
    turns_left: int
    winds: list[int]
    status: Status
    over: bool
    score: int | None


class Memory(TypedDict):
    """Nothing: the view shows every wind so far."""


def wind(seed: str, turn: int) -> int:
    """HC-2: the wind of a turn (0-based), from the seed."""
    return Stream(seed, f"hill-climb/wind/{turn}").below(WINDS)


def turns_left(state: State) -> int:
    return MAX_TURNS - state["turn"]


def points(state: State) -> int:
    """HC-5: the energy left plus 2 for each turn left."""
    return state["energy"] + 2 * turns_left(state)


class HillClimb(Game[State, View, Memory]):
    name = "hill-climb"
    title = "Hill Climb"
    rules_version = "hc-1"
    max_actions = MAX_TURNS
    action_forms = ACTION_FORMS
    turn = Turn("turn", ("push", "rest"))
    tiebreak_rule = TiebreakRule(
        counts="turns",
        better="fewer",
        unit="turns",
        one="in 1 turn",
        many="in {n} turns",
        shared=True,
    )

    def _new_game(self, seed: str) -> State:
        return {
            "seed": seed,
            "turn": 0,
            "position": 0,
            "energy": START_ENERGY,
            "winds": [],
            "status": "climbing",
        }

    def _apply(self, state: State, action: Action) -> State:
        kind = action.get("type") if isinstance(action, dict) else None
        if kind == "rest" and set(action) == {"type"}:
            return self._turn(state, 0, min(MAX_ENERGY, state["energy"] + 1))
        if kind != "push" or set(action) != {"type", "effort"}:
            raise IllegalAction("rule HC-3 (turn): a turn is a push {type, effort} or a rest")
        effort = action["effort"]
        if type(effort) is not int or effort not in EFFORTS:
            raise IllegalAction("rule HC-3 (turn): the effort of a push is 1 or 2")
        if effort > state["energy"]:
            raise IllegalAction("rule HC-4 (energy): a push needs the energy it costs")
        return self._turn(state, effort, state["energy"] - effort)

    def _turn(self, state: State, steps: int, energy: int) -> State:
        blown = wind(state["seed"], state["turn"])
        position = min(GOAL, state["position"] + steps + blown)
        turn = state["turn"] + 1
        status: Status = "climbing"
        if position >= GOAL:
            status = "finished"
        elif turn >= MAX_TURNS:
            status = "out_of_turns"
        return {
            **state,
            "turn": turn,
            "position": position,
            "energy": energy,
            "winds": [*state["winds"], blown],
            "status": status,
        }

    def legal_actions(self, state: State) -> list[Action]:
        if self.is_over(state):
            return []
        pushes: list[Action] = [
            {"type": "push", "effort": effort} for effort in EFFORTS if effort <= state["energy"]
        ]
        return [*pushes, {"type": "rest"}]

    def is_over(self, state: State) -> bool:
        return state["status"] != "climbing"

    def score(self, state: State) -> int | None:
        return points(state) if state["status"] == "finished" else None

    def tiebreak(self, state: State) -> int:
        return -state["turn"]

    def view(self, state: State) -> View:
        return {
            "position": state["position"],
            "goal": GOAL,
            "energy": state["energy"],
            "turns_left": turns_left(state),
            "winds": list(state["winds"]),
            "status": state["status"],
            "over": self.is_over(state),
            "score": self.score(state),
        }

    def reveals(self, state: State, action: Action) -> bool:
        """HC-2: every turn shows its wind."""
        return isinstance(action, dict) and action.get("type") in ACTION_FORMS

    def resample(self, state: State, sample: str) -> State:
        """HC-2: the winds still to blow drawn from sample."""
        return {**state, "seed": sample}

    def fresh_memory(self) -> Memory:
        return Memory()

    def remember(self, memory: Memory, action: Action | None, view: View) -> None:
        """The view shows every wind so far: there is nothing more to remember."""

    def sample_state(self, view: View, memory: Memory, sample: str) -> State:
        """A climb with this view: the winds to come drawn from sample (HC-2)."""
        return {
            "seed": sample,
            "turn": MAX_TURNS - view["turns_left"],
            "position": view["position"],
            "energy": view["energy"],
            "winds": list(view["winds"]),
            "status": view["status"],
        }

    def stakes(self, state: State, legal: list[Action]) -> Stakes:
        energy = state["energy"]

        def notes(action: Action) -> list[Note]:
            if action["type"] == "rest":
                return [
                    Note(kind="energy", text=f"energy {energy} → {min(MAX_ENERGY, energy + 1)}")
                ]
            effort = action["effort"]
            return [
                Note(kind="energy", text=f"energy {energy} → {energy - effort}"),
                Note(kind="steps", text=f"{effort} steps, and the wind's"),
            ]

        return Stakes(score_now=points(state), notes=[notes(action) for action in legal])


GAME = HillClimb()


def best_from(state: State) -> tuple[tuple[int, int] | None, list[Action]]:
    """The best (score, tie-break) reachable from state with hindsight, and a line to it."""
    if GAME.is_over(state):
        score = GAME.score(state)
        return (None if score is None else (score, GAME.tiebreak(state))), []
    best: tuple[tuple[int, int] | None, list[Action]] = (None, [])
    for action in GAME.legal_actions(state):
        found, line = best_from(GAME.apply(state, action))
        if found is not None and (best[0] is None or found > best[0]):
            best = (found, [action, *line])
    return best


def find_optimum(seed: str) -> Optimum:
    """Every line searched: a climb has at most 3 choices a turn for 6 turns."""
    found, line = best_from(GAME.new_game(seed))
    if found is None:
        return Optimum(None, None, [], True)
    return Optimum(found[0], found[1], line, True)


def greedy_step(state: State, options: list[Action]) -> Action:
    """The hardest push there is energy for."""
    return options[-2] if len(options) > 1 else options[-1]


def steady_step(state: State, options: list[Action]) -> Action:
    """A push of 1, resting when out of energy."""
    return options[0]


def greedy_actions(seed: str) -> list[Action]:
    return play_out(GAME, GAME.new_game(seed), greedy_step)[1]


def heuristic_actions(seed: str) -> list[Action]:
    return play_out(GAME, GAME.new_game(seed), steady_step)[1]


def result(state: State) -> tuple[int, int]:
    score = GAME.score(state)
    return (0, -MAX_TURNS) if score is None else (score, GAME.tiebreak(state))


def outlook(state: State) -> tuple[float, float]:
    return result(play_out(GAME, state, steady_step)[0])


MARKS = {"calm": Mark("⬜", "calm"), "breeze": Mark("🟩", "breeze"), "gust": Mark("💨", "gust")}


def wind_mark(state: State) -> str:
    """The mark of a turn: the wind it met."""
    return ("calm", "breeze", "gust")[state["winds"][-1]]


KIT = GameKit(
    engine=GAME,
    find_optimum=find_optimum,
    greedy_actions=greedy_actions,
    heuristic_actions=heuristic_actions,
    expert=ExpertParts(
        base_action=steady_step,
        result=result,
        point_weight=MAX_TURNS + 1,
        rollouts=Rollouts(
            outlook=outlook, samples=4, screen_samples=2, grade_error=0.5, grade_samples=8
        ),
    ),
    presentation=Presentation(
        blurb="A short climb against the wind: push or rest, and reach the top with energy"
        " to spare.",
        examples=(
            Example("The foot of the hill, before the first turn.", (), lambda _v, _l: True),
            Example(
                "After a push: the wind of the turn shown.",
                ("push",),
                lambda view, _legal: bool(view["winds"]),
            ),
        ),
        marks=MARKS,
        turn_mark=wind_mark,
    ),
)
