"""console: the owner console's sign-ins (D180), runs by creation time for usage (D182)

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_sessions",
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("digest"),
    )
    with op.batch_alter_table("console_sessions", schema=None) as batch_op:
        batch_op.create_index("ix_console_sessions_expires", ["expires_at"], unique=False)
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index("ix_runs_created", ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index("ix_runs_created")
    with op.batch_alter_table("console_sessions", schema=None) as batch_op:
        batch_op.drop_index("ix_console_sessions_expires")

    op.drop_table("console_sessions")
