"""The expert: a player without foresight, its par of a seed, and graded decisions.

The expert decides from the player's view alone (`choose` takes a view, never a
state): the engine's view of the moment plus what the player saw earlier and
the view no longer shows, as the engine remembers it (`PlayerView`: for Rallye
Raser the moves made this round and the cards driven, for Crazy Rally the track
of the test round and the cards drawn). It chooses by measurement: every
distinct legal action is played in states the engine samples to agree with the
view (`Game.sample_state`), the unseen (the future dice, the undrawn cards,
their order) drawn from a generator seeded from rng_seed and the view, never
from the puzzle's seed. Each game's parts are its kit's (solver.kit), and a game
measures choices in one of two ways:
- by rollouts (Crazy Rally): from each sampled state a base player (the heuristic
  player) plays on to the end. The same samples serve every action, so that the
  differences between actions are measured more precisely than the results
  themselves. The base player's own action stands unless another is measured better
  by more than its error: a rollout policy is then, on average, at least as strong as
  the policy it rolls out;
- exactly (Rallye Raser): the base player is the round's exact expectimax of
  solver.rallye_raser.lookahead, which is its own expert, and it values any action as
  the expected result after it, summed over every die of the round.

Grading a run replays it and, at every decision with more than one distinct
choice, measures the player's action beside the expert's: by rollouts, on the same
samples, the mean difference with its error; exactly, the difference of the two
values, with no sampling error. Either is the expected loss, zero when the two
choices coincide.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections.abc import Iterator, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from puzzles import get_game
from puzzles.base import Action, AnyGame, Memory, State
from puzzles.playout import play_out
from solver.core import solve
from solver.kit import ExpertParts, Rollouts
from solver.registry import kit_of

KEEP = 2  # screened candidates measured on every sample
Z95 = 1.96  # errors are the half-widths of 95% intervals
# Standard errors by which an action must beat the base player's to replace it.
CHOICE_MARGIN = 2.0


def _parts(game_name: str) -> ExpertParts[Any]:
    """The expert's game-specific parts (its kit's), including how many samples it takes."""
    return kit_of(game_name).expert


def _rollouts(game_name: str) -> Rollouts[Any]:
    rollouts = _parts(game_name).rollouts
    if rollouts is None:
        raise ValueError(f"{game_name}'s expert measures its choices exactly, not by rollouts")
    return rollouts


def samples_of(game_name: str) -> int:
    """Sampled futures per decision: 0 for a game that measures choices exactly."""
    rollouts = _parts(game_name).rollouts
    return 0 if rollouts is None else rollouts.samples


class PlayerView:
    """What the player has seen so far: the current view and the memory it needs."""

    def __init__(self, game_name: str) -> None:
        self.game = get_game(game_name)
        self.memory: Memory = self.game.fresh_memory()
        self.pending: Action | None = None
        self.view: dict[str, Any] = {}

    def see(self, view: dict[str, Any]) -> None:
        """The view after the player's last action (or the first view)."""
        self.game.remember(self.memory, self.pending, view)
        self.view, self.pending = view, None

    def act(self, action: Action) -> None:
        self.pending = action

    def current(self) -> dict[str, Any]:
        """The view with the memory under "seen": the expert's whole input."""
        return {**self.view, "seen": deepcopy(self.memory)}


def player_views(game_name: str, seed: str, actions: list[Action]) -> Iterator[dict[str, Any]]:
    """The expert's view before each action of a run, and after the last."""
    game = get_game(game_name)
    watcher = PlayerView(game_name)
    state = game.new_game(seed)
    watcher.see(game.view(state))
    yield watcher.current()
    for action in actions:
        state = game.apply(state, action)
        watcher.act(action)
        watcher.see(game.view(state))
        yield watcher.current()


