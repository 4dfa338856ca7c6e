"""Anonymous players: an id in a signed cookie, created on a player's first write.

Nothing is asked of a player: the first accepted write gives them a random id, kept
in a cookie signed with RALLY_SECRET_KEY so that nobody can claim another
player's id (and with it their attempts, official runs or a daily's solution).
New ids are rate limited per address. Only writes hand out ids, and every write
is checked to come from the site itself (service.web.same_origin), so no request
from another site ever sets or replaces the cookie.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import unicodedata

import icu
from flask import Flask, Response, current_app, g, request
from itsdangerous import BadSignature, Signer

from service.web.errors import ApiError
from service.web.ratelimit import Limit

COOKIE_NAME = "rally_player"
# Browsers cap a cookie's lifetime at 400 days.
COOKIE_MAX_AGE = 400 * 24 * 3600
_SIGNER_SALT = "rally-daily/player"
_SIGNER_EXTENSION = "rally-player-signer"
MAX_NAME_CHARS = 40
# Unicode categories a display name may not hold: control, format (bidirectional
# overrides and isolates, zero-width spaces and joiners, soft hyphen), surrogate,
# private use and unassigned characters, and line and paragraph separators. They
# reorder, hide or break what others read.
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
# Characters of other categories that show nothing: the Hangul fillers (letters that
# render as blank space), the braille blank, the combining grapheme joiner, the Khmer
# inherent vowels (default-ignorable marks), and the musical null notehead U+1D159 (a
# symbol drawn as nothing). A name of them looks empty, and beside a real name they make
# a look-alike.
_INVISIBLE = {
    "\u115f",
    "\u1160",
    "\u3164",
    "\uffa0",
    "\u2800",
    "\u034f",
    "\u17b4",
    "\u17b5",
    "\U0001d159",
}
# Every space character (Unicode category Zs): a run of them is one space in a name, and a
# name starts and ends with none, so "Ada" and "Ada" with no-break spaces after are one.
_SPACES = re.compile("[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")
# The two variation selectors of emoji (text and emoji presentation): the only ones a name
# may hold, once, right after a character that has an emoji form.
_EMOJI_SELECTORS = {"\ufe0e", "\ufe0f"}
# Unicode's own confusables data (UTS #39), from ICU: names with one skeleton look alike.
_SPOOF_CHECKER = icu.SpoofChecker()
# Characters of the public mark that tells look-alike names on a board apart.
TAG_CHARS = 5
# What a name needs at least one of: a letter, digit, punctuation mark or symbol. Spaces
# and combining marks alone show nothing (a mark needs a character to sit on).
_VISIBLE_CATEGORIES = ("L", "N", "P", "S")


def _signer() -> Signer:
    signer: Signer = current_app.extensions[_SIGNER_EXTENSION]
    return signer


def current_player_id() -> str | None:
    """The id in the request's cookie, or None when it is absent or its signature is wrong."""
    if "cookie_player_id" not in g:
        g.cookie_player_id = _verified_cookie()
    player_id: str | None = g.cookie_player_id
    return player_id


def _verified_cookie() -> str | None:
    signed = request.cookies.get(COOKIE_NAME)
    if signed is None:
        return None
    try:
        return _signer().unsign(signed).decode()
    except (BadSignature, UnicodeDecodeError):
        return None


def request_player_id() -> str | None:
    """The caller's id: from the cookie, or the new one this request is handing out."""
    return current_player_id() or g.get("new_player_id")


def admit_write(*limits: Limit) -> None:
    """Count this write against limits and, when the caller has no player id yet, against
    the new player ids, all in one check (ApiError 429 at the first one it is over).

    A caller without an id is given one here, whose cookie goes out with a successful
    answer: the limit on new ids counts every write that would hand one out.
    """
    limiter = current_app.extensions["rally"].limiter
    if request_player_id() is not None:
        limiter.check(*limits)
        return
    limiter.check(*limits, limiter.new_players)
    g.new_player_id = secrets.token_urlsafe(16)


def player_id_for_write() -> str:
    """The caller's id: from the cookie, the one admit_write gave, or a new one (ApiError
    429 when this address has had too many new ids lately)."""
    existing = request_player_id()
    if existing is not None:
        return existing
    admit_write()
    player_id: str = g.new_player_id
    return player_id


def hand_over(player_id: str) -> None:
    """Make this request's answer, if successful, set the caller's cookie to player_id (a
    transfer link redeemed: service.web.transfers)."""
    g.new_player_id = player_id


