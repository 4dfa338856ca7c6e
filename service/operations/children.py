"""The service's child processes: starting them, and reading what Linux says of every
process in /proc (its state, parent, session and CPU time).

Each child runs in a session of its own, so the terminal's Ctrl-C reaches only the
parent, which stops its children in order; the session id then finds what a child
started even in a process group of its own (gunicorn's workers, RQ's job process).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

_PR_SET_PDEATHSIG = 1
PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessInfo:
    """One process as /proc/<pid>/stat describes it."""

    pid: int
    state: str  # "R" running, "S" sleeping, "Z" ended but not yet reaped, ...
    parent: int
    session: int
    cpu_ticks: int  # user and system time, in clock ticks (os.sysconf("SC_CLK_TCK"))

    @property
    def running(self) -> bool:
        """True while it runs: a zombie awaiting its parent has ended."""
        return self.state != "Z"


def _parse_stat(pid: int, text: str) -> ProcessInfo:
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = text.rsplit(")", 1)[1].split()
    return ProcessInfo(
        pid=pid,
        state=fields[0],
        parent=int(fields[1]),
        session=int(fields[3]),
        cpu_ticks=int(fields[11]) + int(fields[12]),
    )


def process_info(pid: int) -> ProcessInfo | None:
    """The process pid, or None once it is gone."""
    try:
        return _parse_stat(pid, (PROC / str(pid) / "stat").read_text())
    except (OSError, IndexError):
        return None


def process_table() -> list[ProcessInfo]:
    """Every process on the machine."""
    found = (process_info(int(entry.name)) for entry in PROC.iterdir() if entry.name.isdigit())
    return [info for info in found if info is not None]


def command_line(pid: int) -> bytes | None:
    """The process's arguments, NUL-separated; None once it is gone."""
    try:
        return (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None


def is_running(pid: int) -> bool:
    """True while pid runs (a zombie awaiting its parent counts as ended)."""
    info = process_info(pid)
    return info is not None and info.running


def session_members(session: int) -> list[int]:
    """Every process of a session: what a child started, even in a process group of its own
    (gunicorn's workers, RQ's job and scheduler processes)."""
    return [info.pid for info in process_table() if info.session == session]


def kill_session(session: int, signum: signal.Signals = signal.SIGKILL) -> None:
    """Signal every process left in a session (a dead child's orphans among them)."""
    for pid in session_members(session):
        with suppress(ProcessLookupError):
            os.kill(pid, signum)


def _die_with_parent() -> None:
    """In a child before exec: get SIGTERM if its parent is killed (Linux's prctl)."""
    # Without prctl (not Linux) the child outlives a killed parent, as it would anywhere.
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def start_process(
    command: list[str], env: dict[str, str] | None = None, pass_fds: tuple[int, ...] = ()
) -> subprocess.Popen[bytes]:
    """A child of the service in its own session that is stopped if the parent dies."""
    return subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_die_with_parent,
        pass_fds=pass_fds,
    )
