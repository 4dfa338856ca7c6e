"""The tables of what must not be lost: puzzles with their optima and pars, players, runs and
attempts, the analyses of runs, and the counts of runs per puzzle kept as the runs are stored.

The same models serve SQLite and PostgreSQL; the schema itself is created and
changed only by the Alembic migrations in service/storage/migrations.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

PUZZLE_STATUSES = ("pending", "solved", "failed")
ANALYSIS_STATUSES = ("pending", "done", "failed")

# Constraint names fixed by convention, so that migrations name them the same on every database.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utc_now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Puzzle(Base):
    """One seed of one game under one rules version, and what the solver proved about it."""

    __tablename__ = "puzzles"
    __table_args__ = (
        UniqueConstraint("game", "seed", "rules_version"),
        CheckConstraint(f"status IN {PUZZLE_STATUSES!r}", name="status"),
        Index("ix_puzzles_daily_date", "daily_date"),
        Index("ix_puzzles_status", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    seed: Mapped[str] = mapped_column(String(64))
    rules_version: Mapped[str] = mapped_column(String(32))
    daily_date: Mapped[date | None] = mapped_column(Date)
    number: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    optimum: Mapped[int | None] = mapped_column(Integer)
    tiebreak: Mapped[int | None] = mapped_column(Integer)
    witness: Mapped[list[Any] | None] = mapped_column(JSON)
    proved: Mapped[bool | None] = mapped_column(Boolean)
    solve_seconds: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)
    # The expert's own run (solver.expert.par): the same dice and cards, played without
    # foresight. par_line is null until it is computed; par is null when that run does not
    # finish.
    par: Mapped[int | None] = mapped_column(Integer)
    par_tiebreak: Mapped[int | None] = mapped_column(Integer)
    par_line: Mapped[list[Any] | None] = mapped_column(JSON)
    par_seconds: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utc_now, onupdate=utc_now
    )


class Player(Base):
    """An anonymous player, known by the id in their signed cookie."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    display_name: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


# Official runs only: the condition of the unique index on them, which a query must state
# word for word for SQLite to read that index (`official = 1`, SQLAlchemy's rendering of
# `Run.official`, makes it read every run of the player instead).
OFFICIAL_RUNS_ONLY = text("official")


