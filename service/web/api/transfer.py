"""Transfer links (service.web.transfers): the caller asks for a one-time link to their player,
and another browser redeems it to play as the same player.

The link carries its token in the URL's fragment (`/transfer#<token>`), which browsers
never send to a server: it stays out of access logs, proxies and Referer headers. The
page there redeems it with a same-origin POST when the player confirms, so a link
preview or a prefetch that merely opens the link consumes nothing.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from service.jobs.queue import web_connection
from service.storage.database import BUSY_RETRY_AFTER_SECONDS
from service.web import players, transfers
from service.web.api.common import api, services
from service.web.errors import ApiError
from service.web.openapi import Answer
from service.web.ratelimit import REDIS_ERRORS

TOKEN = {"type": "string", "pattern": "^[A-Za-z0-9_-]{20,64}$"}
TRANSFER_LINK = api.schema(
    "TransferLink",
    {
        "type": "object",
        "required": ["url", "token", "expires_at"],
        "properties": {
            "url": {
                "type": "string",
                "format": "uri",
                "description": "The page that redeems the link, the token in its fragment",
            },
            "token": {**TOKEN, "description": "The secret: whoever holds it becomes you"},
            "expires_at": {"type": "string", "format": "date-time"},
        },
    },
)
TRANSFERRED = api.schema(
    "Transferred",
    {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {
                "type": ["string", "null"],
                "description": "The display name of the player this browser now plays as",
            }
        },
    },
)


def _redis_down() -> ApiError:
    return ApiError.retry_later(
        503, "transfer links are unavailable for a moment: retry", BUSY_RETRY_AFTER_SECONDS
    )


@api.route(
    "/me/transfer",
    "POST",
    summary="A one-time link to play as you in another browser",
    body={"type": "object", "additionalProperties": False},
    responses={201: Answer("The link, valid once and for a limited time", TRANSFER_LINK)},
    errors=[404, 429],
)
def create_transfer(body: dict[str, Any]) -> tuple[Response, int]:
    """A secret link that, opened in another browser and confirmed there, sets that
    browser's player cookie to the caller's: valid once, for 15 minutes. A caller without
    a player cookie is a 404."""
    del body  # an empty object: nothing to read
    services().limiter.check(services().limiter.writes)
    player = players.current_player_id()
    if player is None:
        raise ApiError(404, "this browser has no player yet: play a daily or practice first")
    try:
        token, expires = transfers.issue(web_connection(services().config.redis_url), player)
    except REDIS_ERRORS:
        raise _redis_down() from None
    answer = {
        "url": f"{services().config.public_url}/transfer#{token}",
        "token": token,
        "expires_at": expires.isoformat(),
    }
    response = jsonify(answer)
    response.cache_control.no_store = True
    return response, 201


@api.route(
    "/transfer",
    "POST",
    summary="Redeem a transfer link: play here as its player",
    body={
        "type": "object",
        "required": ["token"],
        "properties": {"token": TOKEN},
        "additionalProperties": False,
    },
    responses={200: Answer("This browser's player cookie is now the link's player", TRANSFERRED)},
    errors=[404, 429],
)
def redeem_transfer(body: dict[str, Any]) -> Response:
    """Set the caller's player cookie to the player of the link (this browser's previous
    player, if any, is no longer this browser's). The token is spent: a second use, or one
    after 15 minutes, is a 404."""
    services().limiter.check(services().limiter.writes)
    try:
        player = transfers.redeem(web_connection(services().config.redis_url), body["token"])
    except REDIS_ERRORS:
        raise _redis_down() from None
    if player is None:
        raise ApiError(404, "this transfer link was used already or has expired: ask for a new one")
    players.hand_over(player)
    response = jsonify({"name": services().store.players.display_name(player)})
    response.cache_control.no_store = True
    return response
