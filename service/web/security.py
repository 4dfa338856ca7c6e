"""Security headers on every answer of the web application.

The pages carry no inline script or style (every script is an ES module and every
style a stylesheet under /static), so the content security policy can allow
nothing but the site's own files: an injected <script> or style="" attribute,
an <object>, a <base> or a form aimed elsewhere does nothing, and no other site
may frame a page (clickjacking).
"""

from __future__ import annotations

from flask import Flask, Response

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    # Links to other sites (a shared result, a rules reference) tell them nothing.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


def _add_security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def init_app(app: Flask) -> None:
    app.after_request(_add_security_headers)
