"""DriverStatement: a statement of the paths every play takes, compiled once and run on the
driver's own cursor.

Building a statement from literal values makes SQLAlchemy coerce each value and
derive the statement's cache key from all of them, on every call: for a run's
insert that cost more CPU than replaying the run. Statements built once with
`bindparam` placeholders are compiled once and then only executed.

The statements that every append and every run take (read the attempt, update
it, add its actions; record or rename the player, insert the run), and the reads
whose rows are many (a player's official runs, a league's members) go further: compiled
once for the database's dialect, they run straight on the driver's cursor,
inside SQLAlchemy's transaction, with SQLAlchemy's own conversion of each
parameter and column value and of the driver's errors. Its execution path
(events, execution context, result wrapping) cost about 0.15 ms of CPU per
statement, half of what an append costs besides. What it uses of SQLAlchemy beyond
its public API is fenced by tests/test_sqlalchemy_contract.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Dialect
from sqlalchemy.exc import DBAPIError


class DriverStatement:
    """A statement compiled once for one dialect, executed on the driver's own cursor."""

    def __init__(self, statement: Any, dialect: Dialect) -> None:
        self.dialect = dialect
        compiled = statement.compile(dialect=dialect)
        self.sql = compiled.string
        self.positions = compiled.positiontup if compiled.positional else None
        self.converters = {
            name: converter
            for name, bind in compiled.binds.items()
            if (converter := bind.type.dialect_impl(dialect).bind_processor(dialect)) is not None
        }
        columns = list(statement.exported_columns)  # a query's columns, or RETURNING's
        self.columns = [column.key for column in columns]
        self.readers = [
            column.type.dialect_impl(dialect).result_processor(dialect, None) for column in columns
        ]

    def _parameters(self, values: Mapping[str, Any]) -> Any:
        converted = {
            name: self.converters[name](value) if name in self.converters else value
            for name, value in values.items()
        }
        if self.positions is None:
            return converted
        return [converted[name] for name in self.positions]

    @contextmanager
    def _cursor(self, connection: Connection, parameters: Any) -> Iterator[Any]:
        """The driver's cursor on connection's transaction; the driver's errors become
        SQLAlchemy's (an IntegrityError is one whatever the database)."""
        driver_connection = connection.connection.dbapi_connection
        assert driver_connection is not None, "a connection in use holds its driver's"
        cursor = driver_connection.cursor()
        driver_error = self.dialect.loaded_dbapi.Error
        try:
            yield cursor
        except driver_error as error:
            raise DBAPIError.instance(self.sql, parameters, error, driver_error) from error
        finally:
            cursor.close()

    def first(self, connection: Connection, values: Mapping[str, Any]) -> dict[str, Any] | None:
        """The first row, by column name, or None."""
        parameters = self._parameters(values)
        with self._cursor(connection, parameters) as cursor:
            cursor.execute(self.sql, parameters)
            row = cursor.fetchone()
        if row is None:
            return None
        return {
            key: reader(value) if reader else value
            for key, reader, value in zip(self.columns, self.readers, row, strict=True)
        }

    def all(self, connection: Connection, values: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Every row, as a tuple in the order of the statement's columns."""
        parameters = self._parameters(values)
        with self._cursor(connection, parameters) as cursor:
            cursor.execute(self.sql, parameters)
            rows = cursor.fetchall()
        # Only the columns that need it are converted (on SQLite, a date): a conversion
        # per value cost as much as the query at a thousand rows.
        converted = [(index, reader) for index, reader in enumerate(self.readers) if reader]
        if not converted:
            return [tuple(row) for row in rows]
        changed = [list(row) for row in rows]
        for row in changed:
            for index, reader in converted:
                row[index] = reader(row[index])
        return [tuple(row) for row in changed]

    def run(self, connection: Connection, values: Mapping[str, Any]) -> int:
        """Execute once; the number of rows it changed."""
        parameters = self._parameters(values)
        with self._cursor(connection, parameters) as cursor:
            cursor.execute(self.sql, parameters)
            count: int = cursor.rowcount
            return count
