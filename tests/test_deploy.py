"""deploy.yml: each command in it runs for real here, with the environment the file gives
it, pointed at this machine's PostgreSQL and Redis (Docker itself does not run here)."""

from __future__ import annotations

import json
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from puzzles import GAMES
from service.config import Config
from service.domain import daily
from service.operations.processes import gunicorn_command
from service.storage.store import Store
from tests.process_support import free_port, wait_for_http
from tests.queue_support import wait_for_planning

ROOT = Path(__file__).resolve().parent.parent
DEPLOY_FILE = ROOT / "deploy.yml"
NGINX_CONFIG = ROOT / "deploy" / "nginx.conf"
# What an operator exports before `docker compose up` (see the file's header).
OPERATOR_VARIABLES = {
    "POSTGRES_PASSWORD": "not-used-here",
    "RALLY_SECRET_KEY": secrets.token_urlsafe(32),
    "RALLY_DAILY_KEY": secrets.token_urlsafe(32),
    "RALLY_PUBLIC_URL": "https://rally.example.org",
}
VARIABLE = re.compile(r"\$\{(\w+)(?::[?-][^}]*)?\}")
STOP_SECONDS = 30


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return yaml.safe_load(DEPLOY_FILE.read_text())["services"]


def substitute(value: str) -> str:
    """Compose's ${NAME} and ${NAME:?message} with the operator's variables."""
    return VARIABLE.sub(lambda match: OPERATOR_VARIABLES[match.group(1)], value)


def option_value(command: list[str], option: str) -> str:
    return command[command.index(option) + 1]


def option_replaced(command: list[str], option: str, value: str) -> list[str]:
    """command with the value after option replaced (it must be there)."""
    position = command.index(option) + 1
    return [*command[:position], value, *command[position + 1 :]]


def rally_command(command: list[str]) -> list[str]:
    """The image's `rally` console script is this checkout's `python -m service.operations.cli`."""
    assert command[0] == "rally"
    return [sys.executable, "-m", "service.operations.cli", *command[1:]]


def local_env(
    service: dict[str, Any],
    process_env: dict[str, str],
    database_url: str,
    redis_url: str,
    instance_path: Path,
) -> dict[str, str]:
    """The service's environment from the file, with its servers swapped for the local ones."""
    env = {name: substitute(str(value)) for name, value in service["environment"].items()}
    assert env["DATABASE_URL"].split("://")[0] == database_url.split("://")[0]
    # The file's Redis is a server over TCP; the local one may be on a unix socket.
    assert env["REDIS_URL"].startswith("redis://")
    env.update(
        DATABASE_URL=database_url, REDIS_URL=redis_url, RALLY_INSTANCE_PATH=str(instance_path)
    )
    return {**process_env, **env}


