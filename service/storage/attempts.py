"""Attempts in the database: a daily played on the server, one action batch at a time.

An attempt starts in one transaction that also counts the attempts its client (the
caller's address bucket, kept as a keyed hash) has started on that puzzle, and refuses
past the limit: the count is exact under concurrent starts (SQLite's write transactions
queue whole; on PostgreSQL a transaction-scoped advisory lock on the puzzle and client
queues that client's starts) and needs nothing but the database.

An append reads the attempt, has the caller check the new actions against it,
and writes them in one transaction, as one new row of the attempt's batches.
The write is a conditional UPDATE: it sets the new count and state only where
the attempt still has the number of actions they were checked against, so of
two concurrent appends the database itself lets exactly one through, on SQLite
and PostgreSQL alike. On PostgreSQL the UPDATE and the batch's INSERT are one
statement, which is its own transaction: an append that only adds actions costs
one round trip, not four (BEGIN, UPDATE, INSERT, COMMIT). The append that ends the
game stores the player's run in the same transaction, so an attempt is never over
without its run.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Connection,
    DateTime,
    Executable,
    Integer,
    bindparam,
    func,
    select,
    update,
)
from sqlalchemy import insert as plain_insert

from service.storage.database import Database
from service.storage.models import Attempt, AttemptBatch, utc_now
from service.storage.players import PlayerRepository
from service.storage.runs import RunRepository
from service.storage.store_statements import DriverStatement


@dataclass(frozen=True)
class AttemptRecord:
    id: str
    puzzle_id: int
    player_id: str
    played: int
    state: dict[str, Any]
    over: bool
    run_id: str | None


@dataclass(frozen=True)
class RunResult:
    """How the engine scored an attempt that is over."""

    score: int | None
    tiebreak: int
    finished: bool


@dataclass(frozen=True)
class Extension:
    """What to append to an attempt: the new actions and the state after them; when they
    end the game, its result and whether the run is official."""

    actions: list[Any]
    state: dict[str, Any]
    result: RunResult | None = None
    official: bool = False


class AttemptMoved(Exception):  # noqa: N818 - it is an outcome, not a failure
    """Another request appended to the attempt between its reading and this append."""


class TooManyAttempts(Exception):  # noqa: N818 - it is an outcome, not a failure
    """The client has started as many attempts of the puzzle as it may: none was started."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"at most {limit} attempts of a puzzle per client")
        self.limit = limit


@dataclass(frozen=True)
class ClientLimit:
    """Who starts an attempt, as the per-address limit counts clients (a keyed hash of
    their address bucket), and how many attempts of one puzzle such a client may start."""

    client: str
    attempts: int

    def lock_key(self, puzzle_id: int) -> tuple[int, int]:
        """The two 32-bit keys of the PostgreSQL advisory lock that queues this client's
        starts of the puzzle (a collision only queues two clients together)."""
        return puzzle_id % 2**31, int(self.client[:8], 16) - 2**31


# Attempts kept per process (AttemptRepository._recent): far more than the players one
# process serves at once, at a few kilobytes each.
KEPT_ATTEMPTS = 2_000
_RECORDED_COLUMNS = ("id", "puzzle_id", "player_id", "played", "state", "over", "run_id")


def _attempt_record(row: Mapping[Any, Any]) -> AttemptRecord:
    return AttemptRecord(**{name: row[name] for name in _RECORDED_COLUMNS})


@dataclass(frozen=True)
class AttemptStatements:
    """The statements of an append, built once; those every append takes run on the
    driver's cursor (service.storage.store_statements)."""

    by_id: DriverStatement  # attempt_id
    of_player: Executable  # puzzle_id, player_id
    append: DriverStatement  # attempt_id, expected, new_played, new_state, new_over, now
    add_batch: DriverStatement  # attempt_id, position (of its first action), actions
    # PostgreSQL only: append and add_batch in one statement (the batch only if the
    # attempt moved), one round trip instead of two
    append_with_batch: DriverStatement | None
    batches_of: Executable  # attempt_id: every batch's actions, in order
    set_run: Executable  # attempt_id, new_run_id


