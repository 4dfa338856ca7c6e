"""Running one call in a child process bounded in wall-clock time and memory.

The child is forked, so what the parent imported (OR-Tools in a worker) is there
at no cost. Its address space is capped with RLIMIT_AS at what it inherited plus
the memory the call may take, so a call that needs more fails alone (a
MemoryError, or the child's death if native code aborts) instead of the machine
swapping or the kernel killing something else; past its time the child is
killed. Either way the parent gets a BoundedCallError naming what happened, and
is never left waiting.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar, cast

T = TypeVar("T")
MIB = 1024 * 1024


class BoundedCallError(RuntimeError):
    """The call ran out of time or memory, failed, or its process died."""


def run_bounded(
    function: Callable[..., T], args: tuple[Any, ...], *, seconds: float, memory_mib: int
) -> T:
    """function(*args) in a child that may map memory_mib more than it inherits, within seconds."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_call_in_child, args=(sender, memory_mib, function, args))
    child.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            raise BoundedCallError(f"no answer within the time bound of {seconds:g} s")
        try:
            kind, value = receiver.recv()
        except EOFError:
            child.join()
            raise BoundedCallError(_death(child.exitcode)) from None
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        child.join()
    if kind == "memory":
        raise BoundedCallError(f"over the memory bound of {memory_mib} MiB")
    if kind == "error":
        raise BoundedCallError(value)
    # What the child sent is function's result: what comes through a pipe has no type.
    return cast(T, value)


def _call_in_child(
    sender: Connection, memory_mib: int, function: Callable[..., Any], args: tuple[Any, ...]
) -> None:
    limit = _address_space() + memory_mib * MIB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        outcome = ("value", function(*args))
    except MemoryError:
        outcome = ("memory", None)
    except Exception as error:  # reported to the parent, which decides what it means
        outcome = ("error", f"{type(error).__name__}: {error}")
    sender.send(outcome)
    sender.close()


def _address_space() -> int:
    """This process's mapped address space in bytes (Linux's /proc)."""
    pages = int(Path("/proc/self/statm").read_text().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return f"the solving process died of {signal.Signals(-exitcode).name}"
    return f"the solving process ended without an answer (exit code {exitcode})"
