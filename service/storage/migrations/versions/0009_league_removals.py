"""A removal from a league sticks: `league_removals` keeps each player a league's maker
removed (with the handle they had), whom a join of that league refuses until the maker
lets them back in.

Leagues already stored have no removals kept: a member removed before this migration
may join again by a link they hold, as before.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "league_removals",
        sa.Column("league_id", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=64), nullable=False),
        sa.Column("member", sa.String(length=32), nullable=False),
        sa.Column("removed_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["league_id"], ["leagues.id"], name=op.f("fk_league_removals_league_id_leagues")
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_league_removals_player_id_players")
        ),
        sa.PrimaryKeyConstraint("league_id", "player_id", name=op.f("pk_league_removals")),
        sa.UniqueConstraint(
            "league_id", "member", name=op.f("uq_league_removals_league_id_member")
        ),
    )


def downgrade() -> None:
    op.drop_table("league_removals")
