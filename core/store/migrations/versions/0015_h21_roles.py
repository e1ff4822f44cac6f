"""subagent_runs.role: the requester's role, carried by the child's runs (D60)

Revision ID: h21a
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "h21a"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("subagent_runs", schema=None) as batch_op:
        batch_op.drop_column("role")
