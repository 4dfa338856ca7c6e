"""Anonymous players: an id in a signed cookie, created on a player's first write.

Nothing is asked of a player: the first accepted run gives them a random id, kept
in a cookie signed with RALLY_SECRET_KEY so that nobody can claim another
player's id (and with it their official runs or access to a daily's solution).
"""

from __future__ import annotations

import secrets

from flask import Flask, Response, current_app, g, request
from itsdangerous import BadSignature, Signer

COOKIE_NAME = "rally_player"
# Browsers cap a cookie's lifetime at 400 days.
COOKIE_MAX_AGE = 400 * 24 * 3600
_SIGNER_SALT = "rally-daily/player"


def _signer() -> Signer:
    return Signer(current_app.config["SECRET_KEY"], salt=_SIGNER_SALT)


def current_player_id() -> str | None:
    """The id in the request's cookie, or None when it is absent or its signature is wrong."""
    signed = request.cookies.get(COOKIE_NAME)
    if signed is None:
        return None
    try:
        return _signer().unsign(signed).decode()
    except (BadSignature, UnicodeDecodeError):
        return None


def player_id_for_write() -> str:
    """The current player's id, or a new one whose cookie goes out with a successful answer."""
    existing = current_player_id()
    if existing is not None:
        return existing
    g.new_player_id = secrets.token_urlsafe(16)
    return g.new_player_id


def _send_new_player_cookie(response: Response) -> Response:
    new_id = g.pop("new_player_id", None)
    # A refused write (4xx) created no player, so it hands out no id either.
    if new_id is not None and response.status_code < 400:
        response.set_cookie(
            COOKIE_NAME,
            _signer().sign(new_id).decode(),
            max_age=COOKIE_MAX_AGE,
            httponly=True,
            samesite="Lax",
            secure=request.is_secure,
        )
    return response


def init_app(app: Flask) -> None:
    app.after_request(_send_new_player_cookie)
