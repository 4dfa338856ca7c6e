"""What the Crazy Rally expert needs of its game: the player's memory, and states
that agree with what the player has seen.

The player's view (docs/rules/crazy-rally.md, View) shows the car, the hand and
the last turn. The player also remembers the track shown in the test round
(CR-7; the optimum and the heuristic player know it too) and every card that
came into the hand or went to the discard pile, so the supply's cards are
known, not their order (CR-5, CR-8). During the setup the pairs of the colours
still to come and the track are unseen (CR-3, CR-6).

A sampled state orders the supply, and deals what the setup has not shown yet,
from a sample string, never from the puzzle's seed.
"""

from __future__ import annotations

from typing import Any

from puzzles.base import Action, State
from puzzles.crazy_rally.cards import ADJUSTMENT_COLOURS, DECK_IDS, adjustments_of
from puzzles.crazy_rally.engine import CrazyRally, track_order
from puzzles.playout import play_out
from puzzles.rng import shuffled
from solver.crazy_rally.players import HeuristicPlayer

GAME = CrazyRally()
# One point of score outweighs any final speed (at most 7 + 9 tyres).
POINT_WEIGHT = 64


def fresh_memory() -> dict[str, Any]:
    return {"track": [], "start_hand": [], "drawn": [], "discard": []}


def _ids(cards: list[dict[str, Any]]) -> list[str]:
    return [card["id"] for card in cards]


def remember(memory: dict[str, Any], action: Action | None, view: dict[str, Any]) -> None:
    """Update memory with the player's own action (None at the start) and the view after it."""
    if view["phase"] == "preview":
        memory["track"] = _ids(view["track"])
        memory["start_hand"] = _ids(view["hand"]) + _ids(view["events"])
    kind = action["type"] if action else None
    if kind in ("start", "drive"):
        memory["drawn"] += view["drawn"]
        memory["discard"] += view["redrawn"]
    if action is not None and kind == "drive":
        last: dict[str, Any] = view["last"]
        played = [action["card"]] + ([action["event"]] if action["event"] else [])
        memory["drawn"] += last["event_drawn"]
        memory["discard"] += played + last["event_redrawn"]


def _pairs(view: dict[str, Any], sample: str) -> dict[str, list[str]]:
    """The dealt pairs: the one shown, and the colours still to come dealt from sample."""
    pairs = {
        colour: shuffled(sample, f"expert/deal/{colour}", adjustments_of(colour))[:2]
        for colour in ADJUSTMENT_COLOURS
    }
    if view["setup"]["colour"]:
        pairs[view["setup"]["colour"]] = _ids(view["setup"]["pair"])
    return pairs


def _supply(view: dict[str, Any], sample: str) -> list[str]:
    """The supply's cards (every card neither in the hand at the start nor drawn since),
    in an order drawn from sample; none before the race."""
    if view["phase"] == "setup":
        return []
    memory = view["seen"]
    gone = set(memory["start_hand"]) | set(memory["drawn"])
    cards = [card for card in DECK_IDS if card not in gone]
    return shuffled(sample, "expert/supply", cards)[: view["supply_size"]]


def sampled_state(view: dict[str, Any], sample: str) -> State:
    """A state with this view and memory: what the player has not seen from sample."""
    memory = view["seen"]
    return {
        "seed": sample,
        "phase": view["phase"],
        "pairs": _pairs(view, sample),
        "applied": _ids(view["setup"]["applied"]),
        "car": dict(view["car"]),
        "speed": view["speed"],
        "manoeuvrability": view["manoeuvrability"],
        "body": view["body"],
        "distance": view["distance"],
        "hand": _ids(view["hand"]) + _ids(view["events"]),
        "supply": _supply(view, sample),
        "discard": list(memory["discard"]),
        "reshuffles": 0,
        "track": list(memory["track"]) or track_order(sample),
        "turn": view["turn"],
        "drawn": list(view["drawn"]),
        "redrawn": list(view["redrawn"]),
        "last": view["last"],
        "outcome": view["outcome"],
    }


def _player(state: State) -> HeuristicPlayer:
    player = HeuristicPlayer()
    player.track = list(state["track"])
    return player


def base_action(state: State, options: list[Action]) -> Action:
    """The heuristic player's pick, knowing the track."""
    return _player(state).choose(state, options)


def outlook(state: State) -> tuple[float, float]:
    """The (points, tie-break) of the run when the heuristic player plays on from state,
    knowing the track."""
    return result(play_out(GAME, state, _player(state).choose)[0])


def result(state: State) -> tuple[int, int]:
    """(points, tie-break) of a run that is over; no score counts 0 points."""
    score = GAME.score(state)
    return (0, 0) if score is None else (score, GAME.tiebreak(state))
