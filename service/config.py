"""Every setting of the service, read from the environment (listed in the README).

Nothing has to be set: the defaults run the whole service from one instance
folder (SQLite, a private Redis on a unix socket, generated secrets). Setting
DATABASE_URL and REDIS_URL points the same code at shared servers.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# A unix socket path must fit in sockaddr_un.sun_path (108 bytes with the NUL on Linux).
MAX_SOCKET_PATH = 107
REDIS_SOCKET_NAME = "redis.sock"


def _int_setting(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, not {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, not {value}")
    return value


def _secret_from_file(path: Path) -> str:
    """The secret stored at path, creating it (mode 0600) on first use.

    O_EXCL makes concurrent first starts (web and worker at once) agree on one secret.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(descriptor, "w") as file:
        file.write(secrets.token_urlsafe(32))
    return path.read_text().strip()


def _secret(env: Mapping[str, str], name: str, instance_path: Path, file_name: str) -> str:
    value = env.get(name)
    if value:
        return value
    instance_path.mkdir(parents=True, exist_ok=True)
    return _secret_from_file(instance_path / file_name)


@dataclass(frozen=True)
class Config:
    """The service's settings; `Config.from_env()` reads them."""

    instance_path: Path
    database_url: str
    # None: the embedded private Redis on `redis_socket` (started by `rally serve`).
    external_redis_url: str | None
    secret_key: str
    daily_key: str
    # `rally serve` restarts a dead child after this many seconds, doubling up to the longest.
    restart_delay: int
    restart_max_delay: int
    # /healthz reports the queues failing once a job waits longer than this with no worker busy.
    health_max_job_age: int
    # The service's own log lines from this level; RQ's only from WARNING unless DEBUG.
    log_level: str
    max_body_bytes: int
    writes_per_minute: int
    new_seeds_per_hour: int
    solve_timeout: int
    solve_retries: int
    # Seconds before a failed job's first retry; later retries wait 6 and 30 times longer.
    retry_delay: int
    # Seconds between planning runs (today's and the next days' dailies, the pending sweep).
    plan_interval: int
    # Seconds between a worker's heartbeats; a worker silent for 3 heartbeats counts as dead.
    heartbeat: int

    @property
    def redis_socket(self) -> Path:
        return self.instance_path / REDIS_SOCKET_NAME

    @property
    def redis_url(self) -> str:
        if self.external_redis_url:
            return self.external_redis_url
        return f"unix://{self.redis_socket}"

    @property
    def embedded_redis(self) -> bool:
        return not self.external_redis_url

    def __post_init__(self) -> None:
        levels = ("DEBUG", "INFO", "WARNING", "ERROR")
        if self.log_level not in levels:
            raise ValueError(
                f"RALLY_LOG_LEVEL must be one of {', '.join(levels)}, not {self.log_level!r}"
            )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        env = os.environ if env is None else env
        instance_path = Path(env.get("RALLY_INSTANCE_PATH") or "instance").resolve()
        external_redis_url = env.get("REDIS_URL") or None
        socket = instance_path / REDIS_SOCKET_NAME
        if not external_redis_url and len(str(socket)) > MAX_SOCKET_PATH:
            raise ValueError(
                f"the Redis socket path {socket} is too long for a unix socket: "
                "use a shorter RALLY_INSTANCE_PATH or set REDIS_URL"
            )
        return cls(
            instance_path=instance_path,
            database_url=env.get("DATABASE_URL")
            or f"sqlite:///{instance_path / 'rally.sqlite3'}",
            external_redis_url=external_redis_url,
            secret_key=_secret(env, "RALLY_SECRET_KEY", instance_path, "secret_key"),
            daily_key=_secret(env, "RALLY_DAILY_KEY", instance_path, "daily_key"),
            restart_delay=_int_setting(env, "RALLY_RESTART_DELAY", 1, minimum=0),
            restart_max_delay=_int_setting(env, "RALLY_RESTART_MAX_DELAY", 60),
            health_max_job_age=_int_setting(env, "RALLY_HEALTH_MAX_JOB_AGE", 900),
            log_level=(env.get("RALLY_LOG_LEVEL") or "INFO").upper(),
            max_body_bytes=_int_setting(env, "RALLY_MAX_BODY_BYTES", 64 * 1024),
            writes_per_minute=_int_setting(env, "RALLY_WRITES_PER_MINUTE", 120),
            new_seeds_per_hour=_int_setting(env, "RALLY_NEW_SEEDS_PER_HOUR", 60),
            solve_timeout=_int_setting(env, "RALLY_SOLVE_TIMEOUT", 600),
            solve_retries=_int_setting(env, "RALLY_SOLVE_RETRIES", 3),
            retry_delay=_int_setting(env, "RALLY_RETRY_DELAY", 10, minimum=0),
            plan_interval=_int_setting(env, "RALLY_PLAN_INTERVAL", 3600),
            heartbeat=_int_setting(env, "RALLY_HEARTBEAT", 10),
        )
