"""Alembic's entry point: run the migrations online against the configured database."""

from __future__ import annotations

from alembic import context

from service.storage.database import make_engine
from service.storage.models import Base


def run_migrations() -> None:
    engine = make_engine(context.config.attributes["database_url"], writing=True)
    try:
        with engine.connect() as connection:
            context.configure(
                connection=connection,
                target_metadata=Base.metadata,
                render_as_batch=connection.dialect.name == "sqlite",
            )
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


run_migrations()
