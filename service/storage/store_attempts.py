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
and PostgreSQL alike. The append that ends the game stores the player's run in
the same transaction, so an attempt is never over without its run.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any, Protocol

from sqlalchemy import Connection, func, select

from service.storage.models import Attempt, utc_now
from service.storage.store_statements import RECORDED_ATTEMPT_COLUMNS, Statements


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


def _attempt_record(row: Mapping[Any, Any]) -> AttemptRecord:
    return AttemptRecord(**{name: row[name] for name in RECORDED_ATTEMPT_COLUMNS})


class _Storage(Protocol):
    """What the attempts need of the Store they are part of."""

    _sql: Statements
    _locks_rows: bool

    def _read_rows(self) -> AbstractContextManager[Connection]: ...
    def _write_rows(self) -> AbstractContextManager[Connection]: ...
    def _upsert_player(self, connection: Connection, player_id: str, name: str | None) -> bool: ...
    def _store_run(self, connection: Connection, fields: dict[str, Any], official: bool) -> Any: ...
    def _standings_changed(self, puzzle_id: int) -> None: ...
    @property
    def _insert(self) -> Any: ...


def _actions(storage: _Storage, connection: Connection, attempt_id: str) -> list[Any]:
    batches = connection.execute(storage._sql.batches_of, {"attempt_id": attempt_id}).scalars()
    return [action for batch in batches for action in batch]


def _one_attempt(storage: _Storage, statement: Any, **params: Any) -> AttemptRecord | None:
    # Plain rows, not ORM objects: an attempt is read on every append.
    with storage._read_rows() as connection:
        row = connection.execute(statement, params).mappings().first()
        return _attempt_record(row) if row else None


class AttemptStorage:
    """The attempts part of service.storage.store.Store."""

    def attempt_actions(
        self: _Storage, attempt_id: str, first: int = 0, stop: int | None = None
    ) -> list[Any]:
        """The attempt's actions at positions first to stop - 1 (to the last by default)."""
        with self._read_rows() as connection:
            return _actions(self, connection, attempt_id)[first:stop]

    def get_attempt(self: _Storage, attempt_id: str) -> AttemptRecord | None:
        with self._read_rows() as connection:
            found = self._sql.attempt_by_id.first(connection, {"attempt_id": attempt_id})
            return _attempt_record(found) if found else None

    def find_attempt(self: _Storage, puzzle_id: int, player_id: str) -> AttemptRecord | None:
        """The player's attempt of the puzzle, if they started one."""
        return _one_attempt(self, self._sql.attempt_of, puzzle_id=puzzle_id, player_id=player_id)

    def start_attempt(
        self: _Storage,
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
        with self._write_rows() as connection:
            if self._locks_rows:
                connection.execute(select(func.pg_advisory_xact_lock(*limit.lock_key(puzzle_id))))
            ours = {"puzzle_id": puzzle_id, "player_id": player_id}
            if connection.execute(self._sql.attempt_of, ours).first() is None:
                started = connection.scalar(
                    select(func.count())
                    .select_from(Attempt)
                    .where(Attempt.puzzle_id == puzzle_id, Attempt.client == limit.client)
                )
                if (started or 0) >= limit.attempts:
                    raise TooManyAttempts(limit.attempts)
            self._upsert_player(connection, player_id, display_name)
            created = connection.scalar(
                self._insert(Attempt)
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
        found = AttemptStorage.find_attempt(self, puzzle_id, player_id)
        assert found is not None, "an attempt just inserted or found conflicting must exist"
        return found, created is not None

    def extend_attempt(
        self: _Storage,
        attempt_id: str,
        extend: Callable[[AttemptRecord | None], Extension | None],
        display_name: str | None = None,
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
        """
        attempt = AttemptStorage.get_attempt(self, attempt_id)
        extension = extend(attempt)
        if attempt is None:
            raise LookupError(f"no attempt {attempt_id!r}")
        ends = extension is not None and extension.result is not None
        if extension is None and display_name is None:
            return attempt
        with self._write_rows() as connection:
            if display_name is not None or ends:
                # Before the attempt's row: the order every write that locks both takes.
                self._upsert_player(connection, attempt.player_id, display_name)
            if extension is None:
                return attempt
            extended = AttemptStorage._append(self, connection, attempt, extension)
        if ends:
            self._standings_changed(attempt.puzzle_id)
        return extended

    def _append(
        self: _Storage, connection: Connection, attempt: AttemptRecord, extension: Extension
    ) -> AttemptRecord:
        """Add the extension's actions as a new row and the state after them (never rewriting
        what is stored), if the attempt still has attempt.played actions."""
        played = attempt.played + len(extension.actions)
        result = extension.result
        changed = self._sql.append.run(
            connection,
            {
                "attempt_id": attempt.id,
                "expected": attempt.played,
                "new_played": played,
                "new_state": extension.state,
                "new_over": result is not None,
                "now": utc_now(),
            },
        )
        if changed != 1:
            raise AttemptMoved(attempt.id)
        self._sql.add_batch.run(
            connection,
            {"attempt_id": attempt.id, "position": attempt.played, "actions": extension.actions},
        )
        run_id = None
        if result is not None:
            run = self._store_run(
                connection,
                {
                    "puzzle_id": attempt.puzzle_id,
                    "player_id": attempt.player_id,
                    "actions": _actions(self, connection, attempt.id),
                    "score": result.score,
                    "tiebreak": result.tiebreak,
                    "finished": result.finished,
                },
                extension.official,
            )
            run_id = run.id
            connection.execute(
                self._sql.attempt_run, {"attempt_id": attempt.id, "new_run_id": run_id}
            )
        return replace(
            attempt, played=played, state=extension.state, over=result is not None, run_id=run_id
        )
