"""bot_authors: people who proved they hold a bot's token (issue 46, db/authors.py)

Revision ID: 0023_bot_authors
Revises: 0022_hosted_versions
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0023_bot_authors"
down_revision = "0022_hosted_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bot_authors",
        sa.Column("person_id", sa.Integer(), sa.ForeignKey("people.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_bot_authors_bot_id", "bot_authors", ["bot_id"])


def downgrade() -> None:
    op.drop_index("ix_bot_authors_bot_id", table_name="bot_authors")
    op.drop_table("bot_authors")
