"""Attempts: a daily played on the server; runs keep the name they were stored under.

Revision ID: 0002_attempts
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_attempts"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("display_name", sa.String(length=64), nullable=True))
    # Runs stored so far showed their player's current name: they keep the name they show now.
    op.execute(
        "UPDATE runs SET display_name = "
        "(SELECT players.display_name FROM players WHERE players.id = runs.player_id)"
    )
    op.create_table(
        "attempts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("puzzle_id", sa.Integer(), nullable=False),
        sa.Column("player_id", sa.String(length=64), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("over", sa.Boolean(), nullable=False),
        sa.Column("run_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_attempts_player_id_players")
        ),
        sa.ForeignKeyConstraint(
            ["puzzle_id"], ["puzzles.id"], name=op.f("fk_attempts_puzzle_id_puzzles")
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_attempts_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attempts")),
        sa.UniqueConstraint("puzzle_id", "player_id", name=op.f("uq_attempts_puzzle_id_player_id")),
    )
    op.create_table(
        "attempt_batches",
        sa.Column("attempt_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("actions", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["attempt_id"], ["attempts.id"], name=op.f("fk_attempt_batches_attempt_id_attempts")
        ),
        sa.PrimaryKeyConstraint("attempt_id", "position", name=op.f("pk_attempt_batches")),
    )


def downgrade() -> None:
    op.drop_table("attempt_batches")
    op.drop_table("attempts")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("display_name")
