"""Two reference players for Crazy Rally, to measure how hard a seed is.

- the greedy player takes, at every step, the legal action whose immediate
  result is best (points so far, then manoeuvrability, then body strength);
- the heuristic player plays like a careful human: it remembers the track from
  the test round, sees only its own view, plays a speed event only when the turn
  gains more than the bonus the event is worth held (rule CR-20), trades a
  little distance for manoeuvrability and body strength, and plays a draw-two
  event only when its hand runs short of adjustment cards. At the setup it
  counts a tyre twice while the car's maximum speed is below 10. It counts body
  strength less the purple cards its hand will force it to play (CR-12), and it
  does not arrive at the next track card where no card left in its hand avoids
  a crash there (CR-17, CR-18).

The heuristic player is also the expert's rollout policy (solver.crazy_rally.expert):
where it plays worse than the expert would, every decision that leads there is
graded as a loss, so its blunders show as overcounted grades.
"""

from __future__ import annotations

from puzzles.base import Action
from puzzles.crazy_rally.cards import ADJUSTMENTS, EVENTS, TRACK, AdjustmentCard, TrackCard
from puzzles.crazy_rally.engine import EVENT_BONUS, CrazyRally
from puzzles.crazy_rally.rules import TurnResult, resolve_turn
from puzzles.crazy_rally.states import CarSheet, State, View
from puzzles.playout import Policy, play_out

GAME = CrazyRally()
CRASH_PENALTY = 30
MANOEUVRABILITY_WEIGHT = 0.4
BODY_WEIGHT = 1.5
LOW_BODY = 3  # below this body strength every point lost weighs much more
LOW_BODY_PENALTY = 4
THIN_HAND = 2  # adjustment cards in hand, the played one included
THIN_HAND_DRAW_VALUE = 4
# The maximum speed the setup aims for: most white track cards are 10 or below (CR-1).
TYRE_TARGET = 10
# What a card drawn is, on average: a purple card or another adjustment card (CR-1, CR-5).
_DRAWN = len(ADJUSTMENTS) + len(EVENTS)
PURPLE_SHARE = sum(card.costs_body for card in ADJUSTMENTS.values()) / _DRAWN
OTHER_SHARE = sum(not card.costs_body for card in ADJUSTMENTS.values()) / _DRAWN
# Arriving where the next card ends the run (CR-18, CR-20) weighs like a run lost.
RUN_LOST_PENALTY = 100


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
            return max(options, key=lambda a: self._setup_value(view["car"], a["card"]))
        if view["phase"] == "preview":
            self.track = [card["id"] for card in view["track"] or []]
            return options[0]
        return max(options, key=lambda a: self._drive_value(view, a))

    @staticmethod
    def _setup_value(car: CarSheet, card_id: str) -> tuple[int, int]:
        """More symbols first, then more wheels; a tyre counts twice while the car's
        maximum speed is below TYRE_TARGET (CR-4). With symbols alone a car kept
        wheels and nuts over tyres, and the expert's better pick at each setup step
        was charged again at the next one, though one of them was enough."""
        symbols = ADJUSTMENTS[card_id].symbols
        tyres = min(symbols.count("tyre"), max(0, TYRE_TARGET - car["max_speed"]))
        return len(symbols) + tyres, symbols.count("wheel")

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
        body = result.body - self._forced_purples(
            view, action, turns_left=len(self.track) - turn - 1
        )
        value += MANOEUVRABILITY_WEIGHT * result.manoeuvrability + BODY_WEIGHT * body
        value -= LOW_BODY_PENALTY * max(0, LOW_BODY - body)
        if not last:
            upcoming = TRACK[self.track[turn + 1]]
            value -= self._approach_penalty(result.speed, upcoming)
            value -= self._crash_ahead_penalty(
                view, action, result, upcoming, turn + 2 == len(self.track)
            )
        return value

    @staticmethod
    def _forced_purples(view: View, action: Action, turns_left: int) -> float:
        """The purple cards the hand will have to play in the turns left, on average: a
        card is played every turn (CR-11), and when the other adjustment cards held and
        drawn run out it is a purple one, costing 1 body each (CR-12). Playing a purple
        card now or later then costs the same; holding one costs nothing only when the
        race ends before it must be played."""
        left = _adjustments_left(view, action)
        purples = sum(card.costs_body for card in left)
        short = turns_left - (len(left) - purples) - OTHER_SHARE * turns_left
        return min(purples + PURPLE_SHARE * turns_left, max(0.0, short))

    @staticmethod
    def _approach_penalty(speed: int, upcoming: TrackCard) -> float:
        """Arriving far too fast at a white card (or too slow at a red one) costs later."""
        if upcoming.is_minimum:
            return max(0, upcoming.speed - speed - 3)
        return max(0, speed - upcoming.speed - 3)

    @staticmethod
    def _crash_ahead_penalty(
        view: View, action: Action, result: TurnResult, upcoming: TrackCard, upcoming_last: bool
    ) -> float:
        """A crash on the next card that no card left in hand avoids (CR-15 to CR-17):
        the run is lost when its damage eliminates the car (CR-18) or it is the last
        card (CR-20)."""
        left = _adjustments_left(view, action)
        effects = [card["effect"] for card in view["events"] if card["id"] != action["event"]]
        miss = _closest_miss(result.speed, view["car"]["max_speed"], left, effects, upcoming)
        if not miss or result.manoeuvrability >= upcoming.difficulty + miss:
            return 0.0
        if upcoming_last or result.body <= upcoming.damage:
            return RUN_LOST_PENALTY
        return CRASH_PENALTY + BODY_WEIGHT * upcoming.damage


def _adjustments_left(view: View, action: Action) -> list[AdjustmentCard]:
    """The adjustment cards in hand once action's card is played."""
    return [ADJUSTMENTS[card["id"]] for card in view["hand"] if card["id"] != action["card"]]


def _closest_miss(
    speed: int, max_speed: int, cards: list[AdjustmentCard], effects: list[str], track: TrackCard
) -> int:
    """How far over a white card's value (under a red card's) the speed stays at best
    with one of cards and one speed event next turn; the card drawn is not counted."""
    if track.is_minimum:
        fastest = speed + max((card.speed_up for card in cards), default=0)
        fastest = min(max_speed, fastest + ("speed_up" in effects))
        return max(0, track.speed - fastest)
    slowest = max(0, speed - max((card.braking for card in cards), default=0))
    slowest = max(0, slowest - ("slow_down" in effects))
    return max(0, slowest - track.speed)


def heuristic_actions(seed: str) -> list[Action]:
    """A careful human's run: no hindsight beyond the view (and the remembered track)."""
    return play(seed, HeuristicPlayer().choose)
