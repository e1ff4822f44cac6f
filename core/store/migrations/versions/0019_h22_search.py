"""search: the transcript search index, every stored message indexed (decision D66)

Revision ID: h22a
Revises: h26a
"""

from __future__ import annotations

from alembic import op

from core.store.search_index import backfill, create_index, drop_index

revision = "h22a"
down_revision = "h26a"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    create_index(conn)
    backfill(conn)


def downgrade() -> None:
    drop_index(op.get_bind())
