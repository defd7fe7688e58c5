"""bots.accepts: what a connected bot's Play streams take (every match, challenges only, none)

A bot may connect for challenges only (`Hello.challenges_only`: the ladder and tournaments
never pair it) and may say it takes no new matches (`PlayRequest.drain`: it is finishing its
running ones). The engine service records that with its presence; nullable: None is every match,
as for every bot before this.

Revision ID: 0008_practice
Revises: 0007_versions
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_practice"
down_revision = "0007_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("accepts", sa.String(length=12), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("accepts")
