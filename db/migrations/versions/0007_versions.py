"""bots and matches: the version a bot runs, and the version each seat of a match ran

A bot says which version it runs when it connects (`Hello.version`): `bots.version` holds the
newest one, and a match records each seat's in `matches.version0` / `version1`. All nullable:
older bots, house bots and matches made before this say none.

Revision ID: 0007_versions
Revises: 0006_hot_updates
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_versions"
down_revision = "0006_hot_updates"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("version", sa.String(length=100), nullable=True))
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("version0", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("version1", sa.String(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("version1")
        batch_op.drop_column("version0")
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("version")
