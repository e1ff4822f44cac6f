"""cron jobs: scheduled jobs and their run state (decision D15)

Revision ID: 0008
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cron_jobs",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("agent_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("source", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("owner_session", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("next_run_at", sa.BigInteger(), nullable=True),
        sa.Column("running_since", sa.BigInteger(), nullable=True),
        sa.Column("last_run_at", sa.BigInteger(), nullable=True),
        sa.Column("last_status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("runs", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("cron_jobs", schema=None) as batch_op:
        batch_op.create_index("ix_cron_jobs_due", ["enabled", "next_run_at"], unique=False)
        batch_op.create_index("ix_cron_jobs_owner", ["owner_session"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("cron_jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_cron_jobs_owner")
        batch_op.drop_index("ix_cron_jobs_due")

    op.drop_table("cron_jobs")
