"""Transfer links: one-time, time-limited, and the only change they make is the cookie of
the browser that redeems one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import redis
from flask import Flask
from flask.testing import FlaskClient

from puzzles import get_game
from service.clock import Clock
from service.storage.store import Store
from service.web import players, transfers
from tests.api_support import FINISHING_GAME, client_of, finished_run

PRACTICE = "transfer-seed"


def practise(client: FlaskClient, name: str | None = None) -> str:
    """Submit a practice run (which gives the client a player); the run's id."""
    body: dict[str, Any] = {"actions": finished_run(get_game(FINISHING_GAME), PRACTICE)}
    if name is not None:
        body["name"] = name
    answer = client.post(f"/api/v1/puzzles/{FINISHING_GAME}/{PRACTICE}/runs", json=body)
    assert answer.status_code == 201
    return answer.get_json()["id"]


def cookie(client: FlaskClient) -> str | None:
    found = client.get_cookie(players.COOKIE_NAME)
    return None if found is None else found.value


def link(client: FlaskClient) -> dict:
    answer = client.post("/api/v1/me/transfer", json={})
    assert answer.status_code == 201, answer.get_json()
    return answer.get_json()


def test_a_link_hands_the_player_to_another_browser_once(app: Flask, api_store: Store):
    first, second, third = client_of(app), client_of(app), client_of(app)
    run_id = practise(first, name="Ada")
    practise(second)  # the second browser had a player of its own
    given = link(first)
    assert given["url"].endswith(f"/transfer#{given['token']}")
    redeemed = second.post("/api/v1/transfer", json={"token": given["token"]})
    assert redeemed.status_code == 200
    assert redeemed.get_json() == {"name": "Ada"}
    assert cookie(second) == cookie(first)
    assert second.get("/api/v1/me").get_json()["name"] == "Ada"
    assert second.get(f"/api/v1/runs/{run_id}").get_json()["yours"] is True
    # Used once: the same token gives nothing to a third browser.
    again = third.post("/api/v1/transfer", json={"token": given["token"]})
    assert again.status_code == 404
    assert cookie(third) is None
    # The first browser keeps its player, and no player was added or renamed.
    assert first.get("/api/v1/me").get_json()["name"] == "Ada"
    assert api_store.players.count() == 2


def test_a_link_expires(app: Flask, clock: Clock):
    first, second = client_of(app), client_of(app)
    clock.set(datetime.now(UTC))
    practise(first)
    token = link(first)["token"]
    clock.advance(transfers.TRANSFER_SECONDS)
    assert second.post("/api/v1/transfer", json={"token": token}).status_code == 404
    assert cookie(second) is None
    fresh = link(first)["token"]
    clock.advance(transfers.TRANSFER_SECONDS - 1)
    assert second.post("/api/v1/transfer", json={"token": fresh}).status_code == 200
    assert cookie(second) == cookie(first)


def test_redis_keeps_neither_the_token_nor_the_link_past_its_time(app: Flask, redis_url: str):
    client = client_of(app)
    practise(client)
    token = link(client)["token"]
    keys = redis.Redis.from_url(redis_url).keys(f"{transfers.KEY_PREFIX}:*")
    assert len(keys) == 1 and token.encode() not in keys[0]
    ttl = redis.Redis.from_url(redis_url).ttl(keys[0])
    assert 0 < ttl <= transfers.TRANSFER_SECONDS


def test_no_link_without_a_player_and_no_player_from_a_made_up_token(app: Flask):
    client = client_of(app)
    assert client.post("/api/v1/me/transfer", json={}).status_code == 404
    made_up = client.post("/api/v1/transfer", json={"token": "A" * 43})
    assert made_up.status_code == 404
    assert cookie(client) is None


def test_another_site_cannot_ask_for_a_link(app: Flask):
    client = client_of(app)
    practise(client)
    answer = client.post("/api/v1/me/transfer", json={}, headers={"Sec-Fetch-Site": "cross-site"})
    assert answer.status_code == 403
