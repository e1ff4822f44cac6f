"""sessions.reset_at: when `/new` last gave a session a new transcript, so the web chat shows only
the cron and webhook replies kept since then (D137)

Revision ID: h24b
Revises: h22s
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h24b"
down_revision = "h22s"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.add_column(sa.Column("reset_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("reset_at")
