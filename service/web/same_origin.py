"""Writes come from the site itself: JSON, and same-origin when a browser sends them.

A browser lets any page send a "simple" cross-site request (a form post, or a
fetch with Content-Type text/plain) with the visitor's cookies. Requiring
`application/json` forces a CORS preflight, which this service never grants;
checking `Sec-Fetch-Site` and `Origin` (which browsers set on every write)
refuses what a page of another origin, even of the same site, sends. Clients
that are not browsers (curl, scripts) send neither header and cannot act for
anyone else, so they pass.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, current_app, request

from service.web.errors import ApiError

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# Sec-Fetch-Site values of a request the site's own pages made (or the user typed).
OWN_FETCH_SITES = {"same-origin", "none"}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def allowed_origins() -> set[str]:
    """The site's public origin, and the origin the browser asked (the same server)."""
    return {_origin(current_app.extensions["rally"].config.public_url), _origin(request.host_url)}


def check_write() -> None:
    """Refuse (403) a write that is not JSON or that a browser sent from another origin."""
    if request.method in SAFE_METHODS or request.routing_exception is not None:
        return  # reads change nothing; an unknown path or method answers its own 404 or 405
    if request.mimetype != "application/json":
        raise ApiError(403, "writes must be sent as Content-Type: application/json")
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None and fetch_site not in OWN_FETCH_SITES:
        raise ApiError(403, f"writes are accepted from this site's own pages only ({fetch_site})")
    origin = request.headers.get("Origin")
    if origin is not None and _origin(origin) not in allowed_origins():
        raise ApiError(403, "writes are accepted from this site's own pages only (Origin)")


def init_app(app: Flask) -> None:
    app.before_request(check_write)
