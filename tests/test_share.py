"""A run's share: the text of each game with its strip, the strip giving nothing of today's
daily away, the preview image and the link-preview tags of the run page."""

from __future__ import annotations

import io
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from PIL import Image

from puzzles import GAMES, get_game
from puzzles.crazy_rally.cards import DATA_FILE
from service.clock import Clock
from service.domain.share import ShareFacts, marks, strip
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.web import previews
from service.web.api.common import CACHE_SECONDS
from solver import solve
from solver.rallye_raser.players import heuristic_actions
from tests.api_support import (
    client_of,
    finished_run,
    play_attempt,
    todays_daily,
    unfinished_run,
)

MAX_PREVIEW_BYTES = 100 * 1024
CARD_IDS = [card["id"] for cards in json.loads(DATA_FILE.read_text()).values() for card in cards]


def finishing_actions(puzzle: PuzzleRecord) -> list[Any]:
    """A finished run of the puzzle, whatever the day's seed: Rallye Raser's optimal line
    (random play, and on some seeds the heuristic player, runs out of time), Crazy Rally's
    random."""
    if puzzle.game == "rallye-raser":
        return solve(puzzle.game, puzzle.seed).actions
    return finished_run(get_game(puzzle.game), puzzle.seed)


def share_of(client: FlaskClient, run_id: str) -> dict[str, Any]:
    answer = client.get(f"/api/v1/runs/{run_id}/share")
    assert answer.status_code == 200
    return answer.get_json()


def played_daily(app: Flask, store: Store, game: str) -> tuple[PuzzleRecord, dict[str, Any]]:
    puzzle = todays_daily(store, game)
    actions = finishing_actions(puzzle)
    assert get_game(game).is_finished(get_game(game).replay(puzzle.seed, actions))
    return puzzle, play_attempt(client_of(app), puzzle, actions)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_share_text_of_todays_daily(game: str, app: Flask, api_store: Store, clock: Clock):
    puzzle, played = played_daily(app, api_store, game)
    api_store.puzzles.record_solution(
        puzzle.id,
        optimum=played["score"] + 2,
        tiebreak=-9 if game == "rallye-raser" else 7,
        witness=[],
        proved=True,
        solve_seconds=1.0,
    )
    par_tiebreak = -12 if game == "rallye-raser" else 5
    api_store.puzzles.record_par(
        puzzle.id, par=played["score"] - 1, tiebreak=par_tiebreak, line=[], seconds=1.0
    )
    clock.advance(CACHE_SECONDS)  # the puzzle as it now is
    share = share_of(client_of(app), played["run"])
    title, result, symbols, url = share["text"].split("\n")
    assert title == f"Rally Daily · {GAMES[game].title} #{puzzle.number}"
    if game == "rallye-raser":
        rounds = -played["tiebreak"]
        optimum = f"optimum {played['score'] + 2} in 9 rounds"
        par = f"par {played['score'] - 1} in 12 rounds"
        assert result == f"{played['score']} points in {rounds} rounds · {optimum} · {par}"
        assert len(share["marks"]) == rounds
        assert share["marks"][-1] == "finish"
    else:
        optimum, par = played["score"] + 2, played["score"] - 1
        assert result == f"{played['score']} points · optimum {optimum} · par {par}"
        assert len(share["marks"]) == 14  # one per track card
    assert symbols == share["strip"] == "".join(marks()[mark].symbol for mark in share["marks"])
    assert url == share["url"] and url.endswith(f"/runs/{played['run']}")
    assert share["image_url"] == f"{url}/preview.png"
    assert {entry["mark"] for entry in share["legend"]} == set(share["marks"])


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_share_of_todays_daily_gives_nothing_of_its_puzzle_away(
    game: str, app: Flask, api_store: Store
):
    puzzle, played = played_daily(app, api_store, game)
    share = share_of(client_of(app), played["run"])
    text = share["text"]
    assert puzzle.seed not in text
    *told, url = text.split("\n")
    told_text = "\n".join(told)
    # No card of the game is named (a run's id in the link is random: it is left out).
    assert not [card for card in CARD_IDS if re.search(rf"\b{card}\b", told_text)]
    # The only numbers are the daily's number, the score and (Rallye Raser) the rounds: no
    # die value, card value or speed.
    expected = [puzzle.number, played["score"]]
    if game == "rallye-raser":
        expected.append(-played["tiebreak"])
    assert [int(number) for number in re.findall(r"\d+", told_text)] == expected
    assert not re.search(r"\d", share["strip"])
    assert url == f"{app.extensions['rally'].config.public_url}/runs/{played['run']}"


def test_a_daily_attempt_that_did_not_finish_is_not_called_practice(app: Flask, api_store: Store):
    """The player's one attempt at today's daily ended unfinished (CR-18): it is no
    official run, but no practice run either."""
    puzzle = todays_daily(api_store, "crazy-rally")
    played = play_attempt(
        client_of(app), puzzle, unfinished_run(get_game("crazy-rally"), puzzle.seed)
    )
    title, result, *_ = share_of(client_of(app), played["run"])["text"].split("\n")
    assert title == f"Rally Daily · Crazy Rally #{puzzle.number}"
    assert result == "did not finish"


