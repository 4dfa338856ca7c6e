"""A player's official runs read off one index: what `GET /api/v1/me` lists and counts
(streaks, days played, distances to the optimum) without reading the rest of their runs.

The index holds every column the read takes from the runs (`official` too, which SQLite
reads for the condition), so both databases answer it from the index alone.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_runs_player_official",
        "runs",
        ["player_id", "puzzle_id", "score", "tiebreak", "id", "official"],
        sqlite_where=sa.text("official = 1"),
        postgresql_where=sa.text("official"),
    )


def downgrade() -> None:
    op.drop_index("ix_runs_player_official", table_name="runs")