def _attempt_statements(database: Database) -> AttemptStatements:
    columns = [Attempt.__table__.c[name] for name in _RECORDED_COLUMNS]
    dialect = database.dialect
    # Applied only where the attempt still has the count the actions were checked
    # against: of two concurrent appends, the database lets exactly one through.
    append = (
        update(Attempt)
        .where(Attempt.id == bindparam("attempt_id"), Attempt.played == bindparam("expected"))
        .values(
            played=bindparam("new_played"),
            state=bindparam("new_state", type_=JSON),
            over=bindparam("new_over", type_=Boolean),
            updated_at=bindparam("now", type_=DateTime(timezone=True)),
        )
    )
    position = bindparam("position", type_=Integer)
    actions = bindparam("actions", type_=JSON)
    # SQLite has no UPDATE inside WITH.
    moved = append.returning(Attempt.id).cte("moved") if database.locks_rows else None
    return AttemptStatements(
        by_id=DriverStatement(
            select(*columns).where(Attempt.id == bindparam("attempt_id")), dialect
        ),
        of_player=select(*columns).where(
            Attempt.puzzle_id == bindparam("puzzle_id"),
            Attempt.player_id == bindparam("player_id"),
        ),
        append=DriverStatement(append, dialect),
        add_batch=DriverStatement(
            plain_insert(AttemptBatch).values(
                attempt_id=bindparam("attempt_id"), position=position, actions=actions
            ),
            dialect,
        ),
        append_with_batch=None
        if moved is None
        else DriverStatement(
            plain_insert(AttemptBatch).from_select(
                ["attempt_id", "position", "actions"], select(moved.c.id, position, actions)
            ),
            dialect,
        ),
        batches_of=select(AttemptBatch.actions)
        .where(AttemptBatch.attempt_id == bindparam("attempt_id"))
        .order_by(AttemptBatch.position),
        set_run=update(Attempt)
        .where(Attempt.id == bindparam("attempt_id"))
        .values(run_id=bindparam("new_run_id")),
    )