def sample_name(view: dict[str, Any], rng_seed: int, index: int) -> str:
    """The sample string of one sampled state: from rng_seed and the view only."""
    text = json.dumps([rng_seed, index, view], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


@dataclass
class Candidates:
    """The distinct legal actions of a view, the sampled states they are tried in, and
    which of them the base player would take."""

    actions: list[Action]
    keys: list[str]
    states: list[State]
    base: int


def _key(game_name: str, state: State, action: Action) -> str:
    """Actions with the same key lead to the same position (the same view after them)."""
    view = get_game(game_name).view(get_game(game_name).apply(state, action))
    return json.dumps([action.get("type"), view], sort_keys=True)


def candidates(game_name: str, view: dict[str, Any], rng_seed: int, samples: int) -> Candidates:
    """The distinct legal actions of the view, and the sampled states to try them in."""
    parts = _parts(game_name)
    game = get_game(game_name)
    if "seen" not in view:
        raise ValueError("the expert reads a player's view with its memory (see PlayerView)")
    if view.get("over") or view.get("phase") == "over":
        raise ValueError("the game is over: there is nothing to choose")
    states = [
        game.sample_state(view, view["seen"], sample_name(view, rng_seed, i))
        for i in range(samples)
    ]
    actions: list[Action] = []
    keys: list[str] = []
    options = game.legal_actions(states[0])
    for action in options:
        key = _key(game_name, states[0], action)
        if key not in keys:
            actions.append(action)
            keys.append(key)
    base = keys.index(_key(game_name, states[0], parts.base_action(states[0], options)))
    return Candidates(actions, keys, states, base)


def _results(
    game_name: str, found: Candidates, index: int, samples: range
) -> list[tuple[float, float]]:
    """The results of candidate index in the given sampled states, played on to the end."""
    outlook = _rollouts(game_name).outlook
    game = get_game(game_name)
    action = found.actions[index]
    return [outlook(game.apply(found.states[i], action)) for i in samples]


def _utilities(game_name: str, results: list[tuple[float, float]]) -> list[float]:
    """Points first, then the tie-break, as one number per sample."""
    weight = _parts(game_name).point_weight
    return [float(weight * points + tiebreak) for points, tiebreak in results]


def _measure(
    game_name: str, found: Candidates, graded: int | None = None
) -> tuple[int, dict[int, list[tuple[float, float]]]]:
    """The expert's pick among the candidates, and the results of those measured fully.

    Every candidate is first tried in a few sampled states; the best `KEEP` of them,
    the base player's action and the graded one (if any) are then tried in all.
    The base player's action stands unless another is measured better by more than
    `CHOICE_MARGIN` standard errors: the highest of many noisy means is often noise.
    """
    rollouts = _rollouts(game_name)
    total, screen = rollouts.samples, rollouts.screen_samples
    first = {i: _results(game_name, found, i, range(screen)) for i in range(len(found.actions))}
    ranked = sorted(first, key=lambda i: -statistics.fmean(_utilities(game_name, first[i])))
    kept = {*ranked[:KEEP], found.base, *([] if graded is None else [graded])}
    measured = {
        i: first[i] + _results(game_name, found, i, range(screen, total)) for i in sorted(kept)
    }
    base = _utilities(game_name, measured[found.base])
    best, best_gain = found.base, 0.0
    for index, results in measured.items():
        differences = [v - b for v, b in zip(_utilities(game_name, results), base, strict=True)]
        gain, error = _mean_error(differences)
        if gain - CHOICE_MARGIN * error / Z95 > 0 and gain > best_gain:
            best, best_gain = index, gain
    return best, measured


def choose(game_name: str, view: dict[str, Any], rng_seed: int = 0) -> Action:
    """The expert's action for the player's view (see PlayerView), deterministic for
    one view and rng_seed."""
    found = candidates(game_name, view, rng_seed, max(1, samples_of(game_name)))
    if len(found.actions) == 1 or _parts(game_name).rollouts is None:
        return found.actions[found.base]
    return found.actions[_measure(game_name, found)[0]]


def par_result(game: AnyGame, final: State) -> tuple[int | None, int | None]:
    """The par and its tie-break of the expert's run ending in final: (None, None) for a run
    that did not finish, since a tie-break only orders equal scores."""
    score = game.score(final)
    return score, None if score is None else game.tiebreak(final)


def par(game_name: str, seed: str) -> dict[str, Any]:
    """The expert's own run on the seed: {"par", "par_tiebreak", "actions", "seconds"}."""
    game = get_game(game_name)
    started = time.perf_counter()
    watcher = PlayerView(game_name)

    def policy(state: State, options: list[Action]) -> Action:
        watcher.see(game.view(state))
        action = choose(game_name, watcher.current())
        watcher.act(action)
        return action

    _, actions = play_out(game, game.new_game(seed), policy)
    score, tiebreak = par_result(game, game.replay(seed, actions))  # the engine's own word
    return {
        "par": score,
        "par_tiebreak": tiebreak,
        "actions": actions,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _mean_error(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% interval."""
    if len(values) < 2:
        return (values[0] if values else 0.0), 0.0
    return statistics.fmean(values), Z95 * statistics.stdev(values) / math.sqrt(len(values))


def _pair(points: tuple[float, float], tiebreak: tuple[float, float]) -> dict[str, float]:
    return {
        "points": round(points[0], 3),
        "points_error": round(points[1], 3),
        "tiebreak": round(tiebreak[0], 3),
        "tiebreak_error": round(tiebreak[1], 3),
    }


def grade(
    game_name: str, view: dict[str, Any], action: Action, rng_seed: int = 0
) -> dict[str, Any] | None:
    """The expected loss of action against the expert's choice in this view; None when
    the view leaves only one distinct choice (no decision)."""
    found = candidates(game_name, view, rng_seed, max(1, samples_of(game_name)))
    if len(found.actions) == 1:
        return None
    chosen = found.keys.index(_key(game_name, found.states[0], action))
    if _parts(game_name).rollouts is None:
        return _exact_grade(game_name, found, chosen)
    best, measured = _measure(game_name, found, chosen)
    first = _sharpen(game_name, view, rng_seed, found, measured, (best, chosen))
    expert, player = measured[best][first:], measured[chosen][first:]
    points = [e[0] - p[0] for e, p in zip(expert, player, strict=True)]
    tiebreak = [e[1] - p[1] for e, p in zip(expert, player, strict=True)]
    return {
        "action": action,
        "expert": found.actions[best],
        "loss": _pair(_mean_error(points), _mean_error(tiebreak)),
        "expected": {"player": _expected(player), "expert": _expected(expert)},
    }


def _sharpen(
    game_name: str,
    view: dict[str, Any],
    rng_seed: int,
    found: Candidates,
    measured: dict[int, list[tuple[float, float]]],
    pair: tuple[int, int],
) -> int:
    """Sampled states beyond those the expert chose on, for the expert's and the player's
    choices: a batch, then more while the loss's error over them is above the game's
    bound. Returns the first sample the loss reads.

    The expert's choice won on the samples it was made on, so its lead there is
    overstated (the best of several noisy means); the later samples measure it without
    that bias. A choice the same as the expert's loses nothing on any sample. A grade
    is worth its precision, and the two choices are all it needs."""
    rollouts, game = _rollouts(game_name), get_game(game_name)
    best, chosen = pair
    if best == chosen:
        return 0
    chosen_on = len(found.states)
    most = max(rollouts.grade_samples, chosen_on + rollouts.samples)
    while len(found.states) == chosen_on or (
        len(found.states) < most and _loss_error(measured, pair, chosen_on) > rollouts.grade_error
    ):
        start = len(found.states)
        found.states.extend(
            game.sample_state(view, view["seen"], sample_name(view, rng_seed, i))
            for i in range(start, min(start + rollouts.samples, most))
        )
        for index in pair:
            measured[index] += _results(game_name, found, index, range(start, len(found.states)))
    return chosen_on


def _loss_error(
    measured: dict[int, list[tuple[float, float]]], pair: tuple[int, int], first: int
) -> float:
    expert, player = measured[pair[0]][first:], measured[pair[1]][first:]
    return _mean_error([e[0] - p[0] for e, p in zip(expert, player, strict=True)])[1]


def _exact_grade(game_name: str, found: Candidates, chosen: int) -> dict[str, Any]:
    """The grade of candidate chosen by the game's exact values: no sampling error."""
    value_of = _parts(game_name).action_outlook
    assert value_of is not None, "an expert without rollouts values actions exactly"
    state = found.states[0]
    expert = value_of(state, found.actions[found.base])
    player = expert if chosen == found.base else value_of(state, found.actions[chosen])
    exact = [(expert[0] - player[0], 0.0), (expert[1] - player[1], 0.0)]
    return {
        "action": found.actions[chosen],
        "expert": found.actions[found.base],
        "loss": _pair(*exact),
        "expected": {
            "player": _pair((player[0], 0.0), (player[1], 0.0)),
            "expert": _pair((expert[0], 0.0), (expert[1], 0.0)),
        },
    }


def _expected(results: list[tuple[float, float]]) -> dict[str, float]:
    return _pair(_mean_error([r[0] for r in results]), _mean_error([r[1] for r in results]))


def _total(values: list[float], errors: list[float]) -> tuple[float, float]:
    return sum(values), math.sqrt(sum(error * error for error in errors))


def analyse(
    game_name: str,
    seed: str,
    actions: list[Action],
    rng_seed: int = 0,
    optimum: tuple[int | None, int | None] | None = None,
) -> dict[str, Any]:
    """Every decision of a run graded against the expert, and the run's gap to the
    optimum split into what the decisions lost and the rest (the luck of the dice
    and the draw). optimum: the seed's (score, tie-break), if already known."""
    started = time.perf_counter()
    game = get_game(game_name)
    parts = _parts(game_name)
    final = game.replay(seed, actions)  # IllegalAction for a run the rules refuse
    if optimum is None:
        solved = solve(game_name, seed)
        optimum = (solved.optimum, solved.tiebreak)
    decisions = []
    for index, (view, action) in enumerate(
        zip(player_views(game_name, seed, actions), actions, strict=False)  # one view more
    ):
        graded = grade(game_name, view, action, rng_seed)
        if graded is not None:
            decisions.append({"index": index, **graded})
    run = parts.result(final)
    # No finishing run: the gap is the run's own points, its tie-break none.
    best = (0, run[1]) if optimum[0] is None or optimum[1] is None else (optimum[0], optimum[1])
    lost_points = _total(
        [d["loss"]["points"] for d in decisions], [d["loss"]["points_error"] for d in decisions]
    )
    lost_tiebreak = _total(
        [d["loss"]["tiebreak"] for d in decisions],
        [d["loss"]["tiebreak_error"] for d in decisions],
    )
    gap = (best[0] - run[0], best[1] - run[1])
    return {
        "game": game_name,
        "seed": seed,
        "rules_version": game.rules_version,
        "result": {"points": run[0], "tiebreak": run[1], "finished": game.is_finished(final)},
        "optimum": {"points": optimum[0], "tiebreak": optimum[1]},
        "gap": {"points": gap[0], "tiebreak": gap[1]},
        "decision_loss": _pair(lost_points, lost_tiebreak),
        "luck": _pair(
            (gap[0] - lost_points[0], lost_points[1]), (gap[1] - lost_tiebreak[0], lost_tiebreak[1])
        ),
        "decisions": decisions,
        "rng_seed": rng_seed,
        "samples": samples_of(game_name),
        "seconds": round(time.perf_counter() - started, 3),
    }
