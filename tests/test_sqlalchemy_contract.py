"""What service.storage.store_statements.DriverStatement uses of SQLAlchemy beyond its
documented API, each use checked here against the SQLAlchemy installed, so that an upgrade
that changes one fails this file rather than an append in production. Checked against
SQLAlchemy 2.1.9 (`sqlalchemy.__version__` is printed with each failure).

- `SQLCompiler.positional`, `.positiontup` and `.binds`: whether the compiled statement
  takes its parameters in order, the order of their names, and each name's bind parameter
  (whose type converts the value for the driver).
- A dialect made anew with `paramstyle="numeric_dollar"` (SentTogether's text to prepare):
  `$1..$n`, a name taken twice given one number, listed once in `.positiontup`; and its
  `type_compiler_instance`, which names each parameter's type in the PREPARE.
- `DBAPIError.instance`: how SQLAlchemy wraps a driver's error into its own class (an
  IntegrityError stays one whatever the database).
- The type processors (`dialect_impl`, `bind_processor`, `result_processor`), public but
  called here without SQLAlchemy's execution context: the values a DriverStatement reads
  back are checked against what Core's own execution reads.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy
from sqlalchemy import JSON, BindParameter, Boolean, DateTime, bindparam, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.types import TypeEngine

from service.storage.models import Player, Run
from service.storage.puzzles import PuzzleRecord
from service.storage.store import Store
from service.storage.store_statements import DriverStatement

CHECKED_AGAINST = "2.1.9"
VERSIONS = (sqlalchemy.__version__, CHECKED_AGAINST)

A_STATEMENT = select(Player.id).where(
    Player.id == bindparam("player_id"), Player.display_name == bindparam("name")
)


def test_a_positional_compilation_lists_its_parameters_in_order():
    compiled: Any = A_STATEMENT.compile(dialect=sqlite.dialect())
    assert compiled.positional, VERSIONS
    assert list(compiled.positiontup) == ["player_id", "name"], VERSIONS
    assert compiled.string.count("?") == 2, VERSIONS


def test_a_named_compilation_keeps_its_parameters_by_name():
    compiled: Any = A_STATEMENT.compile(dialect=postgresql.psycopg.dialect())
    assert not compiled.positional, VERSIONS
    assert "%(player_id)s" in compiled.string and "%(name)s" in compiled.string, VERSIONS


def test_a_numbered_compilation_numbers_each_name_once():
    statement = A_STATEMENT.where(Player.id != bindparam("player_id"))
    dialect = postgresql.psycopg.dialect(paramstyle="numeric_dollar")
    compiled: Any = statement.compile(dialect=dialect)
    assert list(compiled.positiontup) == ["player_id", "name"], VERSIONS
    assert compiled.string.count("$1") == 2 and compiled.string.count("$2") == 1, VERSIONS
    named = dialect.type_compiler_instance.process(DateTime(timezone=True))
    assert named == "TIMESTAMP WITH TIME ZONE", VERSIONS


def test_the_compiled_binds_carry_the_types_that_convert_values():
    statement = select(Player.id).where(Player.created_at == bindparam("now", type_=DateTime()))
    compiled: Any = statement.compile(dialect=sqlite.dialect())
    assert set(compiled.binds) == {"now"}, VERSIONS
    assert isinstance(compiled.binds["now"].type, DateTime), VERSIONS


def test_a_driver_error_is_wrapped_into_sqlalchemy_s_class():
    error = sqlite3.IntegrityError("UNIQUE constraint failed")
    wrapped = DBAPIError.instance("INSERT", (), error, sqlite3.Error)
    assert isinstance(wrapped, IntegrityError), VERSIONS
    assert wrapped.orig is error, VERSIONS


def test_a_duplicate_row_through_the_driver_s_cursor_is_an_integrity_error(store: Store):
    add = DriverStatement(
        insert(Player).values(
            id=bindparam("player_id"), created_at=bindparam("now", type_=DateTime(timezone=True))
        ),
        store.database.dialect,
    )
    player = {"player_id": "p1", "now": datetime.now(UTC)}
    with store.database.write() as connection:
        assert add.run(connection, player) == 1
    with pytest.raises(IntegrityError), store.database.write() as connection:
        add.run(connection, player)


def test_values_read_through_the_driver_s_cursor_are_core_s(store: Store):
    puzzle: PuzzleRecord = store.puzzles.ensure("rallye-raser", "contract", "v1")
    written = {
        "id": "r1",
        "puzzle_id": puzzle.id,
        "player_id": "p1",
        "actions": [{"kind": "move", "to": [1, 2]}],
        "score": 7,
        "tiebreak": 2,
        "finished": True,
        "official": False,
        "created_at": datetime(2026, 5, 1, 12, 30, tzinfo=UTC),
    }
    typed: dict[str, TypeEngine[Any]] = {
        "actions": JSON(),
        "finished": Boolean(),
        "official": Boolean(),
        "created_at": DateTime(timezone=True),
    }
    values: dict[str, BindParameter[Any]] = {
        name: bindparam(name, type_=typed.get(name)) for name in written
    }
    add_run = DriverStatement(insert(Run).values(**values), store.database.dialect)
    columns = [Run.__table__.c[name] for name in written]
    read_run = select(*columns).where(Run.id == bindparam("id"))
    store.players.upsert("p1")
    with store.database.write() as connection:
        add_run.run(connection, written)
    with store.database.read() as connection:
        through_driver = DriverStatement(read_run, store.database.dialect).first(
            connection, {"id": "r1"}
        )
        through_core = connection.execute(read_run, {"id": "r1"}).mappings().one()
    assert through_driver == dict(through_core), VERSIONS
    assert through_driver is not None and through_driver["actions"] == written["actions"]
