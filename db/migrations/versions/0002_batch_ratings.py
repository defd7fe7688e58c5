"""batch simulations, ladder ratings

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "simulations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("strategy_a", sa.String(length=40), nullable=False),
        sa.Column("strategy_b", sa.String(length=40), nullable=False),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("deals", sa.Integer(), nullable=False),
        sa.Column("chunk_deals", sa.Integer(), nullable=False),
        sa.Column("sprt_elo0", sa.Float(), nullable=True),
        sa.Column("sprt_elo1", sa.Float(), nullable=True),
        sa.Column("sprt_alpha", sa.Float(), nullable=True),
        sa.Column("sprt_beta", sa.Float(), nullable=True),
        sa.Column("decision", sa.String(length=4), nullable=True),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("deals_done", sa.Integer(), nullable=False),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("progress_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_simulations")),
    )
    op.create_table(
        "ratings",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name=op.f("fk_ratings_bot_id_bots"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("bot_id", "profile", name=op.f("pk_ratings")),
    )
    op.create_table(
        "simulation_chunks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("simulation_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("first_deal", sa.Integer(), nullable=False),
        sa.Column("deals", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("enqueued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("pairs", sa.Integer(), nullable=False),
        sa.Column("net", sa.BigInteger(), nullable=False),
        sa.Column("net_sq", sa.BigInteger(), nullable=False),
        sa.Column("wins_a", sa.Integer(), nullable=False),
        sa.Column("wins_sq", sa.Integer(), nullable=False),
        sa.Column("points_a", sa.Integer(), nullable=False),
        sa.Column("points_b", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["simulation_id"],
            ["simulations.id"],
            name=op.f("fk_simulation_chunks_simulation_id_simulations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_simulation_chunks")),
        sa.UniqueConstraint(
            "simulation_id", "number", name=op.f("uq_simulation_chunks_simulation_id_number")
        ),
    )
    with op.batch_alter_table("simulation_chunks", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_simulation_chunks_simulation_id"), ["simulation_id"], unique=False
        )

    op.create_table(
        "ladder_matches",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["matches.id"],
            name=op.f("fk_ladder_matches_match_id_matches"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_ladder_matches")),
    )
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ladder_matches_profile"), ["profile"], unique=False)
        batch_op.create_index(batch_op.f("ix_ladder_matches_rated_at"), ["rated_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("ladder_matches", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ladder_matches_rated_at"))
        batch_op.drop_index(batch_op.f("ix_ladder_matches_profile"))

    op.drop_table("ladder_matches")
    with op.batch_alter_table("simulation_chunks", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_simulation_chunks_simulation_id"))

    op.drop_table("simulation_chunks")
    op.drop_table("ratings")
    op.drop_table("simulations")
