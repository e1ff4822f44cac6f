"""messages: index by session key and id, so one session's search reads only its rows (D116)

Revision ID: h22s
Revises: h24a
"""

from __future__ import annotations

from alembic import op

revision = "h22s"
down_revision = "h24a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_messages_session_key", "messages", ["session_key", "id"])


def downgrade() -> None:
    op.drop_index("ix_messages_session_key", table_name="messages")
