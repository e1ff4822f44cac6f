"""sessions: an index on the chat a session's replies go to (`last_channel`, `last_to`), so a
delivery into another chat finds that chat's sessions, whose send policy it obeys (D140, D177),
without reading the whole table

Revision ID: h28r
Revises: h27c
"""

from __future__ import annotations

from alembic import op

revision = "h28r"
down_revision = "h27c"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_sessions_route", "sessions", ["last_channel", "last_to"])


def downgrade() -> None:
    op.drop_index("ix_sessions_route", table_name="sessions")
