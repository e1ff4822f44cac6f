"""delivery chunks found by their platform message id: late failure reports (decision D166)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 00:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("delivery_chunks", schema=None) as batch_op:
        batch_op.create_index("ix_delivery_chunks_message", ["platform_message_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("delivery_chunks", schema=None) as batch_op:
        batch_op.drop_index("ix_delivery_chunks_message")
