"""yields: sessions whose turn ended with sessions_yield (decisions D69, D112)

Revision ID: h22b
Revises: h21b
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "h22b"
down_revision = "h21b"
branch_labels = None
depends_on = None

S = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "session_yields",
        sa.Column("session_key", S(length=512), nullable=False),
        sa.Column("run_id", S(length=64), nullable=True),
        sa.Column("yielded_at", sa.BigInteger(), nullable=False),
        sa.Column("context", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("session_key"),
    )


def downgrade() -> None:
    op.drop_table("session_yields")
