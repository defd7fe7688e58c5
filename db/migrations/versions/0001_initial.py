"""initial: bots, matches, hands, actions

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-29 11:55:10.343356
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("house_strategy", sa.String(length=40), nullable=True),
        sa.Column("token_hash", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bots")),
        sa.UniqueConstraint("name", name=op.f("uq_bots_name")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_bots_token_hash")),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot0_id", sa.Integer(), nullable=False),
        sa.Column("bot1_id", sa.Integer(), nullable=False),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("to_act", sa.Integer(), nullable=True),
        sa.Column("hand_number", sa.Integer(), nullable=False),
        sa.Column("counter0", sa.Integer(), nullable=False),
        sa.Column("counter1", sa.Integer(), nullable=False),
        sa.Column("winner", sa.Integer(), nullable=True),
        sa.Column("schneider", sa.Boolean(), nullable=False),
        sa.Column("end_reason", sa.String(length=20), nullable=True),
        sa.Column("end_detail", sa.Text(), nullable=True),
        sa.Column("forfeit_seat", sa.Integer(), nullable=True),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("max_illegal", sa.Integer(), nullable=False),
        sa.Column("bank0_ms", sa.Integer(), nullable=False),
        sa.Column("bank1_ms", sa.Integer(), nullable=False),
        sa.Column("illegal0", sa.Integer(), nullable=False),
        sa.Column("illegal1", sa.Integer(), nullable=False),
        sa.Column("turn_started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("deadline_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["bot0_id"], ["bots.id"], name=op.f("fk_matches_bot0_id_bots")),
        sa.ForeignKeyConstraint(["bot1_id"], ["bots.id"], name=op.f("fk_matches_bot1_id_bots")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_matches")),
    )
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.create_index("ix_matches_bot0", ["bot0_id"], unique=False)
        batch_op.create_index("ix_matches_bot1", ["bot1_id"], unique=False)
        batch_op.create_index("ix_matches_state_deadline", ["state", "deadline_at"], unique=False)

    op.create_table(
        "actions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["matches.id"],
            name=op.f("fk_actions_match_id_matches"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_actions")),
        sa.UniqueConstraint("match_id", "seq", name=op.f("uq_actions_match_id_seq")),
    )
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.create_index("ix_actions_request", ["match_id", "request_id"], unique=True)

    op.create_table(
        "hands",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("dealer", sa.Integer(), nullable=False),
        sa.Column("first_seq", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=True),
        sa.Column("winner", sa.Integer(), nullable=True),
        sa.Column("game_points", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(length=20), nullable=True),
        sa.Column("points0", sa.Integer(), nullable=True),
        sa.Column("points1", sa.Integer(), nullable=True),
        sa.Column("tricks0", sa.Integer(), nullable=True),
        sa.Column("tricks1", sa.Integer(), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_hands_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hands")),
        sa.UniqueConstraint("match_id", "number", name=op.f("uq_hands_match_id_number")),
    )


def downgrade() -> None:
    op.drop_table("hands")
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.drop_index("ix_actions_request")

    op.drop_table("actions")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_state_deadline")
        batch_op.drop_index("ix_matches_bot1")
        batch_op.drop_index("ix_matches_bot0")

    op.drop_table("matches")
    op.drop_table("bots")
