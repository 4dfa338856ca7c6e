"""The service's commands run as real processes: serve on the embedded default, worker."""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import redis
from conftest import alive, free_port, started_under, wait_for_http
from rq.job import Job

from service.config import Config
from service.queue import plan_job_id, plan_slot
from service.store import Store

STOP_SECONDS = 40


def rally(*args: str) -> list[str]:
    return [sys.executable, "-m", "service.cli", *args]


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
        commands = {Path(f"/proc/{pid}/cmdline").read_bytes() for pid in started}
        assert any(b"redis-server" in command for command in commands)
        assert any(b"gunicorn" in command for command in commands)
        assert any(b"worker" in command for command in commands)
        second = subprocess.run(rally("serve", "--port", str(free_port())), env=env,
                                capture_output=True, text=True, timeout=60)
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
        stored = store.daily_puzzles(date.fromisoformat(daily["date"]))
    assert {puzzle.seed for puzzle in stored} == {puzzle["seed"] for puzzle in daily["puzzles"]}


def test_a_burst_worker_runs_the_planning_and_exits(
    service_env: Config, process_env: dict[str, str]
):
    env = {
        **process_env,
        "RALLY_INSTANCE_PATH": str(service_env.instance_path),
        "DATABASE_URL": service_env.database_url,
        "REDIS_URL": service_env.redis_url,
    }
    finished = subprocess.run(rally("worker", "--burst"), env=env, timeout=120)
    assert finished.returncode == 0
    slot = plan_slot(datetime.now(UTC), service_env.plan_interval)
    connection = redis.Redis.from_url(service_env.redis_url)
    assert Job.fetch(plan_job_id(slot), connection=connection).get_status() == "finished"
