"""The database schema's history as Alembic migrations, run with `rally migrate`.

The Alembic configuration is built here rather than read from an alembic.ini, so
the migrations work from an installed package and from any working directory.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig

MIGRATIONS_DIR = Path(__file__).parent


def alembic_config(database_url: str) -> AlembicConfig:
    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Passed as an attribute, not an ini option, so '%' in a password needs no escaping.
    config.attributes["database_url"] = database_url
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """Bring the database at database_url to revision (the newest by default)."""
    command.upgrade(alembic_config(database_url), revision)
