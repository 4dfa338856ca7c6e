"""The service's processes: `rally serve`, `rally web`, `rally worker` and `rally migrate`.

`rally serve` is the whole service on one machine, supervised: it migrates the
database, starts the embedded Redis (unless REDIS_URL is set), then a worker
(with RQ's scheduler) and the web server as child processes. A child that dies
is logged and restarted after a delay that doubles with each quick death
(RALLY_RESTART_DELAY up to RALLY_RESTART_MAX_DELAY), Redis before the processes
that need it; after Redis the worker is renewed and the puzzles asked for while
Redis was down are queued. The web's listening socket belongs to `rally serve`, so
connections made while the web restarts wait in its backlog instead of being
refused; a web that stops answering /healthz is restarted too. Only Ctrl-C or
SIGTERM stops everything, and then nothing it started is left running.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

import click
import redis

from service.config import Config
from service.logs import configure_logging
from service.redis_server import EmbeddedRedis, start_process

log = logging.getLogger(__name__)

# A child asked to stop gets this long before a second, forceful request, then SIGKILL.
GRACE_SECONDS = 5.0
FORCE_SECONDS = 10.0
# A child that ran this long died of something new: its restart waits the first delay again.
STABLE_SECONDS = 30.0
TICK_SECONDS = 0.2
# The web answers /healthz within the timeout, or after this many misses in a row it is hung.
HEALTH_INTERVAL_SECONDS = 10.0
HEALTH_TIMEOUT_SECONDS = 5.0
HEALTH_MISSES = 3
# Connections waiting for the web while it (re)starts.
LISTEN_BACKLOG = 2048
# gevent's, answering gunicorn's own refusals in JSON (see service/web_worker.py).
WEB_WORKER_CLASS = "service.web_worker.JsonErrorsGeventWorker"
_PR_SET_CHILD_SUBREAPER = 36

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


def kill_session(session: int, signum: signal.Signals = signal.SIGKILL) -> None:
    """Signal every process left in a session (a dead child's orphans among them)."""
    for pid in session_members(session):
        with suppress(ProcessLookupError):
            os.kill(pid, signum)


def become_subreaper() -> None:
    """Adopt the orphans of our children (a killed gunicorn master's workers, a killed RQ
    worker's job process) instead of init, so that we can stop them and reap them."""
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)


def reap_orphans(ours: set[int]) -> None:
    """Collect the exit status of adopted orphans, leaving our own children's to Popen."""
    while True:
        try:
            # WNOWAIT: look first, so that a child of our own is not reaped behind Popen's back.
            found = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if found is None or found.si_pid in ours:
            return
        os.waitpid(found.si_pid, 0)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}"


@dataclass
class Backoff:
    """Restart delays: first, doubled for each death soon after a start, at most longest."""

    first: float
    longest: float
    quick_deaths: int = 0

    def delay(self, ran_for: float) -> float:
        """The wait before restarting a child that died after running ran_for seconds."""
        if ran_for >= STABLE_SECONDS:
            self.quick_deaths = 0
        delay = min(self.longest, self.first * 2**self.quick_deaths)
        self.quick_deaths += 1
        return delay


