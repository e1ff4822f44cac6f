"""cluster, once only: announce and cron claim owners, shared send-rate events (decision D29)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24 00:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("cluster_processes", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("pid_space", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True)
        )
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("announce_owner", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
    with op.batch_alter_table("cron_jobs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("claimed_by", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
    op.create_table(
        "cluster_send_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_key", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("cluster_send_events", schema=None) as batch_op:
        batch_op.create_index("ix_cluster_send_events_source", ["source_key", "at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("cluster_send_events", schema=None) as batch_op:
        batch_op.drop_index("ix_cluster_send_events_source")
    op.drop_table("cluster_send_events")
    with op.batch_alter_table("cron_jobs", schema=None) as batch_op:
        batch_op.drop_column("claimed_by")
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        batch_op.drop_column("announce_owner")
    with op.batch_alter_table("cluster_processes", schema=None) as batch_op:
        batch_op.drop_column("pid_space")