class Run(Base):
    """A submitted run, replayed and scored by the server."""

    __tablename__ = "runs"
    __table_args__ = (
        # At most one official run per player and puzzle, enforced by the database itself
        # so that concurrent submissions cannot both become official.
        Index(
            "uq_runs_official_player",
            "puzzle_id",
            "player_id",
            unique=True,
            sqlite_where=OFFICIAL_RUNS_ONLY,
            postgresql_where=OFFICIAL_RUNS_ONLY,
        ),
        Index("ix_runs_player", "player_id", "puzzle_id"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    puzzle_id: Mapped[int] = mapped_column(ForeignKey("puzzles.id"))
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    actions: Mapped[list[Any]] = mapped_column(JSON)
    score: Mapped[int | None] = mapped_column(Integer)
    tiebreak: Mapped[int] = mapped_column(Integer)
    finished: Mapped[bool] = mapped_column(Boolean)
    official: Mapped[bool] = mapped_column(Boolean)
    # The player's name when the run was stored: a later name change leaves it as it was.
    display_name: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


# The leaderboard's order, so that its top rows are read off the index, never sorted:
# official runs of a puzzle by score, then tie-break (both higher first), then the earlier
# submission, then the id.
Index(
    "ix_runs_ranking",
    Run.puzzle_id,
    Run.score.desc(),
    Run.tiebreak.desc(),
    Run.created_at,
    Run.id,
    # Each dialect's rendering of `Run.official`, which the planners match against the query's.
    sqlite_where=text("official = 1"),
    postgresql_where=text("official"),
)
# A player's runs, newest first.
Index("ix_runs_player_time", Run.player_id, Run.created_at, Run.id)
# A player's official runs with every column their history takes from them (see
# PlayerRepository.summary), so that reading them never visits the runs themselves.
Index(
    "ix_runs_player_official",
    Run.player_id,
    Run.puzzle_id,
    Run.score,
    Run.tiebreak,
    Run.id,
    # Only SQLite needs it: it reads the index alone only when every column named is in it.
    Run.official,
    sqlite_where=text("official = 1"),
    postgresql_where=text("official"),
)


class Attempt(Base):
    """A player's one play of a daily, held by the server: how many actions are played and
    the state they lead to (the actions are rows of AttemptBatch). When the game is over
    it becomes the player's run (`run_id`)."""

    __tablename__ = "attempts"
    __table_args__ = (
        # One attempt per player and puzzle: a second start returns the first.
        UniqueConstraint("puzzle_id", "player_id"),
        # The attempts one client bucket started on a puzzle, counted at every start.
        Index("ix_attempts_client", "puzzle_id", "client"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    puzzle_id: Mapped[int] = mapped_column(ForeignKey("puzzles.id"))
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    # The number of actions played, the version every append is conditioned on.
    played: Mapped[int] = mapped_column(Integer)
    # The engine's state after the actions, so an append applies only the new ones.
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    over: Mapped[bool] = mapped_column(Boolean)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id"))
    # Who started it, as the per-address limit counts clients: a keyed hash (HMAC under
    # RALLY_SECRET_KEY) of the client's bucket, never the address itself. Null for the
    # attempts started before it was kept.
    client: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utc_now, onupdate=utc_now
    )


class AttemptBatch(Base):
    """The actions one append added to an attempt, the first of them at `position`. An
    append adds one row and never rewrites earlier ones; the key lets no position start
    two batches."""

    __tablename__ = "attempt_batches"

    attempt_id: Mapped[str] = mapped_column(ForeignKey("attempts.id"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    actions: Mapped[list[Any]] = mapped_column(JSON)


class ScoreCount(Base):
    """How many official runs of a puzzle reached a score: the leaderboard's histogram,
    counted in the transaction that stores each run rather than over the runs per read."""

    __tablename__ = "score_counts"

    puzzle_id: Mapped[int] = mapped_column(ForeignKey("puzzles.id"), primary_key=True)
    score: Mapped[int] = mapped_column(Integer, primary_key=True)
    runs: Mapped[int] = mapped_column(Integer)


class PlayerCount(Base):
    """How many players stored a run of a puzzle, counted as their first run is stored."""

    __tablename__ = "player_counts"

    puzzle_id: Mapped[int] = mapped_column(ForeignKey("puzzles.id"), primary_key=True)
    players: Mapped[int] = mapped_column(Integer)


class RunAnalysis(Base):
    """The graded decisions of a run (solver.expert.analyse), computed once, when first asked:
    recorded pending, then done with the analysis or failed with the reason."""

    __tablename__ = "run_analyses"
    __table_args__ = (CheckConstraint(f"status IN {ANALYSIS_STATUSES!r}", name="status"),)

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    status: Mapped[str] = mapped_column(String(16))
    # The seed of the expert's sampling of the unseen: the analysis is reproducible with it.
    rng_seed: Mapped[int] = mapped_column(Integer)
    analysis: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    seconds: Mapped[float | None] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), default=utc_now, onupdate=utc_now
    )


class League(Base):
    """A league of friends: its name, its maker, how many members it has, and its invite.

    The invite token is never stored: it is an HMAC of the league's id and `invite_salt`
    under RALLY_SECRET_KEY (service.domain.leagues), so the server can show it to members
    again while a read of the database hands out no usable link; `invite_hash` (its SHA-256)
    finds the league a token opens. Renewing the invite replaces both."""

    __tablename__ = "leagues"
    __table_args__ = (UniqueConstraint("invite_hash"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    maker_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    invite_salt: Mapped[str] = mapped_column(String(64))
    invite_hash: Mapped[str] = mapped_column(String(64))
    # Kept in the transactions that add and remove members, so that a join checks the cap
    # (and counts itself) in one conditional update of this row.
    members: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


class LeagueMember(Base):
    """A player in a league. `member` is what other members know them by (never the player's
    id, which their cookie carries)."""

    __tablename__ = "league_members"
    __table_args__ = (
        UniqueConstraint("league_id", "member"),
        # A player's leagues, counted against the cap at every join.
        Index("ix_league_members_player", "player_id", "league_id"),
    )

    league_id: Mapped[str] = mapped_column(ForeignKey("leagues.id"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    member: Mapped[str] = mapped_column(String(32))
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


class LeagueRemoval(Base):
    """A player the league's maker removed from it. While the row stands, a join of that
    league by that player (by any of its invite links) is refused as if the link opened
    nothing; the maker deletes it by letting them back in. `member` is the handle the
    player had in the league, by which the maker names them."""

    __tablename__ = "league_removals"
    __table_args__ = (UniqueConstraint("league_id", "member"),)

    league_id: Mapped[str] = mapped_column(ForeignKey("leagues.id"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    member: Mapped[str] = mapped_column(String(32))
    removed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


class Streak(Base):
    """A player's latest streak at one game: the numbers of its first and last days (a daily's
    number counts days), extended in the transaction that stores each official run. A league
    reads its members' current streaks here, one row each, rather than from every run."""

    __tablename__ = "streaks"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    first_number: Mapped[int] = mapped_column(Integer)
    last_number: Mapped[int] = mapped_column(Integer)
