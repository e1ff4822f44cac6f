"""cron_jobs: the creator's role, person and group, so an agent-made job's turns run as the
person whose message made it, never higher (D176)

Revision ID: h27c
Revises: h26s
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "h27c"
down_revision = "h26s"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("cron_jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("creator_role", sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column("creator_person", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("creator_group", sa.String(length=512), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("cron_jobs", schema=None) as batch_op:
        for column in ("creator_group", "creator_person", "creator_role"):
            batch_op.drop_column(column)
