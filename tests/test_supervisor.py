"""`rally serve` supervises its children: each one killed comes back while the site answers."""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from puzzles import GAMES
from service.config import Config
from service.jobs.queue import solve_job_id
from service.operations import supervisor
from service.operations.children import command_line, process_info, session_members
from service.operations.supervisor import (
    HEALTH_MISSES,
    STABLE_SECONDS,
    Backoff,
    Child,
    WebProbe,
)
from tests.process_support import alive, free_port, started_under, wait_for_http
from tests.queue_support import wait_for_planning

pytestmark = pytest.mark.processes  # these tests run service processes

STOP_SECONDS = 40
# Generous bounds for a loaded machine: a restarted gunicorn imports the whole app again.
COME_BACK_SECONDS = 90
ANSWER_SECONDS = 60
# A few requests a second: well within any read limit.
ASK_INTERVAL_SECONDS = 0.25
# What identifies each child in its command line.
CHILDREN = {
    "redis-server": b"redis-server",
    "web": b"gunicorn",
    "worker": b"service.operations.cli\x00worker",
}


@dataclass
class Serve:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    instance_path: Path

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def child(self, name: str) -> int | None:
        """The pid of serve's running child of that name. Each child leads a session of its
        own, unlike the orphans of a dead one that serve adopts (a killed master's workers)."""
        for pid in started_under(self.process.pid):
            info, command = process_info(pid), command_line(pid)
            if info is None or command is None:
                continue
            if (info.parent, info.session, info.running) == (self.process.pid, pid, True) and (
                CHILDREN[name] in command
            ):
                return pid
        return None


@pytest.fixture
def serve(
    instance_path: Path, process_env: dict[str, str], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Serve]:
    """`rally serve` on the embedded defaults, restarting children after 1 s (or the
    delay a test gives with `@pytest.mark.parametrize("serve", [seconds], indirect=True)`)."""
    port = free_port()
    delay = str(getattr(request, "param", 1))
    env = {**process_env, "RALLY_INSTANCE_PATH": str(instance_path), "RALLY_RESTART_DELAY": delay}
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "service.operations.cli", "serve", "--port", str(port)],
            env=env, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    running = Serve(process, port, log, instance_path)
    try:
        wait_for_http(running.url("/healthz"))
        yield running
    finally:
        started = started_under(process.pid)
        process.send_signal(signal.SIGTERM)
        assert process.wait(STOP_SECONDS) == 0
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [pid for pid in started if alive(pid)] == []


def ask(url: str, body: bytes | None = None) -> int | None:
    """The HTTP status of a GET of url, or of a JSON POST of body; None when no answer came
    within ANSWER_SECONDS."""
    headers = {} if body is None else {"Content-Type": "application/json"}
    try:
        request = urllib.request.Request(url, data=body, headers=headers)
        with urllib.request.urlopen(request, timeout=ANSWER_SECONDS) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def zombies_under(leader: int) -> list[int]:
    """Ended processes under leader that nobody reaped (after a moment for the reaping)."""

    def zombies() -> list[int]:
        found = []
        for pid in started_under(leader):
            info = process_info(pid)
            if info is not None and not info.running:
                found.append(pid)
        return found

    deadline = time.monotonic() + 2
    while zombies() and time.monotonic() < deadline:
        time.sleep(0.1)
    return zombies()


@pytest.mark.parametrize("name", list(CHILDREN))
def test_a_killed_child_is_restarted_while_the_site_answers(serve: Serve, name: str):
    killed = serve.child(name)
    assert killed is not None
    stop_asking = threading.Event()
    statuses: list[int | None] = []

    def keep_asking() -> None:
        while not stop_asking.is_set():
            statuses.append(ask(serve.url("/api/v1/games")))
            time.sleep(ASK_INTERVAL_SECONDS)

    asker = threading.Thread(target=keep_asking)
    asker.start()
    try:
        os.kill(killed, signal.SIGKILL)
        deadline = time.monotonic() + COME_BACK_SECONDS
        while serve.child(name) in (None, killed):
            assert time.monotonic() < deadline, f"the {name} process did not come back"
            time.sleep(0.2)
        healthz = json.loads(wait_for_http(serve.url("/healthz"), seconds=COME_BACK_SECONDS))
        assert healthz["status"] == "ok"
    finally:
        stop_asking.set()
        asker.join()
    # Every request made meanwhile was answered: connections made while the web
    # restarted waited in the backlog of the socket that serve keeps open.
    assert statuses and set(statuses) == {200}
    assert zombies_under(serve.process.pid) == []
    deadline = time.monotonic() + 10  # the dead child's orphans get a grace, then are killed
    while session_members(killed) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert session_members(killed) == []
    log = serve.log.read_text()
    assert f"the {name} process (pid {killed}) was killed by SIGKILL" in log
    assert "restarting it in 1 s" in log


