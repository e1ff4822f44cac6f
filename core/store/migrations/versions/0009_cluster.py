"""cluster: process heartbeats and leases (decision D26)

Revision ID: 0009
Revises: 0005
Create Date: 2026-11-24 00:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0009"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cluster_processes",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("host", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("heartbeat_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("cluster_processes", schema=None) as batch_op:
        batch_op.create_index("ix_cluster_processes_heartbeat", ["heartbeat_at"], unique=False)
    op.create_table(
        "cluster_leases",
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column("holder", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("acquired_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    with op.batch_alter_table("cluster_leases", schema=None) as batch_op:
        batch_op.create_index("ix_cluster_leases_holder", ["holder"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("cluster_leases", schema=None) as batch_op:
        batch_op.drop_index("ix_cluster_leases_holder")
    op.drop_table("cluster_leases")
    with op.batch_alter_table("cluster_processes", schema=None) as batch_op:
        batch_op.drop_index("ix_cluster_processes_heartbeat")
    op.drop_table("cluster_processes")
