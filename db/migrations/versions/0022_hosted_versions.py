"""hosted_versions: bots' uploaded versions that bummerl builds and runs (issue 46, db/hosted.py)

Revision ID: 0022_hosted_versions
Revises: 0021_person_sessions
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0022_hosted_versions"
down_revision = "0021_person_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "hosted_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("entry", sa.String(length=200), nullable=False),
        sa.Column("source", sa.LargeBinary(), nullable=True),
        sa.Column("requirements", sa.Text(), nullable=True),
        sa.Column("image_ref", sa.String(length=300), nullable=True),
        sa.Column("people", sa.String(length=10), nullable=True),
        sa.Column("image", sa.String(length=300), nullable=True),
        sa.Column("state", sa.String(length=12), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("build_log", sa.Text(), nullable=True),
        sa.Column("run_log", sa.Text(), nullable=True),
        sa.Column("token_hash", sa.String(length=64), nullable=True, unique=True),
        sa.Column("restarts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("validation_match_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("bot_id", "version"),
    )
    op.create_index("ix_hosted_versions_bot_id", "hosted_versions", ["bot_id"])


def downgrade() -> None:
    op.drop_index("ix_hosted_versions_bot_id", table_name="hosted_versions")
    op.drop_table("hosted_versions")
