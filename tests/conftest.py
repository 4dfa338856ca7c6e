"""The suite's fixtures, loaded as plugins, and the markers that split it.

`make test` runs every test. `make check`, the everyday loop, leaves out those
marked `browser`, `processes` or `slow` (see pyproject.toml): a test is in the
everyday loop unless it is marked out of it.
"""

pytest_plugins = [
    "tests.fixtures.servers",
    "tests.fixtures.service",
    "tests.fixtures.api",
    "tests.fixtures.queues",
]
