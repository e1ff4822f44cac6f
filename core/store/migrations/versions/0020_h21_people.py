"""people: limit counters (D64), linked identities and link codes (D65)

Revision ID: h21b
Revises: h22a
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "h21b"
down_revision = "h22a"
branch_labels = None
depends_on = None

S = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "limit_counters",
        sa.Column("subject", S(length=512), nullable=False),
        sa.Column("window", S(length=32), nullable=False),
        sa.Column("kind", S(length=64), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("subject", "window", "kind"),
    )
    op.create_table(
        "identity_links",
        sa.Column("channel", S(length=64), nullable=False),
        sa.Column("user_id", S(length=256), nullable=False),
        sa.Column("account_id", S(length=128), nullable=False),
        sa.Column("person_id", S(length=64), nullable=False),
        sa.Column("linked_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("channel", "user_id"),
    )
    with op.batch_alter_table("identity_links", schema=None) as batch_op:
        batch_op.create_index("ix_identity_links_person", ["person_id"], unique=False)
    op.create_table(
        "link_codes",
        sa.Column("code", S(length=16), nullable=False),
        sa.Column("channel", S(length=64), nullable=False),
        sa.Column("account_id", S(length=128), nullable=False),
        sa.Column("user_id", S(length=256), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("code"),
    )


def downgrade() -> None:
    op.drop_table("link_codes")
    with op.batch_alter_table("identity_links", schema=None) as batch_op:
        batch_op.drop_index("ix_identity_links_person")
    op.drop_table("identity_links")
    op.drop_table("limit_counters")
