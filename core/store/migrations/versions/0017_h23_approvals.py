"""approvals: paused runs' questions, tool approvals (D72) and ask_user (D73)

Revision ID: h23a
Revises: h25a
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "h23a"
down_revision = "h25a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "approvals",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("tool_call_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("tool", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("arguments", sa.JSON(), nullable=False),
        sa.Column("session_key", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
        sa.Column("requester", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("decided_at", sa.BigInteger(), nullable=True),
        sa.Column("decided_by", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=True),
        sa.Column("answer", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=True),
        sa.Column("requests", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("approvals", schema=None) as batch_op:
        batch_op.create_index("ix_approvals_run", ["run_id"], unique=False)
        batch_op.create_index("ix_approvals_status_expires", ["status", "expires_at"], unique=False)
        batch_op.create_index(
            "ix_approvals_session_status", ["session_key", "status"], unique=False
        )

    with op.batch_alter_table("runs", schema=None) as batch_op:  # `awaiting_approval`
        batch_op.alter_column(
            "status",
            existing_type=sqlmodel.sql.sqltypes.AutoString(length=16),
            type_=sqlmodel.sql.sqltypes.AutoString(length=32),
            existing_nullable=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.alter_column(
            "status",
            existing_type=sqlmodel.sql.sqltypes.AutoString(length=32),
            type_=sqlmodel.sql.sqltypes.AutoString(length=16),
            existing_nullable=False,
        )
    op.drop_table("approvals")
