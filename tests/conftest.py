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
    browsers or processes (tens of seconds), 2 for the other slow ones (solver searches
    and long property runs, up to half a minute each under load), 3 for the rest."""
    marks = {mark.name for mark in item.iter_markers()}
    if {"slow", "processes"} <= marks:
        return 0
    if marks & {"browser", "processes"}:
        return 1
    return 2 if "slow" in marks else 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first: pytest-xdist hands tests out in this order, and a long one
    handed out last would run alone at the end while the other workers sit idle."""
    items.sort(key=_share_of_the_suites_time)
