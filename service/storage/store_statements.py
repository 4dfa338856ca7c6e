"""The statements of the write paths every play takes, built once with bound parameters.

Building a statement from literal values makes SQLAlchemy coerce each value and
derive the statement's cache key from all of them, on every call: for a run's
insert that cost more CPU than replaying the run. Statements built once with
`bindparam` placeholders are compiled once and then only executed.

The statements that every append and every run take (read the attempt, update
it, add its actions; record or rename the player, insert the run), and the read of a
player's official runs, whose rows are many, go further: compiled
once for the database's dialect, they run straight on the driver's cursor,
inside SQLAlchemy's transaction, with SQLAlchemy's own conversion of each
parameter and column value and of the driver's errors. Its execution path
(events, execution context, result wrapping) cost about 0.15 ms of CPU per
statement, half of what an append costs besides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Connection,
    DateTime,
    Dialect,
    Executable,
    and_,
    bindparam,
    exists,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.expression import ColumnClause

from service.storage.models import (
    OFFICIAL_RUNS_ONLY,
    Attempt,
    AttemptBatch,
    Player,
    PlayerCount,
    Puzzle,
    Run,
    ScoreCount,
)

_ATTEMPT = Attempt.__table__.c
RECORDED_ATTEMPT_COLUMNS = ("id", "puzzle_id", "player_id", "played", "state", "over", "run_id")


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


@dataclass(frozen=True)
class Statements:
    add_player: DriverStatement  # player_id, name, now; an existing player is left as is
    rename_player: DriverStatement  # player_id, name
    lock_player: DriverStatement  # player_id; PostgreSQL only, till the transaction ends
    insert_run: DriverStatement  # the run's columns but display_name; returns display_name
    # puzzle_id, player_id: whether the player has a run (`stored`) and an official run
    # (`official`) of the puzzle
    earlier_runs_of: DriverStatement
    count_player: DriverStatement  # puzzle_id: one more player
    count_score: DriverStatement  # puzzle_id, score: one more official run of that score
    attempt_by_id: DriverStatement  # attempt_id
    attempt_of: Executable  # puzzle_id, player_id
    append: DriverStatement  # attempt_id, expected, new_played, new_state, new_over, now
    add_batch: DriverStatement  # attempt_id, position (of its first action), actions
    batches_of: Executable  # attempt_id: every batch's actions, in order
    attempt_run: Executable  # attempt_id, new_run_id
    # player_id: their official runs with their dailies, newest day first (Store.official_runs)
    official_runs_of: DriverStatement


def prepared(dialect_insert: Callable[[Any], Any], dialect: Dialect) -> Statements:
    """The statements for a database of dialect, whose INSERT ... ON CONFLICT is
    dialect_insert's."""
    # Every value is a parameter: the driver's cursor applies no column defaults.
    new_player = dialect_insert(Player).values(
        id=bindparam("player_id"),
        display_name=bindparam("name"),
        created_at=bindparam("now", type_=DateTime(timezone=True)),
    )
    players_runs = and_(
        Run.puzzle_id == bindparam("puzzle_id"), Run.player_id == bindparam("player_id")
    )
    one: ColumnClause[Any] = literal_column(
        "1"
    )  # a constant, not a parameter the callers would have to pass
    one_player = dialect_insert(PlayerCount).values(puzzle_id=bindparam("puzzle_id"), players=one)
    one_run = dialect_insert(ScoreCount).values(
        puzzle_id=bindparam("puzzle_id"), score=bindparam("score"), runs=one
    )
    attempt_columns = [_ATTEMPT[name] for name in RECORDED_ATTEMPT_COLUMNS]
    return Statements(
        add_player=DriverStatement(
            new_player.on_conflict_do_nothing(index_elements=["id"]), dialect
        ),
        rename_player=DriverStatement(
            update(Player)
            .where(Player.id == bindparam("player_id"))
            .values(display_name=bindparam("name")),
            dialect,
        ),
        lock_player=DriverStatement(
            select(Player.id).where(Player.id == bindparam("player_id")).with_for_update(),
            dialect,
        ),
        insert_run=DriverStatement(
            insert(Run)
            .values(
                id=bindparam("id"),
                puzzle_id=bindparam("puzzle_id"),
                player_id=bindparam("player_id"),
                actions=bindparam("actions", type_=JSON),
                score=bindparam("score"),
                tiebreak=bindparam("tiebreak"),
                finished=bindparam("finished", type_=Boolean),
                official=bindparam("official", type_=Boolean),
                created_at=bindparam("created_at", type_=DateTime(timezone=True)),
                # The player's name now: a later change of name leaves this run's.
                display_name=select(Player.display_name)
                .where(Player.id == bindparam("player_id"))
                .scalar_subquery(),
            )
            .returning(Run.display_name),
            dialect,
        ),
        earlier_runs_of=DriverStatement(
            select(
                exists().where(players_runs).label("stored"),
                exists().where(players_runs, OFFICIAL_RUNS_ONLY).label("official"),
            ),
            dialect,
        ),
        count_player=DriverStatement(
            one_player.on_conflict_do_update(
                index_elements=["puzzle_id"], set_={"players": PlayerCount.players + one}
            ),
            dialect,
        ),
        count_score=DriverStatement(
            one_run.on_conflict_do_update(
                index_elements=["puzzle_id", "score"], set_={"runs": ScoreCount.runs + one}
            ),
            dialect,
        ),
        attempt_by_id=DriverStatement(
            select(*attempt_columns).where(Attempt.id == bindparam("attempt_id")), dialect
        ),
        attempt_of=select(*attempt_columns).where(
            Attempt.puzzle_id == bindparam("puzzle_id"),
            Attempt.player_id == bindparam("player_id"),
        ),
        # Applied only where the attempt still has the count the actions were checked
        # against: of two concurrent appends, the database lets exactly one through.
        append=DriverStatement(
            update(Attempt)
            .where(Attempt.id == bindparam("attempt_id"), Attempt.played == bindparam("expected"))
            .values(
                played=bindparam("new_played"),
                state=bindparam("new_state", type_=JSON),
                over=bindparam("new_over", type_=Boolean),
                updated_at=bindparam("now", type_=DateTime(timezone=True)),
            ),
            dialect,
        ),
        add_batch=DriverStatement(
            insert(AttemptBatch).values(
                attempt_id=bindparam("attempt_id"),
                position=bindparam("position"),
                actions=bindparam("actions", type_=JSON),
            ),
            dialect,
        ),
        batches_of=select(AttemptBatch.actions)
        .where(AttemptBatch.attempt_id == bindparam("attempt_id"))
        .order_by(AttemptBatch.position),
        attempt_run=update(Attempt)
        .where(Attempt.id == bindparam("attempt_id"))
        .values(run_id=bindparam("new_run_id")),
        official_runs_of=DriverStatement(
            select(
                Run.id,
                Puzzle.daily_date,
                Puzzle.game,
                Puzzle.number,
                Run.score,
                Run.tiebreak,
                Puzzle.optimum,
                Puzzle.par,
            )
            .join(Puzzle, Puzzle.id == Run.puzzle_id)
            .where(Run.player_id == bindparam("player_id"), Run.official)
            .order_by(Puzzle.daily_date.desc(), Puzzle.game),
            dialect,
        ),
    )
