"""deliveries: index by chat and kind, for the cron and webhook replies the web chat shows (D136)

Revision ID: h24a
Revises: h22b
"""

from __future__ import annotations

from alembic import op

revision = "h24a"
down_revision = "h22b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_deliveries_chat", "deliveries", ["channel", "to", "kind", "id"])


def downgrade() -> None:
    op.drop_index("ix_deliveries_chat", table_name="deliveries")