def stop(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM, and a second one (RQ's cold shutdown) if the first is not enough."""
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
        return process.wait(STOP_SECONDS)


def test_the_file_describes_the_scaled_out_service(services: dict[str, Any]):
    assert set(services) == {"postgres", "redis", "migrate", "web", "worker", "proxy"}
    assert services["web"]["deploy"]["replicas"] >= 2
    assert services["worker"]["deploy"]["replicas"] >= 2
    assert services["migrate"]["restart"] == "no"
    redis_command = services["redis"]["command"]
    assert redis_command[redis_command.index("--appendonly") + 1] == "yes"
    rally_envs = [services[name]["environment"] for name in ("migrate", "web", "worker")]
    assert rally_envs[0] == rally_envs[1] == rally_envs[2]
    # Every replica must share the secrets, so the file demands them instead of generating.
    for name in ("RALLY_SECRET_KEY", "RALLY_DAILY_KEY"):
        assert rally_envs[0][name] == f"${{{name}:?set {name}}}"


def test_only_the_proxy_is_published_and_it_reaches_the_web_replicas(services: dict[str, Any]):
    assert [name for name, service in services.items() if "ports" in service] == ["proxy"]
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")
    (mount,) = proxy["volumes"]
    source, target, mode = mount.split(":")
    assert (ROOT / source).resolve() == NGINX_CONFIG
    assert target.startswith("/etc/nginx/conf.d/") and mode == "ro"
    (published,) = proxy["ports"]
    listen = re.search(r"^\s*listen (\d+);", NGINX_CONFIG.read_text(), re.MULTILINE)
    assert listen and published.split(":")[-1] == listen.group(1)
    web_port = option_value(services["web"]["command"], "--port")
    upstream = re.findall(r"^\s*server ([\w.-]+):(\d+)[ ;]", NGINX_CONFIG.read_text(), re.MULTILINE)
    assert upstream == [("web", web_port)]
    assert proxy["depends_on"]["web"]["condition"] == "service_healthy"


def test_the_proxy_refuses_the_same_bodies_as_the_app(services: dict[str, Any]):
    config = NGINX_CONFIG.read_text()
    size = re.search(r"client_max_body_size (\d+)k;", config)
    env = {name: substitute(str(value)) for name, value in services["web"]["environment"].items()}
    limit = Config.from_env(env).max_body_bytes
    assert size and int(size.group(1)) * 1024 == limit
    assert f"larger than the limit of {limit} bytes" in config


def test_nginx_closes_idle_connections_to_the_replicas_before_gunicorn_does(
    services: dict[str, Any],
):
    """A request sent on a connection the replica is closing is lost: the side that sends
    (nginx) must give up an idle connection first, with a margin for busy processes."""
    upstream = re.search(r"upstream rally_web \{(.*?)\}", NGINX_CONFIG.read_text(), re.DOTALL)
    assert upstream and "keepalive " in upstream.group(1)
    idle = re.search(r"keepalive_timeout (\d+)s;", upstream.group(1))
    assert idle, "nginx's upstream default (60 s) is longer than gunicorn's keep-alive"
    assert services["web"]["command"][:2] == ["rally", "web"]  # gunicorn_command's gunicorn
    gunicorn = gunicorn_command("0.0.0.0", 8000, 2)
    keep_alive = int(option_value(gunicorn, "--keep-alive"))
    assert int(idle.group(1)) + 2 <= keep_alive


def test_health_checks_ask_livez(services: dict[str, Any]):
    """What an orchestrator acts on is whether a process answers (/livez), not whether the
    whole system is well (/healthz): a Redis outage must not take every replica out."""
    web_check = " ".join(services["web"]["healthcheck"]["test"])
    web_port = option_value(services["web"]["command"], "--port")
    assert f"http://127.0.0.1:{web_port}/livez" in web_check
    assert "http://127.0.0.1/livez" in services["proxy"]["healthcheck"]["test"]


def test_the_image_build_leaves_local_state_out():
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {"instance/", "**/instance/", ".venv/", ".git/", "**/__pycache__/"} <= ignored
    assert (
        "COPY . ."
        in yaml.safe_load(DEPLOY_FILE.read_text())["x-rally"]["build"]["dockerfile_inline"]
    )


def start_redis(
    services: dict[str, Any], folder: Path, port: int, seconds: float = 10
) -> subprocess.Popen[bytes]:
    """The file's redis-server on port, its files in folder, once it answers PING."""
    command = option_replaced(services["redis"]["command"], "--dir", str(folder))
    server = subprocess.Popen([*command, "--port", str(port)], stdout=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    deadline = time.monotonic() + seconds
    try:
        while True:
            try:
                client.ping()
                return server
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
    finally:
        client.close()


@pytest.mark.processes
def test_the_redis_command_persists_append_only(services: dict[str, Any], tmp_path: Path):
    port = free_port()
    server = start_redis(services, tmp_path, port)
    try:
        client = redis.Redis(port=port)
        client.set("kept", "yes")
        assert client.config_get("appendonly") == {"appendonly": "yes"}
    finally:
        assert stop(server) == 0
    assert (tmp_path / "appendonlydir").is_dir()


@pytest.mark.processes
def test_migrate_web_and_worker_run_against_postgres_and_redis(
    services: dict[str, Any],
    postgres_factory,
    redis_url: str,
    tmp_path: Path,
    process_env: dict[str, str],
):
    database_url = postgres_factory()

    def env_of(name: str) -> dict[str, str]:
        return local_env(services[name], process_env, database_url, redis_url, tmp_path / name)

    migrate = subprocess.run(
        rally_command(services["migrate"]["command"]), env=env_of("migrate"), timeout=120
    )
    assert migrate.returncode == 0

    port = free_port()
    web_command = option_replaced(services["web"]["command"], "--port", str(port))
    web = subprocess.Popen(rally_command(web_command), env=env_of("web"))
    worker = subprocess.Popen(rally_command(services["worker"]["command"]), env=env_of("worker"))
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/v1/daily", seconds=60)
        wait_for_planning(redis_url, Config.from_env(env_of("worker")))
        assert run_health_check(services["web"], port).returncode == 0
    finally:
        assert stop(web) == 0
        assert stop(worker) == 0

    days = daily.upcoming_days(daily.today(), Config.from_env(env_of("worker")).days_ahead)
    with Store(database_url) as store:
        recorded = [puzzle for day in days for puzzle in store.puzzles.dailies(day)]
    assert len(recorded) == len(days) * len(GAMES)
    key = OPERATOR_VARIABLES["RALLY_DAILY_KEY"]
    assert {puzzle.seed for puzzle in recorded} == {
        daily.daily_seed(key, game, day) for game in GAMES for day in days
    }


def run_health_check(service: dict[str, Any], port: int) -> subprocess.CompletedProcess[bytes]:
    """The service's health check command, run here against port."""
    kind, program, *arguments = service["healthcheck"]["test"]
    assert (kind, program) == ("CMD", "python")
    local = [argument.replace(":8000/", f":{port}/") for argument in arguments]
    return subprocess.run([sys.executable, *local], timeout=30)


def http_status(url: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of GET url, an error status included."""
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.processes
def test_a_replica_stays_live_while_redis_is_down_and_healthz_says_so(
    services: dict[str, Any], postgres_factory, tmp_path: Path, process_env: dict[str, str]
):
    """Redis killed under the file's web replica: /livez and the file's health check pass,
    /healthz is 503 naming Redis (and the queue, which lives in it)."""
    database_url = postgres_factory()
    redis_port = free_port()
    redis_url = f"redis://127.0.0.1:{redis_port}/0"

    def env_of(name: str) -> dict[str, str]:
        return local_env(services[name], process_env, database_url, redis_url, tmp_path / name)

    server = start_redis(services, tmp_path, redis_port)
    migrate = rally_command(services["migrate"]["command"])
    assert subprocess.run(migrate, env=env_of("migrate"), timeout=120).returncode == 0
    port = free_port()
    web_command = option_replaced(services["web"]["command"], "--port", str(port))
    web = subprocess.Popen(rally_command(web_command), env=env_of("web"))
    try:
        wait_for_http(f"http://127.0.0.1:{port}/livez", seconds=60)
        assert http_status(f"http://127.0.0.1:{port}/livez") == (200, {"status": "live"})
        server.kill()
        server.wait()
        assert http_status(f"http://127.0.0.1:{port}/livez") == (200, {"status": "live"})
        assert run_health_check(services["web"], port).returncode == 0
        status, health = http_status(f"http://127.0.0.1:{port}/healthz")
        assert (status, health["status"], health["failing"]) == (503, "failing", ["redis", "queue"])
        assert health["checks"]["database"]["ok"]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        assert stop(web) == 0