class AttemptRepository:
    """The attempts of one database; an attempt that ends stores its run (runs) and its
    player (players) in the append's transaction."""

    def __init__(self, database: Database, players: PlayerRepository, runs: RunRepository) -> None:
        self._database = database
        self._players = players
        self._runs = runs
        self.sql = _attempt_statements(database)
        # The attempts this process last read or extended, the most recent last. Stored
        # actions never change, so a kept attempt holding the count a client expects is the
        # attempt as stored unless another process appended since, which the append's own
        # guard on that count tells (extend then reads it, as it would have): a player's
        # next append usually comes to the process that served the last, on the same
        # connection, and need not read the attempt first.
        self._recent: OrderedDict[str, AttemptRecord] = OrderedDict()

    def _actions(self, connection: Connection, attempt_id: str) -> list[Any]:
        batches = connection.execute(self.sql.batches_of, {"attempt_id": attempt_id}).scalars()
        return [action for batch in batches for action in batch]

    def actions(self, attempt_id: str, first: int = 0, stop: int | None = None) -> list[Any]:
        """The attempt's actions at positions first to stop - 1 (to the last by default)."""
        with self._database.read() as connection:
            return self._actions(connection, attempt_id)[first:stop]

    def get(self, attempt_id: str) -> AttemptRecord | None:
        with self._database.read() as connection:
            found = self.sql.by_id.first(connection, {"attempt_id": attempt_id})
            return _attempt_record(found) if found else None

    def find(self, puzzle_id: int, player_id: str) -> AttemptRecord | None:
        """The player's attempt of the puzzle, if they started one."""
        ours = {"puzzle_id": puzzle_id, "player_id": player_id}
        with self._database.read() as connection:
            row = connection.execute(self.sql.of_player, ours).mappings().first()
            return _attempt_record(row) if row else None

    def start(
        self,
        puzzle_id: int,
        player_id: str,
        start: dict[str, Any],
        limit: ClientLimit,
        display_name: str | None = None,
    ) -> tuple[AttemptRecord, bool]:
        """The player's attempt of the puzzle, created at state start unless one exists;
        True when it was created now. Concurrent starts create one attempt.

        A new attempt counts against its client's limit, in this transaction:
        TooManyAttempts (and nothing stored) when the client has started as many
        attempts of the puzzle as it may."""
        with self._database.write() as connection:
            if self._database.locks_rows:
                connection.execute(select(func.pg_advisory_xact_lock(*limit.lock_key(puzzle_id))))
            ours = {"puzzle_id": puzzle_id, "player_id": player_id}
            if connection.execute(self.sql.of_player, ours).first() is None:
                started = connection.scalar(
                    select(func.count())
                    .select_from(Attempt)
                    .where(Attempt.puzzle_id == puzzle_id, Attempt.client == limit.client)
                )
                if (started or 0) >= limit.attempts:
                    raise TooManyAttempts(limit.attempts)
            self._players.record_and_lock(connection, player_id, display_name)
            created = connection.scalar(
                self._database.insert(Attempt)
                .values(
                    id=secrets.token_urlsafe(12),
                    created_at=utc_now(),
                    updated_at=utc_now(),
                    puzzle_id=puzzle_id,
                    player_id=player_id,
                    played=0,
                    state=start,
                    over=False,
                    client=limit.client,
                )
                .on_conflict_do_nothing(index_elements=["puzzle_id", "player_id"])
                .returning(Attempt.id)
            )
        found = self.find(puzzle_id, player_id)
        assert found is not None, "an attempt just inserted or found conflicting must exist"
        return found, created is not None

    def extend(
        self,
        attempt_id: str,
        extend: Callable[[AttemptRecord | None], Extension | None],
        display_name: str | None = None,
        played: int | None = None,
        player_id: str | None = None,
    ) -> AttemptRecord:
        """Read the attempt, then append what extend(attempt) decides in one transaction
        committed before returning: the attempt as it then is.

        extend gets None for an unknown attempt; it raises to refuse (nothing is
        written) and returns None to append nothing. A given display name becomes
        the player's. AttemptMoved when another request appended in between.

        extend runs holding no connection, so it may read (the puzzle, stored actions):
        a request holds one connection at a time, and a pool whose every connection is
        held by requests waiting for a second one can never serve them. The append itself
        changes the attempt only if it still has the actions extend saw.

        played, the count of actions the client says are stored, and player_id, the
        caller's: when this process kept the caller's own attempt at that count, it is not
        read again (anyone else's request reads it, so its time says nothing of the count).
        """
        kept = self._recent.get(attempt_id)
        if kept is not None and kept.played == played and kept.player_id == player_id:
            try:
                return self._extend(kept, extend, display_name)
            except AttemptMoved:
                self._recent.pop(attempt_id, None)  # another process appended since
        attempt = self.get(attempt_id)
        if attempt is None:
            extend(attempt)
            raise LookupError(f"no attempt {attempt_id!r}")
        return self._extend(attempt, extend, display_name)

    def _extend(
        self,
        attempt: AttemptRecord,
        extend: Callable[[AttemptRecord | None], Extension | None],
        display_name: str | None,
    ) -> AttemptRecord:
        """extend's append to the attempt as given, which is kept as it then is."""
        extended = self._append_decided(attempt, extend(attempt), display_name)
        self._recent[extended.id] = extended
        self._recent.move_to_end(extended.id)
        if len(self._recent) > KEPT_ATTEMPTS:
            self._recent.popitem(last=False)
        return extended

    def _append_decided(
        self, attempt: AttemptRecord, extension: Extension | None, display_name: str | None
    ) -> AttemptRecord:
        ends = extension is not None and extension.result is not None
        if extension is None and display_name is None:
            return attempt
        if extension is not None and not ends and display_name is None:
            # Only the attempt changes: on PostgreSQL, one statement and no transaction.
            with self._database.write_alone() as connection:
                return self._append(connection, attempt, extension)
        with self._database.write() as connection:
            if display_name is not None or ends:
                # Before the attempt's row: the order every write that locks both takes.
                self._players.record_and_lock(
                    connection, attempt.player_id, display_name, known=True
                )
            if extension is None:
                return attempt
            extended = self._append(connection, attempt, extension)
        if ends:
            self._runs.standings_changed(attempt.puzzle_id)
        return extended

    def _add_batch(self, connection: Connection, values: dict[str, Any]) -> None:
        """The attempt's new count, state and batch of actions, if it still has the count
        expected; AttemptMoved (and nothing written) if not."""
        if self.sql.append_with_batch is not None:
            if self.sql.append_with_batch.run(connection, values) != 1:
                raise AttemptMoved(values["attempt_id"])
            return
        if self.sql.append.run(connection, values) != 1:
            raise AttemptMoved(values["attempt_id"])
        self.sql.add_batch.run(connection, values)

    def _append(
        self, connection: Connection, attempt: AttemptRecord, extension: Extension
    ) -> AttemptRecord:
        """Add the extension's actions as a new row and the state after them (never rewriting
        what is stored), if the attempt still has attempt.played actions."""
        played = attempt.played + len(extension.actions)
        result = extension.result
        self._add_batch(
            connection,
            {
                "attempt_id": attempt.id,
                "expected": attempt.played,
                "new_played": played,
                "new_state": extension.state,
                "new_over": result is not None,
                "now": utc_now(),
                "position": attempt.played,
                "actions": extension.actions,
            },
        )
        run_id = None
        if result is not None:
            run = self._runs.store(
                connection,
                {
                    "puzzle_id": attempt.puzzle_id,
                    "player_id": attempt.player_id,
                    "actions": self._actions(connection, attempt.id),
                    "score": result.score,
                    "tiebreak": result.tiebreak,
                    "finished": result.finished,
                },
                extension.official,
            )
            run_id = run.id
            connection.execute(self.sql.set_run, {"attempt_id": attempt.id, "new_run_id": run_id})
        return replace(
            attempt, played=played, state=extension.state, over=result is not None, run_id=run_id
        )
