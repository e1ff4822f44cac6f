"""message seq: a message's place in its transcript, set when its turn starts (decision D13)

A message queued behind a running turn is stored at once (seq = 2**62, "waiting") and placed (seq = the
session's next position) when its own turn starts, so each turn's user message is directly
followed by that turn's replies. Existing messages keep their order (seq = id).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 21:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("seq", sa.BigInteger(), nullable=True))
    op.execute("UPDATE messages SET seq = id")
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.create_index("ix_messages_session_seq", ["session_id", "seq", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_index("ix_messages_session_seq")
        batch_op.drop_column("seq")
