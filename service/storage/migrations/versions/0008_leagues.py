"""Leagues of friends, their members, and each player's latest streak per game.

Creates `leagues` (a league's name, maker, member count and the salt and hash of its
invite), `league_members` (with an index of each player's leagues) and `streaks` (each
player's latest streak per game as the numbers of its first and last days), and fills
`streaks` from the official runs already stored: the last island of consecutive days
of each player and game.

Revision ID: 0008
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0006"
branch_labels = None
depends_on = None

# Each player's and game's days with an official run; the days of one island of consecutive
# days share `number - position`; the last island of each player and game is their latest
# streak.
FILL_STREAKS = """
INSERT INTO streaks (player_id, game, first_number, last_number)
SELECT player_id, game, first_number, last_number FROM (
    SELECT player_id, game, MIN(number) AS first_number, MAX(number) AS last_number,
           ROW_NUMBER() OVER (PARTITION BY player_id, game ORDER BY MAX(number) DESC) AS latest
    FROM (
        SELECT player_id, game, number,
               number - ROW_NUMBER() OVER (PARTITION BY player_id, game ORDER BY number) AS island
        FROM (
            SELECT DISTINCT runs.player_id, puzzles.game, puzzles.number
            FROM runs JOIN puzzles ON puzzles.id = runs.puzzle_id
            WHERE runs.official AND puzzles.daily_date IS NOT NULL
              AND puzzles.number IS NOT NULL
        ) AS days
    ) AS numbered
    GROUP BY player_id, game, island
) AS islands
WHERE latest = 1
"""


def upgrade() -> None:
    op.create_table(
        "leagues",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("maker_id", sa.String(length=64), nullable=False),
        sa.Column("invite_salt", sa.String(length=64), nullable=False),
        sa.Column("invite_hash", sa.String(length=64), nullable=False),
        sa.Column("members", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["maker_id"], ["players.id"], name=op.f("fk_leagues_maker_id_players")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_leagues")),
        sa.UniqueConstraint("invite_hash", name=op.f("uq_leagues_invite_hash")),
    )
    op.create_table(
        "league_members",
        sa.Column("league_id", sa.String(length=32), nullable=False),
        sa.Column("player_id", sa.String(length=64), nullable=False),
        sa.Column("member", sa.String(length=32), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["league_id"], ["leagues.id"], name=op.f("fk_league_members_league_id_leagues")
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_league_members_player_id_players")
        ),
        sa.PrimaryKeyConstraint("league_id", "player_id", name=op.f("pk_league_members")),
        sa.UniqueConstraint("league_id", "member", name=op.f("uq_league_members_league_id_member")),
    )
    op.create_index("ix_league_members_player", "league_members", ["player_id", "league_id"])
    op.create_table(
        "streaks",
        sa.Column("player_id", sa.String(length=64), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("first_number", sa.Integer(), nullable=False),
        sa.Column("last_number", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name=op.f("fk_streaks_player_id_players")
        ),
        sa.PrimaryKeyConstraint("player_id", "game", name=op.f("pk_streaks")),
    )
    op.execute(FILL_STREAKS)


def downgrade() -> None:
    op.drop_table("streaks")
    op.drop_index("ix_league_members_player", table_name="league_members")
    op.drop_table("league_members")
    op.drop_table("leagues")
