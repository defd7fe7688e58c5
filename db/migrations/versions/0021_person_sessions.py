"""person_sessions: a person's signed-in sessions, revocable (issue 44, db/people.py)

Revision ID: 0021_person_sessions
Revises: 0020_seat_request_ids
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021_person_sessions"
down_revision = "0020_seat_request_ids"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "person_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("token_sha256", sa.String(length=64), nullable=False, unique=True),
        sa.Column("person_id", sa.Integer(), sa.ForeignKey("people.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_person_sessions_person_id", "person_sessions", ["person_id"])


def downgrade() -> None:
    op.drop_index("ix_person_sessions_person_id", table_name="person_sessions")
    op.drop_table("person_sessions")
