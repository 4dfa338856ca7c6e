"""Reading a request's JSON body: strict JSON, integers only, Unicode text, bounded nesting,
then the route's schema. Any refusal is an ApiError 400 that changes nothing."""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

import jsonschema_rs
from flask import current_app, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wsgi import get_input_stream

from service.web.errors import ApiError

# Deepest nesting of lists and objects a body may have: no request needs more, and
# deeper values would make recursive code (JSON encoding, rules engines) fail.
MAX_BODY_DEPTH = 16
# Longest excerpt of a validation message: messages quote the offending value,
# which may be an entire oversized body.
MAX_MESSAGE_CHARS = 300
# Longest excerpt of the offending value at the head of a message, so that what is wrong
# with it (say "has more than 18 items") is never cut off.
MAX_QUOTED_CHARS = 60


class _RefusedValueError(ValueError):
    """A value the JSON parser reads but the API never takes."""


def _reject_constant(name: str) -> Any:
    raise _RefusedValueError(f"{name} is not JSON")


def _reject_fraction(number: str) -> Any:
    raise _RefusedValueError(f"{number} is not an integer, and every number the API takes is one")


# A JSON string literal (RFC 8259: any character but '"' and '\\', or an escape).
_STRING_LITERAL = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Outside its strings, JSON text holds only brackets and these.
_NOT_BRACKETS = str.maketrans("", "", " \t\n\r,:0123456789+-.eEtruefalsn")
_NESTING_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# A \u escape of a UTF-16 surrogate. Text decoded strictly cannot hold a surrogate, so a
# lone one can only come from such an escape; a pair of them spells one character.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _outside_strings(text: str) -> str:
    """Valid JSON text without its strings. With no escape in the text, every other
    quote ends a string, and splitting on quotes is much faster than the pattern."""
    if "\\" in text:
        return _STRING_LITERAL.sub("", text)
    return "".join(text.split('"')[::2])


def _nesting_depth(text: str) -> int:
    """How deep lists and objects nest in valid JSON text: its brackets outside strings,
    counted without walking the parsed value."""
    brackets = _outside_strings(text).translate(_NOT_BRACKETS)
    return max(accumulate(map(_NESTING_STEP.__getitem__, brackets)), default=0)


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in value's strings (its keys included), or None."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            surrogate = _SURROGATE.search(item)
            if surrogate:
                return surrogate[0]
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None


def _body_problem(text: str, body: Any, max_depth: int) -> str | None:
    """What makes a parsed body unusable, or None: lists or objects nested more than
    max_depth levels, or a string (a value or an object's key) with a lone surrogate.
    Reads the text, which costs a fraction of walking the value: the value is walked
    only when the text escapes a surrogate."""
    if _nesting_depth(text) > max_depth:
        return f"it nests more than {max_depth} levels deep"
    surrogate = _lone_surrogate(body) if _SURROGATE_ESCAPE.search(text) else None
    if surrogate is not None:
        return f"a string holds the lone surrogate \\u{ord(surrogate):04x}, not text"
    return None


def _body_bytes() -> bytes:
    """The request's body, whole: RequestEntityTooLarge (a 413) when it is larger than the
    app's limit, however it was sent.

    werkzeug's stream of a body sent in chunks (no Content-Length) ends at the limit
    without a word, and the cut body was then parsed: read one byte past the limit, so
    that a body over it is seen to be and refused before any parsing."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    raw = get_input_stream(request.environ, max_content_length=limit + 1).read()
    if len(raw) > limit:
        raise RequestEntityTooLarge()
    return raw


def _body_text(raw: bytes) -> str:
    """The body as text, in the encoding JSON's own rules detect, decoded strictly (so no
    surrogate can hide in the bytes)."""
    return raw.decode(json.detect_encoding(raw))


def read_json_body(validator: jsonschema_rs.Validator) -> Any:
    """The request's JSON body, checked by validator (ApiError 400 otherwise).

    Numbers must be integers (2.0 and 1e3 are refused, JSON Schema would count them as
    integers) and strings Unicode text. A body larger than MAX_CONTENT_LENGTH, with a
    Content-Length or sent in chunks, raises the 413 of the app's limit.
    """
    try:
        text = _body_text(_body_bytes())
        body = json.loads(text, parse_constant=_reject_constant, parse_float=_reject_fraction)
    except _RefusedValueError as error:
        raise ApiError(400, f"the request body is refused: {error}") from None
    except (ValueError, RecursionError) as error:
        raise ApiError(400, f"the request body is not valid JSON: {error}") from None
    problem = _body_problem(text, body, MAX_BODY_DEPTH)
    if problem is not None:
        raise ApiError(400, f"the request body is refused: {problem}")
    first_error = next(validator.iter_errors(body), None)
    if first_error is not None:
        raise ApiError(400, _validation_message(first_error))
    return body


def _validation_message(error: jsonschema_rs.ValidationError) -> str:
    """Where the body breaks its schema and how, the value it quotes cut short."""
    where = "/".join(str(part) for part in error.instance_path) or "body"
    message = error.message
    quoted = json.dumps(error.instance, separators=(",", ":"), ensure_ascii=False)
    if len(quoted) > MAX_QUOTED_CHARS and message.startswith(quoted):
        message = f"{quoted[:MAX_QUOTED_CHARS]}…{message[len(quoted) :]}"
    return f"{where}: {message}"[:MAX_MESSAGE_CHARS]
