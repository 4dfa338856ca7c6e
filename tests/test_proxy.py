"""Slow clients and the reverse proxy: `rally web` alone, and Debian's nginx running the
repository's deploy/nginx.conf in front of it, keep answering while slow sockets are held."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from service.storage.migrations import upgrade
from service.web.security import SECURITY_HEADERS
from tests.process_support import environment_without_settings, free_port, wait_for_http
from tests.proxy_support import nginx

pytestmark = pytest.mark.processes  # these tests run service processes

SLOW_SOCKETS = 16
SLOW_LINE_SECONDS = 2.0
# Generous: a request answered at all while the slow sockets are held (unpinned workers
# answer in milliseconds; pinned ones not before gunicorn's 30 s timeout kills them).
ANSWER_SECONDS = 10.0
STOP_SECONDS = 30


@contextmanager
def slow_sockets(port: int, count: int = SLOW_SOCKETS) -> Iterator[None]:
    """count connections that each send a request line, then one header line every
    SLOW_LINE_SECONDS, never finishing their request, until the block ends."""
    stop = threading.Event()
    opened = threading.Barrier(count + 1)

    def trickle() -> None:
        with socket.create_connection(("127.0.0.1", port)) as connection:
            connection.sendall(b"GET /api/v1/games HTTP/1.1\r\nHost: localhost\r\n")
            opened.wait()
            line = 0
            while not stop.wait(SLOW_LINE_SECONDS):
                line += 1
                try:
                    connection.sendall(f"X-Slow-{line}: {'x' * 20}\r\n".encode())
                except OSError:
                    return

    threads = [threading.Thread(target=trickle) for _ in range(count)]
    for thread in threads:
        thread.start()
    opened.wait()
    time.sleep(SLOW_LINE_SECONDS + 0.5)  # each has been accepted and sent a header line
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join()


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    """Status and JSON body of a GET answered within ANSWER_SECONDS."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=ANSWER_SECONDS) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        assert error.headers["Content-Type"].startswith("application/json")
        return error.code, json.loads(error.read())


def raw_request(port: int, data: bytes) -> tuple[int, dict[str, str], dict]:
    """Status, headers and JSON body of the answer to bytes sent as they are."""
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_SECONDS) as connection:
        connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)  # all sent: nginx need not linger for more
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, json.loads(body)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(STOP_SECONDS) is not None


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory, redis_session_url: str) -> Iterator[int]:
    """`rally web` on SQLite and the test Redis, for the whole module; its port."""
    folder = tmp_path_factory.mktemp("web")
    database_url = f"sqlite:///{folder / 'rally.sqlite3'}"
    upgrade(database_url)
    port = free_port()
    env = {
        **environment_without_settings(),
        "RALLY_INSTANCE_PATH": str(folder / "i"),
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_session_url,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "service.operations.cli", "web", "--port", str(port)], env=env
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", seconds=60)
        yield port
    finally:
        stop(process)


