"""operations: bot suspension, rated/origin of matches, refused actions, rating history

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("suspended_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("suspended_reason", sa.Text(), nullable=True))
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rated", sa.Boolean(), nullable=False,
                                      server_default=sa.true()))
        batch_op.add_column(sa.Column("origin", sa.String(length=12), nullable=True))
    op.create_table(
        "refusals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("rule", sa.String(length=10), nullable=True),
        sa.Column("message", sa.String(length=300), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"],
                                name=op.f("fk_refusals_match_id_matches"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_refusals")),
    )
    op.create_index("ix_refusals_match", "refusals", ["match_id", "seq"], unique=False)
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"],
                                name=op.f("fk_rating_history_bot_id_bots"), ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"],
                                name=op.f("fk_rating_history_match_id_matches"),
                                ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_history")),
    )
    op.create_index("ix_rating_history_bot", "rating_history", ["bot_id", "profile", "at"],
                    unique=False)


def downgrade() -> None:
    op.drop_index("ix_rating_history_bot", table_name="rating_history")
    op.drop_table("rating_history")
    op.drop_index("ix_refusals_match", table_name="refusals")
    op.drop_table("refusals")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("origin")
        batch_op.drop_column("rated")
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("suspended_reason")
        batch_op.drop_column("suspended_at")