def _refused(char: str) -> bool:
    return unicodedata.category(char) in _REFUSED_CATEGORIES or char in _INVISIBLE


def _visible(char: str) -> bool:
    return unicodedata.category(char).startswith(_VISIBLE_CATEGORIES) and char not in _INVISIBLE


def _is_variation_selector(char: str) -> bool:
    return bool(icu.Char.hasBinaryProperty(char, icu.UProperty.VARIATION_SELECTOR))


def _stray_variation_selector(name: str) -> str | None:
    """A variation selector that is not an emoji's: one other than the text and emoji
    selectors, or one not right after a character with an emoji form (so never two in a
    row). Variation selectors show nothing of their own: in a row, they make look-alikes."""
    for before, char in zip(" " + name, name, strict=False):  # each with the one before
        if not _is_variation_selector(char):
            continue
        emoji = bool(icu.Char.hasBinaryProperty(before, icu.UProperty.EMOJI))
        if char not in _EMOJI_SELECTORS or not emoji or _is_variation_selector(before):
            return char
    return None


def name_refusal(name: str) -> str | None:
    """Why a name (in NFC, spaces folded) is refused, or None: it holds a control,
    bidirectional, zero-width, line-breaking or other invisible character or a variation
    selector outside an emoji, starts with a combining mark (which has nothing to sit
    on), shows no visible character at all, or is too long."""
    refused = next((c for c in name if _refused(c)), None) or _stray_variation_selector(name)
    if refused is not None:
        return f"the character U+{ord(refused):04X} is not allowed in a name"
    if not any(_visible(c) for c in name):
        return "a name must show at least one visible character"
    if unicodedata.category(name[0]).startswith("M"):
        return "a name cannot start with a combining mark"
    if len(name) > MAX_NAME_CHARS:
        return f"at most {MAX_NAME_CHARS} characters"
    return None


def fold_spaces(name: str) -> str:
    """The name with each run of space characters (no-break spaces too) one space, and
    none at either end."""
    return _SPACES.sub(" ", name).strip(" ")


def clean_display_name(raw: str | None, field: str = "name") -> str | None:
    """The name in Unicode NFC with its spaces folded, or ApiError 400 saying why it is
    refused (name_refusal), naming the body's field it came in."""
    if raw is None:
        return None
    name = fold_spaces(unicodedata.normalize("NFC", raw))
    refusal = name_refusal(name)
    if refusal is not None:
        raise ApiError(400, f"{field}: {refusal}")
    return name


def name_skeleton(name: str) -> str:
    """The name's skeleton (Unicode TR39): names that look alike, a Latin name and its
    Cyrillic homoglyph, "rn" and "m", have the same one. Spaces are folded first, so a
    name stored before they were (with trailing no-break spaces) meets its twin."""
    skeleton: str = _SPOOF_CHECKER.getSkeleton(0, fold_spaces(unicodedata.normalize("NFC", name)))
    return skeleton


def player_tag(secret_key: str, player_id: str) -> str:
    """A short public mark of a player, the same on every board: a keyed hash of their id
    (never the id itself), TAG_CHARS letters and digits."""
    digest = hmac.new(secret_key.encode(), f"tag/{player_id}".encode(), hashlib.sha256)
    return base64.b32encode(digest.digest()).decode().lower()[:TAG_CHARS]


def look_alike_tags(secret_key: str, names: list[tuple[str, str | None]]) -> list[str | None]:
    """For (player id, name) pairs on one board: each one's player tag where another
    player's name there looks the same (same skeleton), else None."""
    players_by_skeleton: dict[str, set[str]] = {}
    skeletons = [None if name is None else name_skeleton(name) for _, name in names]
    for (player, _), skeleton in zip(names, skeletons, strict=True):
        if skeleton is not None:
            players_by_skeleton.setdefault(skeleton, set()).add(player)
    return [
        player_tag(secret_key, player)
        if skeleton is not None and len(players_by_skeleton[skeleton]) > 1
        else None
        for (player, _), skeleton in zip(names, skeletons, strict=True)
    ]


def _send_new_player_cookie(response: Response) -> Response:
    new_id = g.pop("new_player_id", None)
    # A refused write (4xx) created no player and redeemed no link: it hands out no id.
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


def init_app(app: Flask, secret_key: str) -> None:
    """Sign player cookies with secret_key (RALLY_SECRET_KEY)."""
    app.extensions[_SIGNER_EXTENSION] = Signer(secret_key, salt=_SIGNER_SALT)
    app.after_request(_send_new_player_cookie)
