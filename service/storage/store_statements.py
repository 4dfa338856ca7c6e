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

On PostgreSQL, where each statement is a round trip, SentTogether sends statements that
must follow one another in one message: a returning player's lock and their run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import psycopg
from psycopg import errors
from psycopg.pq import TransactionStatus
from sqlalchemy import Connection, Dialect
from sqlalchemy.engine.default import DefaultDialect
from sqlalchemy.exc import DBAPIError


def _converted(converters: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """values, each converted by its name's converter if it has one (SQLAlchemy's)."""
    return {
        name: converters[name](value) if name in converters else value
        for name, value in values.items()
    }


@contextmanager
def _driver_cursor(
    connection: Connection, dialect: Dialect, sql: str, parameters: Any
) -> Iterator[Any]:
    """The driver's cursor on connection's transaction; the driver's errors (sql's, with
    parameters) become SQLAlchemy's (an IntegrityError is one whatever the database)."""
    driver_connection = connection.connection.dbapi_connection
    assert driver_connection is not None, "a connection in use holds its driver's"
    cursor = driver_connection.cursor()
    driver_error = dialect.loaded_dbapi.Error
    try:
        yield cursor
    except driver_error as error:
        raise DBAPIError.instance(sql, parameters, error, driver_error) from error
    finally:
        cursor.close()


class DriverStatement:
    """A statement compiled once for one dialect, executed on the driver's own cursor."""

    def __init__(self, statement: Any, dialect: Dialect) -> None:
        self.statement = statement  # SentTogether compiles it once more, to prepare it
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
        converted = _converted(self.converters, values)
        if self.positions is None:
            return converted
        return [converted[name] for name in self.positions]

    def _cursor(self, connection: Connection, parameters: Any) -> AbstractContextManager[Any]:
        return _driver_cursor(connection, self.dialect, self.sql, parameters)

    def first(self, connection: Connection, values: Mapping[str, Any]) -> dict[str, Any] | None:
        """The first row, by column name, or None."""
        parameters = self._parameters(values)
        with self._cursor(connection, parameters) as cursor:
            cursor.execute(self.sql, parameters)
            return self.read(cursor.fetchone())

    def read(self, row: Any) -> dict[str, Any] | None:
        """A row of the driver's, by column name, or None."""
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


class _Prepared:
    """A DriverStatement as the server prepares it: `PREPARE name (types) AS` its text with
    $1..$n, and the `EXECUTE` that runs it with the values written into the text."""

    def __init__(self, statement: DriverStatement) -> None:
        dialect_class = type(statement.dialect)
        assert issubclass(dialect_class, DefaultDialect), "a dialect SQLAlchemy ships"
        numbered = dialect_class(paramstyle="numeric_dollar")
        compiled = statement.statement.compile(dialect=numbered)
        names = list(compiled.positiontup or [])
        # Declared, not inferred: a value with no cast in the text (a boolean) would be
        # taken for text where it is inserted.
        types = ", ".join(
            numbered.type_compiler_instance.process(compiled.binds[name].type) for name in names
        )
        definition = f"({types}) AS {compiled.string}"
        # Named by its text: never one of psycopg's own (`_pg3_*`), and the same text is
        # the same statement whichever store prepared it on the connection.
        self.name = f"rally_{hashlib.sha256(definition.encode()).hexdigest()[:16]}"
        self.prepare = f"PREPARE {self.name} {definition}"
        values = ", ".join(f"%({name})s" for name in names)
        self.execute = f"EXECUTE {self.name}({values})"


# Where a connection keeps the names it has prepared (Connection.info lasts as long as the
# driver's connection, and a new one starts empty).
_PREPARED_KEY = "store_statements.prepared"
# What the server answers a message whose PREPARE or EXECUTE finds other statements than
# the connection's record says (a DEALLOCATE or DISCARD ALL sent by other code).
_PREPARED_ELSEWISE = (errors.InvalidSqlStatementName, errors.DuplicatePreparedStatement)


class SentTogether:
    """DriverStatements sent to PostgreSQL in one message, the simple query protocol's: one
    round trip for them all. The server runs them in order, and each sees what was committed
    when it began (READ COMMITTED), so a row one locks is locked before the next looks. Sent
    outside a transaction (Database.write_alone) they are one transaction of their own,
    committed after the last and rolled back whole when one fails. That protocol takes no
    parameters: psycopg writes the values into the text (ClientCursor.mogrify, quoted for
    the connection).

    The message is `EXECUTE name(values)` of each: statements the server prepared once per
    connection, so that it does not parse and plan their long text on every run. Their
    `PREPARE`s go first on a connection, in a message of their own (one round trip more in
    the connection's life)."""

    def __init__(self, *statements: DriverStatement) -> None:
        assert all(statement.positions is None for statement in statements), "named values"
        self.sql = ";\n".join(statement.sql for statement in statements)
        self.prepared = [_Prepared(statement) for statement in statements]
        self.execute = ";\n".join(prepared.execute for prepared in self.prepared)
        # A name's value is the same value in every statement that takes it.
        self.converters = {
            name: converter
            for statement in statements
            for name, converter in statement.converters.items()
        }
        self.last = statements[-1]

    def first(self, connection: Connection, values: Mapping[str, Any]) -> dict[str, Any] | None:
        """The last statement's first row, by column name, or None."""
        driver_connection = connection.connection.dbapi_connection
        assert isinstance(driver_connection, psycopg.Connection), "PostgreSQL's, by psycopg"
        parameters = _converted(self.converters, values)
        prepared: set[str] = connection.info.setdefault(_PREPARED_KEY, set())
        # Inside: a value the driver refuses (a NUL in a text) is SQLAlchemy's error too.
        with (
            _driver_cursor(connection, self.last.dialect, self.sql, parameters) as cursor,
            psycopg.ClientCursor(driver_connection) as writer,
        ):
            executes = writer.mogrify(self.execute, parameters)
            try:
                return self._send(cursor, prepared, executes)
            except _PREPARED_ELSEWISE:
                # Outside a transaction nothing was done: ask the server what it holds,
                # and send again. (Inside one, the transaction is lost: the caller's error.)
                if driver_connection.info.transaction_status != TransactionStatus.IDLE:
                    raise
                cursor.execute("SELECT name FROM pg_prepared_statements", prepare=False)
                prepared.clear()
                prepared.update(name for (name,) in cursor.fetchall())
                return self._send(cursor, prepared, executes)

    def _send(self, cursor: Any, prepared: set[str], executes: str) -> dict[str, Any] | None:
        missing = [each for each in self.prepared if each.name not in prepared]
        if missing:
            # A message of their own, once per connection: the server keeps a prepared
            # statement's text with it, and that text carries no player's values.
            cursor.execute(";\n".join(each.prepare for each in missing), prepare=False)
            prepared.update(each.name for each in missing)
        # Its values make each text new: not one for psycopg to prepare, nor to count.
        cursor.execute(executes, prepare=False)
        for _ in range(len(self.prepared) - 1):
            cursor.nextset()
        return self.last.read(cursor.fetchone())
