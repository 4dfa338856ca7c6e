"""Slow clients and the reverse proxy: `rally web` alone, and Debian's nginx running the
repository's deploy/nginx.conf in front of it, keep answering while slow sockets are held."""

from __future__ import annotations

import json
import shutil
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

from service.migrations import upgrade
from tests.process_support import environment_without_settings, free_port, wait_for_http

pytestmark = pytest.mark.processes  # these tests run service processes

NGINX_CONFIG = Path(__file__).resolve().parent.parent / "deploy" / "nginx.conf"
# deploy.yml's names for the web replicas and the port nginx listens on in its container.
UPSTREAM_SERVER = "server web:8000;"
LISTEN = "listen 80;"
SLOW_SOCKETS = 16
SLOW_LINE_SECONDS = 2.0
# Generous: a request answered at all while the slow sockets are held (unpinned workers
# answer in milliseconds; pinned ones not before gunicorn's 30 s timeout kills them).
ANSWER_SECONDS = 10.0
STOP_SECONDS = 30


def nginx_binary() -> str:
    """Debian's nginx (`make test` installs it); /usr/sbin is not on every user's PATH."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if not found:
        pytest.fail("nginx is not installed: `make test` installs it (apt-get install nginx)")
    return found


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


def raw_request(port: int, data: bytes) -> tuple[int, str, dict]:
    """Status, content type and JSON body of the answer to bytes sent as they are."""
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_SECONDS) as connection:
        connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)  # all sent: nginx need not linger for more
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers.get("Content-Type", ""), json.loads(body)


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
        [sys.executable, "-m", "service.cli", "web", "--port", str(port)], env=env
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", seconds=60)
        yield port
    finally:
        stop(process)


def proxy_config(web_port: int, proxy_port: int) -> str:
    """deploy/nginx.conf with the replicas' and the listening address made local."""
    config = NGINX_CONFIG.read_text()
    assert config.count(UPSTREAM_SERVER) == 1 and config.count(LISTEN) == 1
    return config.replace(UPSTREAM_SERVER, f"server 127.0.0.1:{web_port};").replace(
        LISTEN, f"listen 127.0.0.1:{proxy_port};"
    )


@contextmanager
def nginx(prefix: Path, web_port: int) -> Iterator[int]:
    """nginx in the foreground, with a prefix of its own, in front of web_port; its port."""
    prefix.mkdir()
    port = free_port()
    (prefix / "rally.conf").write_text(proxy_config(web_port, port))
    temp_paths = "\n".join(
        f"    {kind}_temp_path {prefix / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # What the nginx image's own nginx.conf provides around the included file.
    (prefix / "nginx.conf").write_text(
        f"worker_processes 1;\npid {prefix / 'nginx.pid'};\n"
        "events { worker_connections 512; }\n"
        f"http {{\n    access_log off;\n{temp_paths}\n    include {prefix / 'rally.conf'};\n}}\n"
    )
    command = [nginx_binary(), "-e", "stderr", "-p", str(prefix), "-c", str(prefix / "nginx.conf")]
    subprocess.run([*command, "-t"], check=True, capture_output=True)
    process = subprocess.Popen([*command, "-g", "daemon off;"])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "no nginx"
                time.sleep(0.1)
        yield port
    finally:
        process.send_signal(signal.SIGQUIT)  # nginx's graceful stop
        process.wait(STOP_SECONDS)


@pytest.fixture(scope="module")
def proxy(web: int, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with nginx(tmp_path_factory.mktemp("proxy") / "nginx", web) as port:
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


UNPARSABLE_REQUESTS = [
    (b"NOT HTTP AT ALL\r\n\r\n", 400),
    (b"GET /" + b"a" * 20_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
    (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20_000 + b"\r\n\r\n", 431),
]


@pytest.mark.parametrize("server", ["web", "proxy"])
@pytest.mark.parametrize(("request_bytes", "status"), UNPARSABLE_REQUESTS)
def test_requests_that_cannot_be_parsed_are_refused_in_json(
    request, server: str, request_bytes: bytes, status: int
):
    port = request.getfixturevalue(server)
    answered, content_type, body = raw_request(port, request_bytes)
    assert (answered, content_type) == (status, "application/json")
    assert body["status"] == status and body["error"]


def test_nginx_refuses_a_body_over_the_apps_limit_in_json(proxy: int):
    too_large = b"POST /api/v1/play/x/y HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
    answered, content_type, body = raw_request(proxy, too_large)
    assert (answered, content_type) == (413, "application/json")
    assert body == {
        "error": "the request body is larger than the limit of 65536 bytes",
        "status": 413,
    }


def test_nginx_answers_json_while_no_replica_is_up(tmp_path: Path):
    with nginx(tmp_path / "nginx", free_port()) as port:  # no replica listens there
        status, body = get(f"http://127.0.0.1:{port}/api/v1/games")
    assert status == 502 and body["status"] == 502
