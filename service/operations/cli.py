"""The `rally` command: one entry point for every role of the project."""

from __future__ import annotations

from typing import Any

import click

from puzzles.cli import legal, play, replay
from service.config import Config, ConfigError, secure_instance_folder
from service.operations.processes import migrate, serve, web, worker
from solver.cli import solve
from solver.expert_cli import analyse, par

# The commands that run the service: they check its settings and own its instance folder.
SERVICE_COMMANDS = {"serve", "web", "worker", "migrate"}


class RallyGroup(click.Group):
    """Refuses bad settings with their message instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as error:
            raise click.ClickException(str(error)) from None


@click.group(cls=RallyGroup)
@click.pass_context
def main(ctx: click.Context) -> None:
    """Rally Daily: seeded solitaire races with proven optima."""
    if ctx.invoked_subcommand in SERVICE_COMMANDS and not ctx.resilient_parsing:
        # Settings are checked before anything starts; the data stays private to its owner.
        secure_instance_folder(Config.from_env().instance_path)


for command in (legal, replay, play, solve, par, analyse, serve, web, worker, migrate):
    main.add_command(command)

if __name__ == "__main__":
    main()
