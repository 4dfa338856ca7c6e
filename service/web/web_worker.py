"""The gunicorn worker class of `rally web` and `rally serve`.

gevent's: every connection is a greenlet, so a client that sends its request
slowly holds a little memory and never a worker (see "Slow clients" in
docs/performance.md). Whatever gunicorn answers itself, before the app sees a
request (a malformed request line or header, a request line or headers over
gunicorn's limits, an unsupported transfer coding, a failed expectation, an
error outside the app), is answered like the app's own errors: JSON
`{"error": message, "status": code}` with the app's security headers
(service.web.security), instead of gunicorn's bare HTML page.
"""

from __future__ import annotations

import atexit
import gc
import json
import socket
import time
from http import HTTPStatus

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

from service.web.security import SECURITY_HEADERS

# After a refusal, unread request bytes are drained this long (at most this much) before
# closing: closing with them unread resets the connection, and the answer may be lost.
LINGER_SECONDS = 1.0
LINGER_BYTES = 256 * 1024
SERVER_ERROR = (500, "internal server error")
# The errors gunicorn answers with another status than 400, with the words for each.
OTHER_STATUSES: tuple[tuple[type[Exception], int, str], ...] = (
    (LimitRequestLine, 414, "the request line is too long"),
    (LimitRequestHeaders, 431, "the request headers are too large or too many"),
    (UnsupportedTransferCoding, 501, "unsupported transfer coding"),
    (ExpectationFailed, 417, "the expectation cannot be met"),
    (ForbiddenProxyRequest, 403, "the request is forbidden"),
    # The server's own fault, not the client's: its configuration, or a header the app
    # tried to send.
    (ConfigurationProblem, *SERVER_ERROR),
    (InvalidResponseHeader, *SERVER_ERROR),
    (InvalidResponseHeaderName, *SERVER_ERROR),
)


def refusal(error: Exception) -> tuple[int, str]:
    """Status and message of gunicorn's answer to error: a client's request it could not
    parse or serve, or else a server error."""
    for kind, status, message in OTHER_STATUSES:
        if isinstance(error, kind):
            return status, message
    if isinstance(error, ParseException):
        return 400, f"malformed request: {error}"
    return SERVER_ERROR


def json_answer(status: int, message: str) -> bytes:
    """The whole HTTP answer: JSON like the app's errors, with the app's security headers."""
    body = json.dumps({"error": message, "status": status}).encode()
    headers = {
        "Connection": "close",
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
        **SECURITY_HEADERS,
    }
    head = f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in headers.items()
    )
    return (head + "\r\n").encode("latin-1") + body


# The collector's thresholds in a web worker: a league's page of 500 members allocates
# about a million objects, and at the default first threshold (700) the collector ran
# every few hundred of them, adding a third to the request's CPU on PostgreSQL
# (docs/performance.md, "A league's page at full size").
COLLECTOR_THRESHOLDS = (50_000, 20, 20)


def settle_heap() -> None:
    """Keep what the app holds for its whole life (modules, the engines' and solver's
    tables, the app) out of the collector's passes, and run them less often: a full pass
    over that heap, every few requests, tripled a league page's p99."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    # Handed back at exit, before the interpreter takes its modules apart: objects still
    # frozen then are finalised after gevent's, and their callbacks fail on the way out.
    atexit.register(gc.unfreeze)


# gunicorn ships no type information, so the type checker sees its classes as Any.
class JsonErrorsGeventWorker(GeventWorker):  # type: ignore[misc]
    """gunicorn's gevent worker answering what it answers itself in the app's JSON, its
    heap settled once the app is built."""

    def load_wsgi(self) -> None:
        super().load_wsgi()
        settle_heap()

    def handle_error(
        self, req: object, client: socket.socket, addr: tuple[str, int] | None, exc: Exception
    ) -> None:
        status, message = refusal(exc)
        if status < 500:
            self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        else:
            self.log.exception("Error handling request: %s", exc)
        try:
            util.write_nonblock(client, json_answer(status, message))
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
