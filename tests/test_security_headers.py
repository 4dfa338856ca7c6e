"""Security headers on every kind of answer: pages, static files, API JSON and errors."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

ANSWERS = [
    ("GET", "/"),
    ("GET", "/rules/rallye-raser"),
    ("GET", "/static/css/site.css"),
    ("GET", "/static/js/play.js"),
    ("GET", "/api/v1/daily"),
    ("GET", "/api/v1/openapi.json"),
    ("GET", "/no-such-page"),
    ("GET", "/api/v1/no-such-resource"),
    ("POST", "/api/v1/daily"),
]


@pytest.mark.parametrize(("method", "path"), ANSWERS)
def test_every_answer_carries_the_security_headers(client: FlaskClient, method: str, path: str):
    headers = client.open(path, method=method).headers
    policy = {
        directive.split()[0]: directive.split()[1:]
        for directive in headers["Content-Security-Policy"].split("; ")
    }
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "same-origin"
