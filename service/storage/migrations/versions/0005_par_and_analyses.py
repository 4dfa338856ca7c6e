"""Par and graded decisions: each puzzle keeps its par (the expert's own run, played without
foresight) beside its optimum, and each run the analysis of its decisions once asked for.

Puzzles stored before have no par (null): a coming daily's is computed by the planning
run, a practice seed's when it is next asked for.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("puzzles", schema=None) as batch_op:
        batch_op.add_column(sa.Column("par", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("par_tiebreak", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("par_line", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("par_seconds", sa.Float(), nullable=True))
    op.create_table(
        "run_analyses",
        sa.Column("run_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("rng_seed", sa.Integer(), nullable=False),
        sa.Column("analysis", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('pending', 'done', 'failed')", name=op.f("ck_run_analyses_status")
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_analyses_run_id_runs")),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_analyses")),
    )


def downgrade() -> None:
    op.drop_table("run_analyses")
    with op.batch_alter_table("puzzles", schema=None) as batch_op:
        batch_op.drop_column("par_seconds")
        batch_op.drop_column("par_line")
        batch_op.drop_column("par_tiebreak")
        batch_op.drop_column("par")
