"""The service's commands: `rally serve`, `rally web`, `rally worker` and `rally migrate`.

`rally serve` is the whole service on one machine, supervised (service.operations.supervisor):
it migrates the database, starts the embedded Redis (unless REDIS_URL is set),
then a worker (with RQ's scheduler) and the web server as child processes. A
child that dies is logged and restarted after a delay that doubles with each
quick death (RALLY_RESTART_DELAY up to RALLY_RESTART_MAX_DELAY), Redis before the
processes that need it; after Redis the worker is renewed and the puzzles asked
for while Redis was down are queued. The web's listening socket belongs to
`rally serve`, so connections made while the web restarts wait in its backlog
instead of being refused; a web that stops answering /healthz is restarted too.
Only Ctrl-C or SIGTERM stops everything, and then nothing it started is left
running.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from contextlib import ExitStack

import click
import redis

from service.config import Config
from service.operations.children import start_process
from service.operations.logs import configure_logging
from service.operations.redis_server import EmbeddedRedis
from service.operations.supervisor import (
    GRACE_SECONDS,
    Backoff,
    Child,
    Supervisor,
    WebProbe,
    become_subreaper,
)

log = logging.getLogger(__name__)

# Connections waiting for the web while it (re)starts.
LISTEN_BACKLOG = 2048
# gevent's, answering gunicorn's own refusals in JSON (see service/web/web_worker.py).
WEB_WORKER_CLASS = "service.web.web_worker.JsonErrorsGeventWorker"
# Seconds gunicorn keeps an idle connection open for the next request (its default is 2).
# A reverse proxy must close its idle connections to the web sooner: deploy/nginx.conf's
# upstream keepalive_timeout is below it (tests/test_deploy.py checks). Short enough still
# for clients that connect directly: a connection waiting for a request holds a greenlet.
WEB_KEEPALIVE_SECONDS = 5

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


def gunicorn_command(
    host: str,
    port: int,
    workers: int,
    worker_class: str = WEB_WORKER_CLASS,
    listening_fd: int | None = None,
) -> list[str]:
    """gunicorn serving the app factory on host:port, or on a socket already listening
    (listening_fd, inherited); each worker process builds its own app and store."""
    bind = f"fd://{listening_fd}" if listening_fd is not None else f"{host}:{port}"
    return [
        sys.executable, "-m", "gunicorn",
        "--bind", bind,
        "--workers", str(workers),
        "--worker-class", worker_class,
        "--graceful-timeout", str(int(GRACE_SECONDS)),
        "--keep-alive", str(WEB_KEEPALIVE_SECONDS),
        # Its default control socket is one path per user, shared by every gunicorn running.
        "--no-control-socket",
        "service.web.app:create_app()",
    ]  # fmt: skip


@click.command()
def migrate() -> None:
    """Create or upgrade the database schema at DATABASE_URL."""
    from service.storage.migrations import (
        upgrade,  # Alembic loads slowly: only for commands using it
    )

    config = Config.from_env()
    upgrade(config.database_url)
    click.echo("database schema is up to date")


@click.command()
def worker() -> None:
    """Run queued jobs (and RQ's scheduler) from REDIS_URL against DATABASE_URL."""
    from service.jobs.jobs import run_worker

    config = Config.from_env()
    configure_logging(config.log_level)
    run_worker(config)


@click.command()
@host_option
@port_option
@workers_option
def web(host: str, port: int, workers: int) -> None:
    """Serve the web app and API with gunicorn against REDIS_URL and DATABASE_URL."""
    os.environ.setdefault("RALLY_PUBLIC_URL", f"http://{host}:{port}")
    config = Config.from_env()
    configure_logging(config.log_level)
    log_database_connections(config, workers)
    command = gunicorn_command(host, port, workers)
    os.execv(command[0], command)


def log_database_connections(config: Config, workers: int) -> None:
    """Say how many database connections this replica may open, for sizing the server's
    max_connections (docs/deploy.md)."""
    log.info(
        "each of the %d web worker processes opens at most %d database connections "
        "(RALLY_DATABASE_POOL_SIZE), %d in all; a request waits at most %d s for one "
        "(RALLY_DATABASE_POOL_TIMEOUT), then answers 503",
        workers,
        config.database_pool_size,
        workers * config.database_pool_size,
        config.database_pool_timeout,
    )


def stop_signal_event() -> threading.Event:
    """Set by the first SIGINT or SIGTERM, which is logged."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.warning("stopping on %s", signal.Signals(signum).name)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    return stop


def listening_socket(host: str, port: int) -> socket.socket:
    """The web's socket, owned by `rally serve` and handed to each gunicorn it starts."""
    family, _type, _proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[
        0
    ]
    listener = socket.create_server(address, family=family, backlog=LISTEN_BACKLOG)
    listener.set_inheritable(True)
    return listener


def probe_url(listener: socket.socket) -> str:
    """/healthz on the listener, by loopback when it listens on every address."""
    host, port = listener.getsockname()[:2]
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1" if listener.family == socket.AF_INET else "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/healthz"


def sweep_pending_puzzles(config: Config) -> None:
    """Queue every pending puzzle: those asked for while Redis was down were recorded but
    could not be queued, and would otherwise wait for the next planning run."""
    from service.jobs.jobs import sweep_pending  # imports the solver: only when needed
    from service.storage.store import Store

    connection = redis.Redis.from_url(config.redis_url)
    try:
        with Store.of(config) as store:
            queued = sweep_pending(store, config, connection)
    except Exception:  # a thread of its own: log, never take the supervisor down
        log.exception("could not queue the pending puzzles after Redis restarted")
        return
    finally:
        connection.close()
    log.info("queued %d pending puzzles after Redis restarted", queued)


def redis_child(redis_server: EmbeddedRedis, backoff: Backoff, config: Config) -> Child:
    def launch() -> subprocess.Popen[bytes]:
        redis_server.start()  # returns once it answers, its append-only file loaded
        assert redis_server.process is not None
        return redis_server.process

    return Child(
        "redis-server", launch, backoff, after_restart=lambda: sweep_pending_puzzles(config)
    )


@click.command()
@host_option
@port_option
@workers_option
def serve(host: str, port: int, workers: int) -> None:
    """Run everything on this machine: embedded Redis, a worker with its scheduler, the web."""
    from service.storage.migrations import upgrade

    config = Config.from_env()
    configure_logging(config.log_level)
    log_database_connections(config, workers)
    upgrade(config.database_url)
    env = {
        "RALLY_PUBLIC_URL": f"http://{host}:{port}",  # share URLs, unless set otherwise
        **os.environ,
        "RALLY_INSTANCE_PATH": str(config.instance_path),
    }
    rally = [sys.executable, "-m", "service.operations.cli"]

    def backoff() -> Backoff:
        return Backoff(config.restart_delay, config.restart_max_delay)

    with ExitStack() as stack:
        try:
            listener = stack.enter_context(listening_socket(host, port))
        except OSError as error:
            raise click.ClickException(f"cannot listen on {host}:{port}: {error}") from None
        embedded = None
        if config.embedded_redis:
            server = EmbeddedRedis(config.redis_socket, config.instance_path / "redis")
            embedded = redis_child(server, backoff(), config)
        # RQ's worker outlives a lost Redis but leaves the job and scheduler processes of the
        # lost connection unreaped: a fresh worker starts clean (its orphans are reaped here).
        worker = Child(
            "worker",
            lambda: start_process([*rally, "worker"], env),
            backoff(),
            embedded,
            renewed_with_needs=True,
        )
        fd = listener.fileno()
        web = Child(
            "web",
            lambda: start_process(
                gunicorn_command(host, port, workers, listening_fd=fd), env, pass_fds=(fd,)
            ),
            backoff(),
            embedded,
        )
        children = [child for child in (embedded, worker, web) if child is not None]
        supervisor = Supervisor(children, WebProbe(probe_url(listener), web))
        stop = stop_signal_event()
        become_subreaper()
        stack.callback(supervisor.stop)
        try:
            supervisor.start()
        except RuntimeError as error:  # another serve owns this instance, or no binary
            raise click.ClickException(str(error)) from None
        click.echo(f"Rally Daily on http://{host}:{port}/ (Ctrl-C stops it)")
        supervisor.watch(stop)
