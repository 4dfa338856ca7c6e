"""Supervision of `rally serve`'s children: each is restarted when it dies, with a delay
that doubles with each quick death; Redis comes before what needs it, and what needs
a restarted child may be renewed with it; the web is asked for /healthz and
restarted when it stops answering. Orphans of a dead child (its gunicorn workers,
its job process) are adopted, given a grace to finish, then stopped and reaped.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

from service.operations.children import kill_session

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
_PR_SET_CHILD_SUBREAPER = 36


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
        delay = min(self.longest, self.first * (1 << self.quick_deaths))
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
