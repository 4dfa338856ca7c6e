"""The suite's fixtures, loaded as plugins, and the markers that split it.

`make test` runs every test. `make check`, the everyday loop, leaves out those
marked `browser`, `processes` or `slow` (see pyproject.toml): a test is in the
everyday loop unless it is marked out of it.
"""

import pytest

pytest_plugins = [
    "tests.fixtures.servers",
    "tests.fixtures.service",
    "tests.fixtures.api",
    "tests.fixtures.queues",
    "tests.fixtures.browser",
]


def _share_of_the_suites_time(item: pytest.Item) -> int:
    """0 for the longest tests (whole systems of processes, minutes each), 1 for those of
    browsers or processes (tens of seconds), 2 for the rest."""
    marks = {mark.name for mark in item.iter_markers()}
    if {"slow", "processes"} <= marks:
        return 0
    return 1 if marks & {"browser", "processes"} else 2


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first: pytest-xdist hands tests out in this order, and a long one
    handed out last would run alone at the end while the other workers sit idle."""
    items.sort(key=_share_of_the_suites_time)
