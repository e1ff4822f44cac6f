"""media: outbound media kept until sent, and the delivery chunk that sends each (D78)

Revision ID: h26a
Revises: h23a
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "h26a"
down_revision = "h23a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "media",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("run_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("session_key", sqlmodel.sql.sqltypes.AutoString(length=512), nullable=True),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column("mime", sqlmodel.sql.sqltypes.AutoString(length=127), nullable=False),
        sa.Column("caption", sa.Text(), nullable=True),
        sa.Column("voice", sa.Boolean(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("media", schema=None) as batch_op:
        batch_op.create_index("ix_media_run", ["run_id"], unique=False)
        batch_op.create_index("ix_media_created", ["created_at"], unique=False)
    with op.batch_alter_table("delivery_chunks", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("media_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("delivery_chunks", schema=None) as batch_op:
        batch_op.drop_column("media_id")
    with op.batch_alter_table("media", schema=None) as batch_op:
        batch_op.drop_index("ix_media_created")
        batch_op.drop_index("ix_media_run")
    op.drop_table("media")
