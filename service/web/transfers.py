"""Transfer links: a player carries their identity to another browser.

A player asks for a link; it holds a random secret token, valid for TRANSFER_SECONDS and
good for one use. Opening the link in another browser and confirming there sets that
browser's player cookie to the same player id: nothing else about identity changes (no
password, no e-mail, and the first browser keeps its cookie).

Redis keeps only a hash of each token (its SHA-256), under a key that expires with it,
so neither a read of Redis nor its persistence files hand out a usable link. Redeeming
deletes the key in the same command that reads it (GETDEL): two browsers racing with one
link cannot both get the player. Tokens are short-lived and can be asked for again, so
losing them with Redis costs nothing; while Redis is down no link is made or redeemed.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta

import redis

from service.clock import CLOCK

KEY_PREFIX = "rally:transfer"
# How long a link stays valid: long enough to open it on another device.
TRANSFER_SECONDS = 15 * 60
TOKEN_BYTES = 32


def _key(token: str) -> str:
    return f"{KEY_PREFIX}:{hashlib.sha256(token.encode()).hexdigest()}"


def issue(client: redis.Redis, player_id: str) -> tuple[str, datetime]:
    """A new token that hands player_id over once, and when it expires (TRANSFER_SECONDS
    from now). The expiry is kept beside the player, by the service's clock, as well as
    set on the key, which drops it from Redis."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    expires = CLOCK.now() + timedelta(seconds=TRANSFER_SECONDS)
    client.set(_key(token), f"{player_id} {expires.timestamp()}", ex=TRANSFER_SECONDS)
    return token, expires


def redeem(client: redis.Redis, token: str) -> str | None:
    """The player id the token hands over, consumed; None once used, expired or unknown."""
    found = client.getdel(_key(token))
    if found is None:
        return None
    text = found.decode() if isinstance(found, bytes) else found
    player_id, expires = text.rsplit(" ", 1)
    if CLOCK.now() >= datetime.fromtimestamp(float(expires), UTC):
        return None
    return player_id
