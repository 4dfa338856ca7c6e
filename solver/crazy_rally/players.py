"""Two reference players for Crazy Rally, to measure how hard a seed is.

- the greedy player takes, at every step, the legal action whose immediate
  result is best (points so far, then manoeuvrability, then body strength);
- the heuristic player plays like a careful human: it remembers the track from
  the test round, sees only its own view, plays a speed event only when the turn
  gains more than the bonus the event is worth held (rule CR-20), trades a
  little distance for manoeuvrability and body strength, and plays a draw-two
  event only when its hand runs short of adjustment cards.
"""

from __future__ import annotations

from puzzles.base import Action
from puzzles.crazy_rally.cards import ADJUSTMENTS, TRACK, TrackCard
from puzzles.crazy_rally.engine import EVENT_BONUS, CrazyRally
from puzzles.crazy_rally.rules import resolve_turn
from puzzles.crazy_rally.states import State, View
from puzzles.playout import Policy, play_out

GAME = CrazyRally()
CRASH_PENALTY = 30
MANOEUVRABILITY_WEIGHT = 0.4
BODY_WEIGHT = 1.5
LOW_BODY = 3  # below this body strength every point lost weighs much more
LOW_BODY_PENALTY = 4
THIN_HAND = 2  # adjustment cards in hand, the played one included
THIN_HAND_DRAW_VALUE = 4


def play(seed: str, policy: Policy[State]) -> list[Action]:
    return play_out(GAME, GAME.new_game(seed), policy)[1]


# ----- greedy -------------------------------------------------------------------------------
def _greedy_key(state: State) -> tuple[int, int, int, int]:
    view = GAME.view(state)
    alive = view["outcome"] in (None, "finished")
    points = view["distance"] + EVENT_BONUS * len(view["events"])
    return alive, points, view["manoeuvrability"], view["body"]


def greedy_actions(seed: str) -> list[Action]:
    """At every step the legal action with the best immediate result (first on ties)."""
    return play(
        seed, lambda state, options: max(options, key=lambda a: _greedy_key(GAME.apply(state, a)))
    )


# ----- heuristic ----------------------------------------------------------------------------
class HeuristicPlayer:
    """Decides from the view only, remembering the track shown in the test round."""

    def __init__(self) -> None:
        self.track: list[str] = []

    def choose(self, state: State, options: list[Action]) -> Action:
        view = GAME.view(state)
        if view["phase"] == "setup":
            return max(options, key=lambda a: self._setup_value(a["card"]))
        if view["phase"] == "preview":
            self.track = [card["id"] for card in view["track"] or []]
            return options[0]
        return max(options, key=lambda a: self._drive_value(view, a))

    @staticmethod
    def _setup_value(card_id: str) -> tuple[int, int]:
        symbols = ADJUSTMENTS[card_id].symbols
        return len(symbols), symbols.count("wheel")

    def _drive_value(self, view: View, action: Action) -> float:
        events = {card["id"]: card["effect"] for card in view["events"]}
        effect = events.get(action["event"]) if action["event"] else None
        turn = view["turn"]
        car = view["car"]
        result = resolve_turn(
            view["speed"], view["manoeuvrability"], view["body"], car["max_speed"],
            car["manoeuvrability"], ADJUSTMENTS[action["card"]],
            action["mode"] == "accelerate", effect, TRACK[self.track[turn]],
        )  # fmt: skip
        last = turn == len(self.track) - 1
        if result.body <= 0 or (last and result.crashed):
            return float("-inf")
        value: float = result.speed - (EVENT_BONUS if effect else 0)
        if effect == "draw_two":
            # Worth it only when the hand is running out of adjustment cards.
            value += THIN_HAND_DRAW_VALUE if len(view["hand"]) <= THIN_HAND else float("-inf")
        value -= CRASH_PENALTY * result.crashed
        value += MANOEUVRABILITY_WEIGHT * result.manoeuvrability + BODY_WEIGHT * result.body
        value -= LOW_BODY_PENALTY * max(0, LOW_BODY - result.body)
        if not last:
            value -= self._approach_penalty(result.speed, TRACK[self.track[turn + 1]])
        return value

    @staticmethod
    def _approach_penalty(speed: int, upcoming: TrackCard) -> float:
        """Arriving far too fast at a white card (or too slow at a red one) costs later."""
        if upcoming.is_minimum:
            return max(0, upcoming.speed - speed - 3)
        return max(0, speed - upcoming.speed - 3)


def heuristic_actions(seed: str) -> list[Action]:
    """A careful human's run: no hindsight beyond the view (and the remembered track)."""
    return play(seed, HeuristicPlayer().choose)
