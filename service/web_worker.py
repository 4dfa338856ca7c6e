"""The gunicorn worker class of `rally web` and `rally serve`.

gevent's: every connection is a greenlet, so a client that sends its request
slowly holds a little memory and never a worker (see "Slow clients" in
docs/performance.md). A request gunicorn itself cannot parse (a malformed
request line or header, a request line or headers over gunicorn's limits) is
answered in the app's JSON, `{"error": message, "status": code}`, instead of
gunicorn's HTML page; the rarer refusals (an unsupported transfer coding,
a failed expectation) keep gunicorn's own answer.
"""

from __future__ import annotations

import json
import socket
import time

from gunicorn import util
from gunicorn.http.errors import (
    ConfigurationProblem,
    ExpectationFailed,
    ForbiddenProxyRequest,
    InvalidResponseHeader,
    InvalidResponseHeaderName,
    LimitRequestHeaders,
    LimitRequestLine,
    ParseException,
    UnsupportedTransferCoding,
)
from gunicorn.workers.ggevent import GeventWorker

# After a refusal, unread request bytes are drained this long (at most this much) before
# closing: closing with them unread resets the connection, and the answer may be lost.
LINGER_SECONDS = 1.0
LINGER_BYTES = 256 * 1024
REASONS = {400: "Bad Request", 414: "URI Too Long", 431: "Request Header Fields Too Large"}
# Parse errors gunicorn answers with another status than 400, or that are not the client's.
NOT_BAD_REQUESTS = (
    ConfigurationProblem,
    ExpectationFailed,
    ForbiddenProxyRequest,
    InvalidResponseHeader,
    InvalidResponseHeaderName,
    UnsupportedTransferCoding,
)


def json_refusal(error: Exception) -> tuple[int, str] | None:
    """Status and message for a request gunicorn could not parse; None for other errors."""
    if isinstance(error, LimitRequestLine):
        return 414, "the request line is too long"
    if isinstance(error, LimitRequestHeaders):
        return 431, "the request headers are too large or too many"
    if isinstance(error, ParseException) and not isinstance(error, NOT_BAD_REQUESTS):
        return 400, f"malformed request: {error}"
    return None


def json_answer(status: int, message: str) -> bytes:
    body = json.dumps({"error": message, "status": status}).encode()
    head = (
        f"HTTP/1.1 {status} {REASONS[status]}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


class JsonErrorsGeventWorker(GeventWorker):
    """gunicorn's gevent worker answering the requests it cannot parse in JSON."""

    def handle_error(
        self, req: object, client: socket.socket, addr: tuple[str, int] | None, exc: Exception
    ) -> None:
        refusal = json_refusal(exc)
        if refusal is None:
            super().handle_error(req, client, addr, exc)
            return
        self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        try:
            util.write_nonblock(client, json_answer(*refusal))
            drain(client)
        except OSError:
            self.log.debug("Failed to send error message.")


def drain(client: socket.socket) -> None:
    """Finish sending, then read what the client still sends, within the linger limits."""
    client.shutdown(socket.SHUT_WR)
    deadline = time.monotonic() + LINGER_SECONDS
    drained = 0
    while drained < LINGER_BYTES and (left := deadline - time.monotonic()) > 0:
        client.settimeout(left)
        chunk = client.recv(65536)
        if not chunk:
            return
        drained += len(chunk)
