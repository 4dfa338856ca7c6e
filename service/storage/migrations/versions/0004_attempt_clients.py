"""Attempts keep a keyed hash of the client that started them, so that the attempts one
client address starts on a daily are counted in the database, in the transaction that
starts each one (the limit then holds while Redis is down).

Attempts stored before have no client: they count for no one.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("client", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_attempts_client", ["puzzle_id", "client"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("attempts", schema=None) as batch_op:
        batch_op.drop_index("ix_attempts_client")
        batch_op.drop_column("client")
