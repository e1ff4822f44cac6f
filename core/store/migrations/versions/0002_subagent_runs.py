"""subagent runs: the persisted sub-agent registry (sessions_spawn, reference R4.8)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 05:54:18.080111
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "subagent_runs",
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("child_key", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
        sa.Column("requester_key", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
        sa.Column("requester_origin", sa.JSON(), nullable=True),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("label", sa.Text(), nullable=True),
        sa.Column("cleanup", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("model", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("trace_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("hops", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=True),
        sa.Column("ended_at", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("reply", sa.Text(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("total_tokens", sa.Integer(), nullable=True),
        sa.Column("archive_at", sa.BigInteger(), nullable=True),
        sa.Column("announce_state", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("announced_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("run_id"),
    )
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        batch_op.create_index("ix_subagent_runs_announce", ["announce_state"], unique=False)
        batch_op.create_index("ix_subagent_runs_child", ["child_key"], unique=False)
        batch_op.create_index(
            "ix_subagent_runs_requester", ["requester_key", "created_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        batch_op.drop_index("ix_subagent_runs_requester")
        batch_op.drop_index("ix_subagent_runs_child")
        batch_op.drop_index("ix_subagent_runs_announce")

    op.drop_table("subagent_runs")
