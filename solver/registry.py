"""The registry of game kits (solver.kit): the one place that lists the games' kits.

`register(kit)` registers a game once: its kit here, its engine in the engines'
registry (puzzles.registry), unless that engine is the one registered there
already (the built-in games' engines are, so that the engines serve without the
solver). Generic code reads the kits when it runs, so a game registered later (a
test's own small game, with `registered`) is solved, played and served like the
others.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from puzzles.registry import GAMES, named
from solver.crazy_rally.kit import KIT as CRAZY_RALLY
from solver.kit import AnyKit
from solver.rallye_raser.kit import KIT as RALLYE_RASER

KITS: dict[str, AnyKit] = {}


def register(kit: AnyKit) -> None:
    """Register the game of kit: its engine (unless registered already) and its kit;
    ValueError when a kit of that name is registered already."""
    if kit.name in KITS:
        raise ValueError(f"a kit of {kit.name!r} is registered already")
    if GAMES.get(kit.name) is not kit.engine:
        GAMES.register(kit.engine)
    KITS[kit.name] = kit


def unregister(name: str) -> None:
    """Remove the game called name: its kit and its engine."""
    del KITS[name]
    GAMES.unregister(name)


@contextmanager
def registered(kit: AnyKit) -> Iterator[AnyKit]:
    """The game of kit registered for the block (a test's own game), then removed."""
    register(kit)
    try:
        yield kit
    finally:
        unregister(kit.name)


def kit_of(name: str) -> AnyKit:
    """The kit of the game called name; KeyError naming the known games otherwise."""
    return named(KITS, name)


def version() -> tuple[int, int]:
    """Changes with every registration of an engine or a kit: what is derived from the
    set of games is derived again when it does."""
    return GAMES.version, len(KITS)


for _kit in (RALLYE_RASER, CRAZY_RALLY):
    register(_kit)
