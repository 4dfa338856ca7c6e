"""The service's processes: `rally serve`, `rally web`, `rally worker` and `rally migrate`.

`rally serve` is the whole service on one machine: it migrates the database,
starts the embedded Redis (unless REDIS_URL is set), then a worker (with RQ's
scheduler) and the web server as child processes, and stops all of them on
Ctrl-C or SIGTERM, or as soon as one of them dies.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import ExitStack, suppress
from pathlib import Path

import click

from service.config import Config
from service.redis_server import EmbeddedRedis, start_process

# A child asked to stop gets this long before a second, forceful request, then SIGKILL.
GRACE_SECONDS = 5.0
FORCE_SECONDS = 10.0

host_option = click.option("--host", default="127.0.0.1", show_default=True, help="Address.")
port_option = click.option("--port", default=8000, show_default=True, type=int, help="Port.")
workers_option = click.option(
    "--workers",
    envvar="RALLY_WEB_WORKERS",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="gunicorn worker processes (env RALLY_WEB_WORKERS).",
)


def gunicorn_command(host: str, port: int, workers: int) -> list[str]:
    """gunicorn serving the app factory; each worker process builds its own app and store."""
    return [
        sys.executable, "-m", "gunicorn",
        "--bind", f"{host}:{port}",
        "--workers", str(workers),
        "--worker-class", "sync",
        "--graceful-timeout", str(int(GRACE_SECONDS)),
        # Its default control socket is one path per user, shared by every gunicorn running.
        "--no-control-socket",
        "service.app:create_app()",
    ]  # fmt: skip


@click.command()
def migrate() -> None:
    """Create or upgrade the database schema at DATABASE_URL."""
    from service.migrations import upgrade  # Alembic loads slowly: only for commands using it

    config = Config.from_env()
    upgrade(config.database_url)
    click.echo("database schema is up to date")


@click.command()
def worker() -> None:
    """Run queued jobs (and RQ's scheduler) from REDIS_URL against DATABASE_URL."""
    from service.jobs import run_worker

    run_worker(Config.from_env())


@click.command()
@host_option
@port_option
@workers_option
def web(host: str, port: int, workers: int) -> None:
    """Serve the web app and API with gunicorn against REDIS_URL and DATABASE_URL."""
    os.environ.setdefault("RALLY_PUBLIC_URL", f"http://{host}:{port}")
    command = gunicorn_command(host, port, workers)
    os.execv(command[0], command)


def process_table() -> list[tuple[int, int, int]]:
    """(pid, parent pid, session id) of every process, from /proc."""
    table = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # The command name may hold spaces and parentheses: fields start after the last ')'.
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        table.append((int(stat.parent.name), int(fields[1]), int(fields[3])))
    return table


def session_members(session: int) -> list[int]:
    """Every process of a session: what a child started, even in a process group of its own
    (gunicorn's workers, RQ's job and scheduler processes)."""
    return [pid for pid, _parent, member_of in process_table() if member_of == session]


class Children:
    """The child processes of `rally serve`, stopped together."""

    def __init__(self) -> None:
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, command: list[str], env: dict[str, str]) -> None:
        self.processes[name] = start_process(command, env)

    def first_exited(self) -> str | None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                return name
        return None

    def _alive(self) -> list[subprocess.Popen[bytes]]:
        return [process for process in self.processes.values() if process.poll() is None]

    def _signal_and_wait(self, seconds: float) -> None:
        for process in self._alive():
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + seconds
        while self._alive() and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (graceful), again (RQ's cold shutdown), then SIGKILL to whatever is left.

        Each child leads its own session, so whatever it started is found and
        stopped with it.
        """
        self._signal_and_wait(GRACE_SECONDS)
        self._signal_and_wait(FORCE_SECONDS)
        for process in self.processes.values():
            for pid in session_members(process.pid):
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            process.wait()


def _wait_for_stop_or_exit(children: Children) -> str:
    """Block until SIGINT/SIGTERM arrives or a child exits; say which."""
    stop = threading.Event()
    reason: list[str] = []

    def on_signal(signum: int, _frame: object) -> None:
        reason.append(signal.Signals(signum).name)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    while not stop.wait(0.2):
        exited = children.first_exited()
        if exited:
            return f"the {exited} process exited"
    return reason[0]


@click.command()
@host_option
@port_option
@workers_option
def serve(host: str, port: int, workers: int) -> None:
    """Run everything on this machine: embedded Redis, a worker with its scheduler, the web."""
    from service.migrations import upgrade

    config = Config.from_env()
    upgrade(config.database_url)
    env = {
        "RALLY_PUBLIC_URL": f"http://{host}:{port}",  # share URLs, unless set otherwise
        **os.environ,
        "RALLY_INSTANCE_PATH": str(config.instance_path),
    }
    rally = [sys.executable, "-m", "service.cli"]
    with ExitStack() as stack:
        if config.embedded_redis:
            redis_server = EmbeddedRedis(config.redis_socket, config.instance_path / "redis")
            try:
                stack.enter_context(redis_server)
            except RuntimeError as error:  # another serve owns this instance, or no binary
                raise click.ClickException(str(error)) from None
            click.echo(f"embedded Redis on {redis_server.socket}")
        children = Children()
        stack.callback(children.stop)
        children.start("worker", [*rally, "worker"], env)
        children.start("web", gunicorn_command(host, port, workers), env)
        click.echo(f"Rally Daily on http://{host}:{port}/ (Ctrl-C stops it)")
        reason = _wait_for_stop_or_exit(children)
        click.echo(f"stopping: {reason}")
    if not reason.startswith("SIG"):
        sys.exit(1)
