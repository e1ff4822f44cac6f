"""exactly once: inbound identities and per-chunk delivery state (decision D16)

Revision ID: 0005
Revises: 0008
Create Date: 2026-11-23 21:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0005"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "inbound_identities",
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("account_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=False),
        sa.Column("identity", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("session_key", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=True),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("channel", "account_id", "identity"),
    )
    with op.batch_alter_table("inbound_identities", schema=None) as batch_op:
        batch_op.create_index("ix_inbound_identities_created", ["created_at"], unique=False)
    op.create_table(
        "delivery_chunks",
        sa.Column("delivery_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("chunk_index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("state", sqlmodel.sql.sqltypes.AutoString(length=24), nullable=False),
        sa.Column(
            "platform_message_id", sqlmodel.sql.sqltypes.AutoString(length=128), nullable=True
        ),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("delivery_id", "chunk_index"),
    )
    with op.batch_alter_table("delivery_chunks", schema=None) as batch_op:
        batch_op.create_index("ix_delivery_chunks_state", ["state", "delivery_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("delivery_chunks", schema=None) as batch_op:
        batch_op.drop_index("ix_delivery_chunks_state")
    op.drop_table("delivery_chunks")
    with op.batch_alter_table("inbound_identities", schema=None) as batch_op:
        batch_op.drop_index("ix_inbound_identities_created")
    op.drop_table("inbound_identities")
