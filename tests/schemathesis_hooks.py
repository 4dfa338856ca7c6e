"""What the API refuses that its OpenAPI document cannot say, for schemathesis.

JSON Schema speaks of values, not of the text that wrote them, and has no word for
what a character shows. So a request the document allows is refused (400) when:

- it writes a number with a fraction or an exponent: `2.0` and `1e3` are refused,
  though JSON Schema counts them as the integers 2 and 1000 (tested in
  tests/test_api_errors.py, "an integer written as a fraction");
- a `name` or `display_name` shows nothing, or holds a character that reorders or hides
  text, beyond the control characters its pattern excludes (tested in tests/test_attempts.py,
  REFUSED_NAMES; service.web.players.name_refusal).

And an action the document allows is refused (422) when the rules refuse it: which
actions are legal, and when a game is over, is the rules' to say (schemathesis.toml
lets those operations answer 422; tested throughout tests/test_api.py and
tests/test_attempts.py).

schemathesis.toml loads this module: the requests it would generate of the first two
kinds are left out of the checks that valid requests are accepted.
"""

from __future__ import annotations

import unicodedata
from typing import Any

import schemathesis

from service.web.players import fold_spaces, name_refusal


def holds_a_fraction(value: Any) -> bool:
    """True when a float is anywhere in value (what JSON wrote with a fraction or exponent)."""
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(holds_a_fraction(item) for item in value.values())
    if isinstance(value, list):
        return any(holds_a_fraction(item) for item in value)
    return False


# The body fields that hold a name: a display name, or a league's.
NAME_FIELDS = ("name", "display_name")


def has_a_refused_name(body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    names = [body.get(field) for field in NAME_FIELDS]
    return any(
        isinstance(name, str)
        and name_refusal(fold_spaces(unicodedata.normalize("NFC", name))) is not None
        for name in names
    )


@schemathesis.hook
def filter_body(_context: schemathesis.HookContext, body: Any) -> bool:
    return not holds_a_fraction(body) and not has_a_refused_name(body)
