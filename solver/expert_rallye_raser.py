"""What the Rallye Raser expert needs of its game: the player's memory, and states
that agree with what the player has seen.

The player's view (docs/rules/rallye-raser.md, View) shows the dials, cards A
and B, the pool and the route. Three facts of the round so far are not in it
but the player knows them, having made the moves: whether the gear was changed
(RR-5), whether a die of the latest roll is on the road (RR-8) and whether a die
was reserved this round (RR-12). The player also remembers the cards already
driven, so the undrawn cards are among the others of the pool of eighteen.

Everything else is unseen: the future dice (RR-7: fixed by position from the
seed) and the undrawn cards with their rotation (RR-3). A sampled state draws
both from a sample string, never from the puzzle's seed.
"""

from __future__ import annotations

from typing import Any

from puzzles.base import Action, State
from puzzles.playout import play_out
from puzzles.rallye_raser import MAX_ROUNDS, RallyeRaser
from puzzles.rallye_raser_track import CARDS, card_sections
from puzzles.rng import coin_flips, shuffled
from solver.rallye_raser_players import heuristic_step

GAME = RallyeRaser()
# One point of score outweighs any number of rounds (the objective: score, then rounds).
POINT_WEIGHT = MAX_ROUNDS + 1
PAST = "past"  # the deck entry standing for the cards already driven


def fresh_memory() -> dict[str, Any]:
    return {"shifted": False, "placed_since_roll": False, "reserved": False, "cards_seen": []}


def remember(memory: dict[str, Any], action: Action | None, view: dict[str, Any]) -> None:
    """Update memory with the player's own action (None at the start) and the view after it."""
    kind = action["type"] if action else None
    if kind == "gear":
        memory["shifted"] = True
    elif kind in ("roll", "reroll"):
        memory["placed_since_roll"] = False
    elif kind == "place":
        memory["placed_since_roll"] = True
    elif kind == "reserve":
        memory["reserved"] = True
    elif kind == "move":
        memory.update(shifted=False, placed_since_roll=False, reserved=False)
    for card in (view["card_a"], view["card_b"]):
        if card is not None and card["id"] not in memory["cards_seen"]:
            memory["cards_seen"].append(card["id"])


def sampled_state(view: dict[str, Any], sample: str) -> State:
    """A state with this view and memory: undrawn cards and future dice from sample."""
    memory = view["seen"]
    shown = [card for card in (view["card_a"], view["card_b"]) if card is not None]
    first_row = shown[0]["first_row"]
    unseen = sorted(set(CARDS) - set(memory["cards_seen"]))
    count = view["cards_remaining"]
    drawn_ids = shuffled(sample, "expert/deck", unseen)[:count]
    flips = coin_flips(sample, "expert/rotation", count)
    undrawn = [{"id": i, "rotated": f} for i, f in zip(drawn_ids, flips, strict=True)]
    deck = [{"id": c["id"], "rotated": c["rotated"]} for c in shown] + undrawn
    sections = [card_sections(entry) for entry in deck]
    # The rows already driven are never used again (RR-10: never backwards); one
    # filler card keeps the rows' numbers.
    if first_row:
        deck.insert(0, {"id": PAST, "rotated": False})
        sections.insert(0, ["..."] * first_row)
    starts = [0]
    for card in sections:
        starts.append(starts[-1] + len(card))
    return {
        "seed": sample,
        "deck": deck,
        "track": [row for card in sections for row in card],
        "card_starts": starts,
        "card_a": 1 if first_row else 0,
        "round": view["round"],
        "rounds_played": view["rounds_played"],
        "status": view["status"],
        "phase": view["phase"],
        "gear": view["gear"],
        "timer": view["timer"],
        "control": view["control"],
        "car": dict(view["car"]),
        "no_upshift": view["no_upshift"],
        "shifted": memory["shifted"],
        "rolls": view["rolls"],
        "placed_since_roll": memory["placed_since_roll"],
        "reserved_this_round": memory["reserved"],
        "pool": list(view["pool"]),
        "reserve": view["reserve"],
        "route": [dict(die) for die in view["route"]],
        "last_round": list(view["last_round"]),
    }


def base_action(state: State, options: list[Action]) -> Action:
    """The heuristic player's pick."""
    return heuristic_step(state, options)


def rollout(state: State) -> State:
    """The run's end when the heuristic player plays on from state."""
    return play_out(GAME, state, heuristic_step)[0]


def result(state: State) -> tuple[int, int]:
    """(points, tie-break) of a run that is over: no score counts 0 points, and the
    tie-break is minus the rounds, the safety bound's for a run that did not finish."""
    score = GAME.score(state)
    if score is None:
        return 0, -MAX_ROUNDS
    return score, GAME.tiebreak(state)
