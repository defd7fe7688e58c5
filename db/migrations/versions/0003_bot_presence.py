"""bot presence: connected_since, last_seen_at

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("connected_since", sa.DateTime(timezone=True),
                                      nullable=True))
        batch_op.add_column(sa.Column("last_seen_at", sa.DateTime(timezone=True),
                                      nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("last_seen_at")
        batch_op.drop_column("connected_since")
