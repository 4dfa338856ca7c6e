"""gunicorn hooks (`-c python:bench.step_cpu`) that time the steps of the write path in
each web worker, for bench.submission_steps.

A gevent worker runs many requests in one thread, switching between them while
one waits for Redis or a lock, so the thread's CPU time over a step would charge
it with the requests that ran meanwhile. A greenlet switch hook keeps each
greenlet's own CPU time instead, and a step is charged with its greenlet's CPU
only. Each worker writes its totals to RALLY_INSTANCE_PATH/step-cpu-<pid>.json
when it exits.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import greenlet

# (module, attribute path, step): the steps of a run submission, where they exist.
STEPS = [
    ("service.web.ratelimit", "RateLimiter.check", "rate limits (Redis)"),
    ("service.storage.runs", "RunRepository.add", "storing the run"),
    ("service.web.api.runs", "replay", "replaying the run"),
    ("service.web.openapi", "read_json_body", "reading and checking the JSON body"),
    ("service.web.api.runs", "run_json", "the answer: run_json"),
    ("service.web.api.runs", "jsonify", "the answer: jsonify"),
]
_spent: defaultdict[str, float] = defaultdict(float)
_calls: Counter[str] = Counter()
_greenlet_cpu: dict[Any, float] = {}
_last_switch = [time.thread_time()]


def _on_switch(event: str, args: tuple[Any, Any]) -> None:
    if event in ("switch", "throw"):
        now = time.thread_time()
        origin = args[0]
        _greenlet_cpu[origin] = _greenlet_cpu.get(origin, 0.0) + now - _last_switch[0]
        _last_switch[0] = now


def _own_cpu() -> float:
    """The CPU seconds the current greenlet has run for."""
    return _greenlet_cpu.get(greenlet.getcurrent(), 0.0) + time.thread_time() - _last_switch[0]


def _timed(function: Callable[..., Any], step: str) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = _own_cpu()
        try:
            return function(*args, **kwargs)
        finally:
            _spent[step] += _own_cpu() - started
            _calls[step] += 1

    return timed


def _wrap(module_name: str, path: str, step: str) -> None:
    owner: Any = importlib.import_module(module_name)
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    if hasattr(owner, name):
        setattr(owner, name, _timed(getattr(owner, name), step))


def post_worker_init(worker: Any) -> None:
    for module_name, path, step in STEPS:
        _wrap(module_name, path, step)
    app = worker.wsgi
    for hooks, kind in ((app.before_request_funcs, "before"), (app.after_request_funcs, "after")):
        for functions in hooks.values():
            functions[:] = [_timed(f, f"Flask {kind}_request: {f.__name__}") for f in functions]
    worker.wsgi = _timed(app, "the Flask app, whole")
    worker.step_cpu_started = time.thread_time()
    greenlet.settrace(_on_switch)


def worker_exit(_server: Any, worker: Any) -> None:
    report = {
        "worker CPU": time.thread_time() - worker.step_cpu_started,
        "requests": _calls["the Flask app, whole"],
        "steps": dict(_spent),
    }
    instance = Path(os.environ["RALLY_INSTANCE_PATH"])
    (instance / f"step-cpu-{os.getpid()}.json").write_text(json.dumps(report))
