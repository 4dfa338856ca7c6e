"""Initial schema: puzzles with their optima, players, and runs.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("display_name", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_players")),
    )
    op.create_table(
        "puzzles",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("seed", sa.String(length=64), nullable=False),
        sa.Column("rules_version", sa.String(length=32), nullable=False),
        sa.Column("daily_date", sa.Date(), nullable=True),
        sa.Column("number", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("optimum", sa.Integer(), nullable=True),
        sa.Column("tiebreak", sa.Integer(), nullable=True),
        sa.Column("witness", sa.JSON(), nullable=True),
        sa.Column("proved", sa.Boolean(), nullable=True),
        sa.Column("solve_seconds", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'solved', 'failed')", name=op.f("ck_puzzles_status")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_puzzles")),
        sa.UniqueConstraint(
            "game", "seed", "rules_version", name=op.f("uq_puzzles_game_seed_rules_version")
        ),
    )
    op.create_index("ix_puzzles_daily_date", "puzzles", ["daily_date"])
    op.create_index("ix_puzzles_status", "puzzles", ["status"])
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("puzzle_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(length=64), nullable=False),
        sa.Column("actions", sa.JSON(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("tiebreak", sa.Integer(), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.Column("official", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_runs_player_id_players")
        ),
        sa.ForeignKeyConstraint(
            ["puzzle_id"], ["puzzles.id"], name=op.f("fk_runs_puzzle_id_puzzles")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index("ix_runs_leaderboard", "runs", ["puzzle_id", "official", "score", "tiebreak"])
    op.create_index("ix_runs_player", "runs", ["player_id", "puzzle_id"])
    op.create_index(
        "uq_runs_official_player",
        "runs",
        ["puzzle_id", "player_id"],
        unique=True,
        sqlite_where=sa.text("official"),
        postgresql_where=sa.text("official"),
    )


def downgrade() -> None:
    op.drop_table("runs")
    op.drop_table("puzzles")
    op.drop_table("players")
