"""runs.owner: the process that executes a run (decision D27)

Revision ID: 0011
Revises: 0009
Create Date: 2026-11-24 00:20:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0011"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("owner", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )
        batch_op.create_index("ix_runs_owner", ["owner", "status"], unique=False)
        batch_op.create_index("ix_runs_session_status", ["session_key", "status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_session_status")
        batch_op.drop_index("ix_runs_owner")
        batch_op.drop_column("owner")
