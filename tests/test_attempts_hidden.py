"""A refused append tells nothing that was not paid for.

The attacks replayed here read today's daily in refused requests before: a request
was checked as a whole, so the index or the reason of a refusal after a revealing
action (the start, a drive that draws, a roll) told what it revealed, and nothing was
committed. Now probes at one position, whatever the hidden outcome they test, get
byte-identical answers and leave the attempt as it was.
"""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from puzzles import GAMES, State
from puzzles.crazy_rally.cards import ADJUSTMENTS
from puzzles.rallye_raser.track import LANES
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web.api.attempts import BATCH_REASON
from solver.rallye_raser.players import heuristic_actions
from tests.api_support import append_line, finished_run, start_attempt, todays_daily

ILLEGAL = {"type": "no-such-action"}


def append(client: FlaskClient, attempt: dict[str, Any], actions: list[Any], played: int) -> Any:
    return client.post(
        f"/api/v1/attempts/{attempt['attempt']}/actions",
        json={"played": played, "actions": actions},
    )


def probe_answers(
    client: FlaskClient, attempt: dict[str, Any], played: int, batches: list[list[Any]]
) -> set[tuple[int, bytes]]:
    """The distinct (status, body) of the probes, each sent at the same position."""
    return {
        (answer.status_code, answer.get_data())
        for answer in (append(client, attempt, batch, played) for batch in batches)
    }


def attempt_as_stored(client: FlaskClient, attempt: dict[str, Any]) -> bytes:
    return client.get(f"/api/v1/attempts/{attempt['attempt']}").get_data()


def play_to(
    client: FlaskClient, puzzle: PuzzleRecord, actions: list[Any], played: int
) -> dict[str, Any]:
    attempt = start_attempt(client, puzzle).get_json()
    return append_line(client, puzzle, attempt, actions[:played]) if played else attempt


def test_crazy_rally_refusals_do_not_tell_which_cards_are_drawn(
    client: FlaskClient, api_store: Store
):
    """[start, drive with card C, something illegal] answered index 2 when C was the card
    drawn and index 1 when it was not: some 300 such probes read the whole draw pile."""
    puzzle = todays_daily(api_store, "crazy-rally")
    actions = finished_run(GAMES["crazy-rally"], puzzle.seed)
    attempt = play_to(client, puzzle, actions, 3)  # the setup done: the test round
    before = attempt_as_stored(client, attempt)
    probes = [
        [{"type": "start"}, {"type": "drive", "card": card, "mode": mode, "event": None}, ILLEGAL]
        for card in sorted(ADJUSTMENTS)
        for mode in ("accelerate", "brake")
    ]
    answers = probe_answers(client, attempt, 3, probes)
    assert len(answers) == 1
    status, body = answers.pop()
    assert status == 422 and BATCH_REASON in body.decode() and b'"index":1' in body
    assert attempt_as_stored(client, attempt) == before


def test_crazy_rally_setup_refusals_do_not_name_the_next_pair(
    client: FlaskClient, api_store: Store
):
    """A refused setup card after an applied one named the next colour's dealt pair."""
    puzzle = todays_daily(api_store, "crazy-rally")
    attempt = start_attempt(client, puzzle).get_json()
    before = attempt_as_stored(client, attempt)
    blue = sorted(card for card in ADJUSTMENTS if card.startswith("B"))
    probes = [[{"type": "apply", "card": card}, {"type": "apply", "card": "Y99"}] for card in blue]
    assert len(probe_answers(client, attempt, 0, probes)) == 1
    assert attempt_as_stored(client, attempt) == before


def test_rallye_raser_refusals_do_not_tell_the_dice_of_a_roll(
    client: FlaskClient, api_store: Store
):
    """[gear 3, roll, place die i, control +1 x6, something illegal]: the index of the
    first refused control step gave die i's value, before anything was committed."""
    puzzle = todays_daily(api_store, "rallye-raser")
    attempt = start_attempt(client, puzzle).get_json()
    before = attempt_as_stored(client, attempt)
    control = [{"type": "control", "step": 0, "delta": 1}] * 6
    probes = [
        [
            {"type": "gear", "gear": gear},
            {"type": "roll"},
            {"type": "place", "die": die, "row": 1, "lane": lane},
            *control,
            ILLEGAL,
        ]
        for gear in (2, 3)
        for die in range(3)
        for lane in LANES
    ]
    answers = probe_answers(client, attempt, 0, probes)
    assert len(answers) == 1
    status, body = answers.pop()
    assert status == 422 and b'"index":2' in body
    assert attempt_as_stored(client, attempt) == before
    rerolls = [[{"type": "roll"}, {"type": "reroll"}, ILLEGAL], [{"type": "roll"}, ILLEGAL]]
    assert len(probe_answers(client, attempt, 0, rerolls)) == 1


def drive_to_card_b(puzzle: PuzzleRecord, actions: list[Any]) -> tuple[int, State]:
    """How many of actions come before the first drive that draws a road card."""
    game, state = GAMES[puzzle.game], GAMES[puzzle.game].new_game(puzzle.seed)
    for played, action in enumerate(actions):
        if action["type"] == "move" and game.reveals(state, action):
            return played, state
        state = game.apply(state, action)
    raise AssertionError("the run never drew a road card")


def test_rallye_raser_refusals_do_not_tell_the_road_card_drawn(
    client: FlaskClient, api_store: Store
):
    """[drive onto card B, a die placed on the card it draws]: "that field is absent" and
    "RR-11 (focus)" told the fields of a card not yet drawn."""
    puzzle = todays_daily(api_store, "rallye-raser")
    actions = heuristic_actions(puzzle.seed)
    played, state = drive_to_card_b(puzzle, actions)
    attempt = play_to(client, puzzle, actions, played)
    before = attempt_as_stored(client, attempt)
    first_unseen = state["card_starts"][state["card_a"] + 2]
    probes = [
        [
            {"type": "move"},
            {"type": "gear", "gear": gear},
            {"type": "roll"},
            {"type": "place", "die": 0, "row": row, "lane": lane},
        ]
        for gear in (1, 2, 3)
        for row in range(first_unseen - 2, first_unseen + 3)
        for lane in LANES
    ]
    answers = probe_answers(client, attempt, played, probes)
    assert len(answers) == 1
    assert b'"index":1' in answers.pop()[1]
    assert attempt_as_stored(client, attempt) == before


def test_a_stale_count_or_a_retry_answers_only_what_was_committed(
    client: FlaskClient, api_store: Store
):
    """The 409 of a probe sent with another count carries the attempt as committed,
    whatever the probe holds; a retry is recognised only for the very actions stored."""
    puzzle = todays_daily(api_store, "crazy-rally")
    actions = finished_run(GAMES["crazy-rally"], puzzle.seed)
    attempt = play_to(client, puzzle, actions, 4)
    probes = [
        [{"type": "drive", "card": card, "mode": "brake", "event": None}, ILLEGAL]
        for card in sorted(ADJUSTMENTS)
    ]
    for stale in (0, 3, 5):
        answers = probe_answers(client, attempt, stale, probes)
        assert len(answers) == 1 and answers.pop()[0] == 409
    retried = append(client, attempt, actions[3:4], 3)
    assert retried.status_code == 200 and retried.get_json()["played"] == 4
