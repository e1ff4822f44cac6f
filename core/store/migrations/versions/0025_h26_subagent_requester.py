"""subagent_runs: the requester's sender, person, group and automated flag, so the announce step
runs as the requester like the child's other runs (D149: D63 rules, D64 limits, D81)

Revision ID: h26s
Revises: h24b
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "h26s"
down_revision = "h24b"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("sender", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=True)
        )
        batch_op.add_column(
            sa.Column("person_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch_op.add_column(
            sa.Column("group_id", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=True)
        )
        batch_op.add_column(sa.Column("automated", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        for column in ("automated", "group_id", "person_id", "sender"):
            batch_op.drop_column(column)
