"""The `rally` command: one entry point for every role of the project."""

from __future__ import annotations

import click

from puzzles.cli import legal, play, replay
from service.processes import migrate, serve, web, worker
from solver.cli import solve


@click.group()
def main() -> None:
    """Rally Daily: seeded solitaire races with proven optima."""


for command in (legal, replay, play, solve, serve, web, worker, migrate):
    main.add_command(command)

if __name__ == "__main__":
    main()
