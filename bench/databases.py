"""The benches' databases: a SQLite file in a folder, or a fresh database on the machine's
PostgreSQL (127.0.0.1:5432, as root or postgres) dropped afterwards."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy
from sqlalchemy.engine import make_url

POSTGRES_HOST = "127.0.0.1:5432"
POSTGRES_USERS = ("root", "postgres")


def libpq_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def postgres_admin() -> sqlalchemy.Engine:
    """An engine on the local PostgreSQL's own database, as the first user it accepts."""
    for user in POSTGRES_USERS:
        admin = sqlalchemy.create_engine(
            f"postgresql+psycopg://{user}@{POSTGRES_HOST}/postgres", isolation_level="AUTOCOMMIT"
        )
        try:
            with admin.connect():
                return admin
        except sqlalchemy.exc.OperationalError:
            admin.dispose()
    raise SystemExit(f"no PostgreSQL on {POSTGRES_HOST} accepting users {POSTGRES_USERS}")


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database (its SQLAlchemy URL), dropped afterwards."""
    admin = postgres_admin()
    name = f"rally_bench_{secrets.token_hex(6)}"
    with admin.connect() as connection:
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@contextmanager
def database(kind: str, folder: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'bench.sqlite3'}"
    else:
        with fresh_postgres_database() as url:
            yield url
