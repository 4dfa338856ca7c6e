"""The web worker's heap: the app's lifelong objects kept out of the collector's passes
(service.web.web_worker.settle_heap; the figures in docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from gunicorn.workers.ggevent import GeventWorker

from service.web import web_worker


def test_a_web_worker_settles_its_heap_once_its_app_is_built(monkeypatch: pytest.MonkeyPatch):
    happened: list[str] = []
    monkeypatch.setattr(GeventWorker, "load_wsgi", lambda self: happened.append("app built"))
    monkeypatch.setattr(web_worker, "settle_heap", lambda: happened.append("heap settled"))
    worker = web_worker.JsonErrorsGeventWorker.__new__(web_worker.JsonErrorsGeventWorker)
    worker.load_wsgi()
    assert happened == ["app built", "heap settled"]


def test_a_settled_heap_is_frozen_and_collected_less_often():
    # In a process of its own: a frozen heap stays frozen for the process's life.
    probe = (
        "import gc\n"
        "from service.web.app import create_app\n"
        "from service.web.web_worker import settle_heap\n"
        "before = gc.get_freeze_count()\n"
        "settle_heap()\n"
        "print(before, gc.get_freeze_count(), *gc.get_threshold())\n"
    )
    printed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    before, frozen, *thresholds = map(int, printed)
    assert before == 0 and frozen > 10_000, "the app's modules are frozen"
    assert tuple(thresholds) == web_worker.COLLECTOR_THRESHOLDS