@pytest.fixture(scope="module")
def proxy(web: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with nginx(tmp_path_factory.mktemp("proxy") / "nginx", [web], free_port()) as port:
        yield port


def test_slow_clients_do_not_starve_rally_web(web: int):
    with slow_sockets(web):
        for _ in range(5):
            status, body = get(f"http://127.0.0.1:{web}/api/v1/games")
            assert status == 200 and body


def test_slow_clients_do_not_starve_the_site_behind_nginx(proxy: int):
    with slow_sockets(proxy):
        for _ in range(5):
            status, body = get(f"http://127.0.0.1:{proxy}/api/v1/games")
            assert status == 200 and body


def test_nginx_passes_the_apps_answers_through(proxy: int):
    status, body = get(f"http://127.0.0.1:{proxy}/healthz")
    assert status == 200 and body["status"] == "ok"
    status, body = get(f"http://127.0.0.1:{proxy}/api/v1/no-such-thing")
    assert status == 404 and body["status"] == 404


def test_a_browsers_write_through_nginx_on_its_own_port_is_same_origin(proxy: int):
    """The origin a browser names has the proxy's port: the replica must see it in Host."""
    origin = f"http://127.0.0.1:{proxy}"
    request = urllib.request.Request(
        f"{origin}/api/v1/play/crazy-rally/same-origin",
        data=b'{"actions": []}',
        headers={"Content-Type": "application/json", "Origin": origin},
    )
    with urllib.request.urlopen(request, timeout=ANSWER_SECONDS) as answer:
        assert answer.status == 200 and json.loads(answer.read())["actions"] == []
    foreign = urllib.request.Request(
        request.full_url, data=request.data, headers={**request.headers, "Origin": "http://x"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(foreign, timeout=ANSWER_SECONDS)
    assert refused.value.code == 403


UNPARSABLE_REQUESTS = [
    (b"NOT HTTP AT ALL\r\n\r\n", 400),
    (b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n", 431),
]
# What gunicorn refuses on its own besides, before the app sees the request.
GUNICORN_REFUSALS = [
    *UNPARSABLE_REQUESTS,
    (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n", 501),
    (b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n", 400),
]


@pytest.mark.parametrize("server", ["web", "proxy"])
@pytest.mark.parametrize(("request_bytes", "status"), UNPARSABLE_REQUESTS)
def test_requests_that_cannot_be_parsed_are_refused_in_json(
    request, server: str, request_bytes: bytes, status: int
):
    port = request.getfixturevalue(server)
    answered, headers, body = raw_request(port, request_bytes)
    assert (answered, headers["Content-Type"]) == (status, "application/json")
    assert body["status"] == status and body["error"]


@pytest.mark.parametrize(("request_bytes", "status"), GUNICORN_REFUSALS)
def test_gunicorns_own_answers_carry_the_apps_security_headers(
    web: int, request_bytes: bytes, status: int
):
    answered, headers, body = raw_request(web, request_bytes)
    assert (answered, headers["Content-Type"], body["status"]) == (
        status,
        "application/json",
        status,
    )
    assert {name: headers.get(name) for name in SECURITY_HEADERS} == SECURITY_HEADERS


def test_nginx_refuses_a_body_over_the_apps_limit_in_json(proxy: int):
    too_large = b"POST /api/v1/play/x/y HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
    answered, headers, body = raw_request(proxy, too_large)
    assert (answered, headers["Content-Type"]) == (413, "application/json")
    assert body == {
        "error": "the request body is larger than the limit of 65536 bytes",
        "status": 413,
    }


def chunked_post(path: str, body: bytes, chunk_bytes: int = 16_384) -> bytes:
    """A POST of body in chunks of chunk_bytes (Transfer-Encoding: chunked, no length)."""
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[at : at + chunk_bytes]), body[at : at + chunk_bytes])
        for at in range(0, len(body), chunk_bytes)
    )
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + chunks + b"0\r\n\r\n"


UNSUPPORTED_CODINGS = ["gzip, chunked", "deflate, chunked", "br", "identity, chunked"]


@pytest.mark.parametrize("server", ["web", "proxy"])
@pytest.mark.parametrize("coding", UNSUPPORTED_CODINGS)
def test_a_body_in_a_transfer_coding_other_than_chunked_is_a_501(request, server: str, coding: str):
    """Only chunked is read: a body compressed in transit (gzip then chunked) is refused,
    as the documentation says, never read as if it were plain chunks."""
    port = request.getfixturevalue(server)
    sent = chunked_post("/api/v1/play/crazy-rally/coded", b'{"actions": []}')
    sent = sent.replace(b"Transfer-Encoding: chunked", f"Transfer-Encoding: {coding}".encode())
    status, headers, body = raw_request(port, sent)
    assert (status, headers["Content-Type"], body["status"]) == (501, "application/json", 501)
    assert body["error"]


@pytest.mark.parametrize("server", ["web", "proxy"])
def test_a_chunked_body_over_the_limit_is_a_413_never_cut_and_parsed(request, server: str):
    """A body sent in chunks has no Content-Length to refuse it by: it is refused once more
    than the limit has arrived, never cut at the limit and the cut part parsed."""
    port = request.getfixturevalue(server)
    path = "/api/v1/play/crazy-rally/chunked-body"
    padded = b'{"actions":[]}' + b" " * 70_000 + b"GARBAGE"
    status, headers, body = raw_request(port, chunked_post(path, padded))
    assert (status, headers["Content-Type"], body["status"]) == (413, "application/json", 413)
    assert "65536 bytes" in body["error"]
    # Within the limit, in chunks (urllib sends an iterable body so), it is read whole.
    within = [b'{"actions":', b" " * 60_000, b"[]}"]
    asked = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=iter(within), method="POST"
    )
    asked.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(asked, timeout=ANSWER_SECONDS) as answer:
        assert answer.status == 200 and json.loads(answer.read())["actions"] == []


def test_nginx_answers_json_while_no_replica_is_up(tmp_path: Path):
    with nginx(tmp_path / "nginx", [free_port()], free_port()) as port:  # no replica there
        status, body = get(f"http://127.0.0.1:{port}/api/v1/games")
    assert status == 502 and body["status"] == 502