def test_a_practice_run_says_practice(app: Flask):
    client = client_of(app)
    actions = finished_run(get_game("crazy-rally"), "share-practice")
    run = client.post("/api/v1/puzzles/crazy-rally/share-practice/runs", json={"actions": actions})
    share = share_of(client, run.get_json()["id"])
    title, result, *_ = share["text"].split("\n")
    assert title == "Rally Daily · Crazy Rally · practice"
    assert result == f"{run.get_json()['score']} points"  # the optimum is not known yet


def test_the_strip_marks_each_track_card_and_round():
    crazy = get_game("crazy-rally")
    actions = finished_run(crazy, "strip-seed")
    state = crazy.new_game("strip-seed")
    expected = []
    for action in actions:
        state = crazy.apply(state, action)
        if action["type"] == "drive":
            last = state["last"]
            expected.append(
                "crash"
                if last["crashed"]
                else "too_fast"
                if last["too_fast"]
                else "too_slow"
                if last["too_slow"]
                else "within_limits"
            )
    assert strip("crazy-rally", "strip-seed", actions) == expected
    rounds = strip("rallye-raser", "strip-seed", heuristic_actions("strip-seed"))
    final = get_game("rallye-raser").replay("strip-seed", heuristic_actions("strip-seed"))
    assert len(rounds) == final["rounds_played"]
    assert set(rounds) <= {"clean", "gasfuss", "loss_of_control", "engine_damage", "finish"}


def margins(image: Image.Image) -> set[Any]:
    """The colours drawn within MARGIN // 2 of the left, right and bottom edges."""
    width, height = image.size
    edge = previews.MARGIN // 2
    strips = [
        (0, 20, edge, height),
        (width - edge, 20, width, height),
        (0, height - edge, width, height),
    ]
    # Pillow types a colour as a tuple or a float (a one-band image's): here they are RGB.
    return {colour for box in strips for _count, colour in image.crop(box).getcolors(1 << 16)}


def test_the_preview_image_keeps_its_longest_words_and_strip_within_its_margins():
    """The longest result a run can have (a daily's Rallye Raser run beside its optimum and
    par, each with its rounds), and 40 rounds showing every mark, all inside the image."""
    rounds = ["clean", "gasfuss", "loss_of_control", "engine_damage"] * 10
    facts = ShareFacts(
        game="rallye-raser",
        number=1234,
        practice=False,
        score=18,
        tiebreak=-40,
        optimum=28,
        optimum_tiebreak=-26,
        par=24,
        par_tiebreak=-39,
        marks=[*rounds[:-1], "finish"],
        url="https://rally.example/runs/x",
    )
    image = Image.open(io.BytesIO(previews.draw(facts))).convert("RGB")
    paper = image.getpixel((previews.WIDTH // 2, previews.HEIGHT - 2))
    assert margins(image) == {paper}


class MetaTags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        key = values.get("property") or values.get("name")
        if tag == "meta" and key and values.get("content") is not None:
            self.tags[key] = values["content"] or ""


def test_the_run_page_has_link_preview_tags_and_an_image(
    app: Flask, api_store: Store, clock: Clock
):
    puzzle, played = played_daily(app, api_store, "crazy-rally")
    client = client_of(app)
    page = client.get(f"/runs/{played['run']}")
    meta = MetaTags()
    meta.feed(page.get_data(as_text=True))
    share = share_of(client, played["run"])
    assert meta.tags["og:title"] == meta.tags["twitter:title"] == share["title"]
    assert meta.tags["og:description"] == f"{share['result']} {share['strip']}"
    assert meta.tags["og:image"] == meta.tags["twitter:image"] == share["image_url"]
    assert meta.tags["twitter:card"] == "summary_large_image"
    assert meta.tags["og:url"] == share["url"]
    image = client.get(f"/runs/{played['run']}/preview.png")
    assert image.status_code == 200 and image.mimetype == "image/png"
    assert len(image.data) < MAX_PREVIEW_BYTES
    assert Image.open(io.BytesIO(image.data)).size == (1200, 630)
    cached = app.extensions["rally"].config.instance_path / "previews"
    assert len(list(cached.glob("*.png"))) == 1
    assert client.get(f"/runs/{played['run']}/preview.png").data == image.data
    assert len(list(cached.glob("*.png"))) == 1
    # Solved later: the image says so, drawn once more.
    api_store.puzzles.record_solution(
        puzzle.id,
        optimum=played["score"] + 1,
        tiebreak=5,
        witness=[],
        proved=True,
        solve_seconds=1.0,
    )
    clock.advance(CACHE_SECONDS)  # the puzzle as it now is
    assert client.get(f"/runs/{played['run']}/preview.png").data != image.data
    assert len(list(cached.glob("*.png"))) == 2
    assert client.get("/runs/not-a-run/preview.png").status_code == 404