class Child:
    """One supervised process: `launch` starts it; when it dies it is restarted with backoff."""

    def __init__(
        self,
        name: str,
        launch: Callable[[], subprocess.Popen[bytes]],
        backoff: Backoff,
        needs: Child | None = None,
        renewed_with_needs: bool = False,
        after_restart: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.launch = launch
        self.backoff = backoff
        self.needs = needs  # restarted only while this one runs
        # Restarted whenever `needs` is: it keeps state that a new `needs` invalidates.
        self.renewed_with_needs = renewed_with_needs
        self.after_restart = after_restart  # run in a thread of its own after each restart
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0.0
        self.restart_at: float | None = None
        self.renewing = False  # asked to stop by renew()
        # (session, when to kill what is left of it) of each dead process of this child.
        self.orphaned_sessions: list[tuple[int, float]] = []

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        self.process = self.launch()
        self.started_at = time.monotonic()
        self.restart_at = None
        self.renewing = False
        log.info("started the %s process (pid %d)", self.name, self.process.pid)

    def notice_death(self) -> None:
        """If the process has died (poll reaps it): plan a restart, and ask its orphans to
        stop (gunicorn's finish the requests they hold; any left after the grace are killed)."""
        if self.process is None or self.restart_at is not None:
            return
        returncode = self.process.poll()
        if returncode is None:
            return
        kill_session(self.process.pid, signal.SIGTERM)
        self.orphaned_sessions.append((self.process.pid, time.monotonic() + GRACE_SECONDS))
        ran_for = time.monotonic() - self.started_at
        # Stopped by renew(): no failure of its own, so no wait and no longer next delay.
        delay = 0.0 if self.renewing else self.backoff.delay(ran_for)
        self.restart_at = time.monotonic() + delay
        log.log(
            logging.INFO if self.renewing else logging.ERROR,
            "the %s process (pid %d) %s after %.1f s; restarting it in %g s",
            self.name, self.process.pid, describe_exit(returncode), ran_for, delay,
        )  # fmt: skip

    def restart_if_due(self) -> bool:
        """Start the process again if its delay is over and what it needs runs; True if so."""
        if self.restart_at is None or time.monotonic() < self.restart_at:
            return False
        if self.needs is not None and not self.needs.running:
            return False
        try:
            self.start()
        except (OSError, RuntimeError) as error:
            delay = self.backoff.delay(0.0)
            self.restart_at = time.monotonic() + delay
            log.error(
                "the %s process did not start (%s); trying again in %g s", self.name, error, delay
            )
            return False
        return True

    def renew(self, reason: str) -> None:
        """Ask the running process to stop (SIGTERM: gracefully); it is restarted as it ends."""
        if self.running:
            assert self.process is not None
            log.warning(
                "restarting the %s process (pid %d): %s", self.name, self.process.pid, reason
            )
            self.process.send_signal(signal.SIGTERM)
            self.renewing = True

    def kill_orphans(self, overdue_only: bool = True) -> None:
        now = time.monotonic()
        for session, deadline in self.orphaned_sessions:
            if not overdue_only or now >= deadline:
                kill_session(session)
        self.orphaned_sessions = [
            (session, deadline)
            for session, deadline in self.orphaned_sessions
            if overdue_only and now < deadline
        ]

    def kill(self) -> None:
        """End the process and everything it started now (it is hung)."""
        if self.process is not None:
            kill_session(self.process.pid)


class WebProbe:
    """Asks the web for /healthz every interval from a thread of its own; counts the misses
    (no answer within the timeout) and logs each change of the answer."""

    def __init__(self, url: str, web: Child) -> None:
        self.url = url
        self.web = web
        self.misses = 0
        self.last_answer: str | None = None
        self._web_started_at = web.started_at
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="healthz probe", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(HEALTH_INTERVAL_SECONDS):
            if self.web.running:
                self.check()

    def check(self) -> None:
        if self.web.started_at != self._web_started_at:  # a new web: its misses count afresh
            self._web_started_at = self.web.started_at
            self.misses = 0
        self._record(self._ask())

    def _ask(self) -> str | None:
        """The /healthz answer as a short text; None if the web did not answer in time."""
        try:
            with urllib.request.urlopen(self.url, timeout=HEALTH_TIMEOUT_SECONDS) as answer:
                return f"healthy ({answer.status})"
        except urllib.error.HTTPError as error:
            return f"unhealthy ({error.code}): {error.read(2000).decode(errors='replace')}"
        except OSError:
            return None

    def _record(self, answer: str | None) -> None:
        self.misses = 0 if answer is not None else self.misses + 1
        if answer is not None and answer != self.last_answer:
            log.log(
                logging.INFO if answer.startswith("healthy") else logging.WARNING,
                "%s: %s",
                self.url,
                answer,
            )
            self.last_answer = answer

    def web_hung(self) -> bool:
        if self.misses < HEALTH_MISSES:
            return False
        log.error(
            "the web did not answer %s %d times in a row; restarting it", self.url, self.misses
        )
        self.misses = 0
        return True


class Supervisor:
    """The children of `rally serve` in start order, each needing only earlier ones."""

    def __init__(self, children: list[Child], probe: WebProbe | None = None) -> None:
        self.children = children
        self.probe = probe

    def start(self) -> None:
        for child in self.children:
            child.start()
        if self.probe:
            self.probe.start()

    def watch(self, stop: threading.Event) -> None:
        """Keep every child running until stop is set."""
        while not stop.wait(TICK_SECONDS):
            if self.probe and self.probe.web_hung():
                self.probe.web.kill()
            for child in self.children:
                child.notice_death()
                child.kill_orphans()
            reap_orphans({child.process.pid for child in self.children if child.process})
            for child in self.children:
                if child.restart_if_due():
                    self._renew_dependents(child)
                    if child.after_restart:
                        threading.Thread(target=child.after_restart, daemon=True).start()

    def _renew_dependents(self, restarted: Child) -> None:
        for child in self.children:
            if child.needs is restarted and child.renewed_with_needs:
                child.renew(f"it needs the restarted {restarted.name}")

    def stop(self) -> None:
        """Stop the children, dependents first: SIGTERM (graceful), again (RQ's cold
        shutdown), then SIGKILL to whatever is left of their sessions."""
        if self.probe:
            self.probe.stop()
        for group in reversed(self._dependency_levels()):
            self._signal_and_wait(group, GRACE_SECONDS)
            self._signal_and_wait(group, FORCE_SECONDS)
            for child in group:
                child.kill_orphans(overdue_only=False)
                if child.process is not None:
                    kill_session(child.process.pid)
                    child.process.wait()
        reap_orphans(set())

    def _dependency_levels(self) -> list[list[Child]]:
        """The children grouped by how many others they need, fewest first."""

        def depth(child: Child) -> int:
            return 0 if child.needs is None else 1 + depth(child.needs)

        levels: dict[int, list[Child]] = {}
        for child in self.children:
            levels.setdefault(depth(child), []).append(child)
        return [levels[level] for level in sorted(levels)]

    @staticmethod
    def _signal_and_wait(group: list[Child], seconds: float) -> None:
        for child in group:
            if child.process is not None and child.running:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + seconds
        while any(child.running for child in group) and time.monotonic() < deadline:
            time.sleep(0.05)


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
    from service.jobs import sweep_pending  # imports the solver: only when needed
    from service.store import Store

    connection = redis.Redis.from_url(config.redis_url)
    try:
        with Store(config.database_url) as store:
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
    from service.migrations import upgrade

    config = Config.from_env()
    configure_logging(config.log_level)
    upgrade(config.database_url)
    env = {
        "RALLY_PUBLIC_URL": f"http://{host}:{port}",  # share URLs, unless set otherwise
        **os.environ,
        "RALLY_INSTANCE_PATH": str(config.instance_path),
    }
    rally = [sys.executable, "-m", "service.cli"]

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