@pytest.mark.parametrize("serve", [4], indirect=True)
def test_a_puzzle_asked_for_while_redis_is_down_is_queued_once_it_is_back(serve: Serve):
    config = Config.from_env({"RALLY_INSTANCE_PATH": str(serve.instance_path)})
    wait_for_planning(config.redis_url, config)  # its sweep is over before Redis goes
    os.kill(serve.child("redis-server"), signal.SIGKILL)
    deadline = time.monotonic() + COME_BACK_SECONDS
    while ask(serve.url("/healthz")) != 503:  # Redis is down for the restart delay
        assert time.monotonic() < deadline
        time.sleep(0.1)
    game, seed = "crazy-rally", "asked-while-redis-was-down"
    status = ask(serve.url(f"/api/v1/puzzles/{game}/{seed}"), b"{}")
    assert status == 202  # recorded as pending, and not queued: Redis is down
    assert ask(serve.url("/healthz")) == 503  # it still was
    wait_for_http(serve.url("/healthz"), seconds=COME_BACK_SECONDS)
    connection = redis.Redis.from_url(config.redis_url)
    job_id = solve_job_id(game, seed, GAMES[game].rules_version)
    try:
        while not connection.exists(f"rq:job:{job_id}"):
            assert time.monotonic() < deadline, "the puzzle was not queued"
            time.sleep(0.2)
    finally:
        connection.close()
    # The sweep logs once it has queued every pending puzzle, a moment after this one.
    swept = r"queued \d+ pending puzzles after Redis restarted"
    while not re.search(swept, serve.log.read_text()):
        assert time.monotonic() < deadline, serve.log.read_text()
        time.sleep(0.2)


def test_restart_delays_double_up_to_the_longest_and_reset_after_a_stable_run():
    backoff = Backoff(first=1, longest=10)
    assert [backoff.delay(ran_for=0.5) for _ in range(6)] == [1, 2, 4, 8, 10, 10]
    assert backoff.delay(ran_for=STABLE_SECONDS) == 1
    assert backoff.delay(ran_for=1) == 2
    assert Backoff(first=0, longest=10).delay(ran_for=0) == 0


class Unhealthy(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"status": "failing", "failing": ["redis"]}'
        self.send_response(503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


def test_a_web_that_stops_answering_healthz_is_hung_one_that_answers_503_is_not(monkeypatch):
    monkeypatch.setattr(supervisor, "HEALTH_TIMEOUT_SECONDS", 0.2)
    web = Child("web", lambda: subprocess.Popen(["true"]), Backoff(1, 1))
    # Accepts connections (into its backlog) and never answers: a hung web.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        probe = WebProbe(f"http://127.0.0.1:{silent.getsockname()[1]}/healthz", web)
        for _ in range(HEALTH_MISSES - 1):
            probe.check()
            assert not probe.web_hung()
        probe.check()
        assert probe.web_hung()
        assert probe.misses == 0
        for _ in range(HEALTH_MISSES - 1):
            probe.check()
        web.started_at += 1  # a restarted web: the misses of the one before do not count
        probe.check()
        assert probe.misses == 1 and not probe.web_hung()
    server = http.server.HTTPServer(("127.0.0.1", 0), Unhealthy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        probe = WebProbe(f"http://127.0.0.1:{server.server_port}/healthz", web)
        for _ in range(HEALTH_MISSES + 1):
            probe.check()
        assert not probe.web_hung()
        assert probe.last_answer.startswith("unhealthy (503)")
    finally:
        server.shutdown()
        server.server_close()
