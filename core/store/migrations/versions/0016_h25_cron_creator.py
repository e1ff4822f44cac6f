"""cron job creator: the person whose message made an agent's job, so revoking them stops it (D81)

Revision ID: h25a
Revises: h21a
Create Date: 2026-11-29 00:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h25a"
down_revision = "h21a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("cron_jobs") as batch_op:
        batch_op.add_column(sa.Column("creator", sa.String(length=512), nullable=True))
        batch_op.create_index("ix_cron_jobs_creator", ["creator"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("cron_jobs") as batch_op:
        batch_op.drop_index("ix_cron_jobs_creator")
        batch_op.drop_column("creator")
