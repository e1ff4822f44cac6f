"""pairing: DM pairing requests and approved senders (decision D11)

Revision ID: 0004
Revises: 0002
Create Date: 2026-11-23 21:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pairing_requests",
        sa.Column("code", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("account_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("user_name", sa.Text(), nullable=True),
        sa.Column("chat_id", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
        sa.Column("thread_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True),
        sa.Column("deliver_to", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
        sa.Column("preview", sa.Text(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("code"),
    )
    with op.batch_alter_table("pairing_requests", schema=None) as batch_op:
        batch_op.create_index(
            "ix_pairing_requests_sender", ["channel", "account_id", "user_id"], unique=False
        )
        batch_op.create_index("ix_pairing_requests_status", ["status", "expires_at"], unique=False)
    op.create_table(
        "pairing_approvals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("account_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=256), nullable=False),
        sa.Column("approved_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("channel", "account_id", "user_id", name="uq_pairing_approvals_sender"),
    )


def downgrade() -> None:
    op.drop_table("pairing_approvals")
    with op.batch_alter_table("pairing_requests", schema=None) as batch_op:
        batch_op.drop_index("ix_pairing_requests_status")
        batch_op.drop_index("ix_pairing_requests_sender")
    op.drop_table("pairing_requests")
