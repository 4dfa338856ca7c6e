"""Leaderboard counts kept as runs are stored, and indexes in the leaderboard's and a
player's history's order.

Creates score_counts (official runs per puzzle and score) and player_counts (players per
puzzle), fills both from the runs already stored, and replaces the old leaderboard index
by one in the leaderboard's own order.

Revision ID: 0003
Revises: 0002_attempts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002_attempts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "score_counts",
        sa.Column("puzzle_id", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["puzzle_id"], ["puzzles.id"], name=op.f("fk_score_counts_puzzle_id_puzzles")
        ),
        sa.PrimaryKeyConstraint("puzzle_id", "score", name=op.f("pk_score_counts")),
    )
    op.create_table(
        "player_counts",
        sa.Column("puzzle_id", sa.Integer(), nullable=False),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["puzzle_id"], ["puzzles.id"], name=op.f("fk_player_counts_puzzle_id_puzzles")
        ),
        sa.PrimaryKeyConstraint("puzzle_id", name=op.f("pk_player_counts")),
    )
    # Official runs are finished, so each has a score.
    op.execute(
        "INSERT INTO score_counts (puzzle_id, score, runs) "
        "SELECT puzzle_id, score, COUNT(*) FROM runs WHERE official GROUP BY puzzle_id, score"
    )
    op.execute(
        "INSERT INTO player_counts (puzzle_id, players) "
        "SELECT puzzle_id, COUNT(DISTINCT player_id) FROM runs GROUP BY puzzle_id"
    )
    op.drop_index("ix_runs_leaderboard", table_name="runs")
    op.create_index(
        "ix_runs_ranking",
        "runs",
        ["puzzle_id", sa.text("score DESC"), sa.text("tiebreak DESC"), "created_at", "id"],
        sqlite_where=sa.text("official = 1"),
        postgresql_where=sa.text("official"),
    )
    op.create_index("ix_runs_player_time", "runs", ["player_id", "created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_runs_player_time", table_name="runs")
    op.drop_index("ix_runs_ranking", table_name="runs")
    op.create_index("ix_runs_leaderboard", "runs", ["puzzle_id", "official", "score", "tiebreak"])
    op.drop_table("player_counts")
    op.drop_table("score_counts")
