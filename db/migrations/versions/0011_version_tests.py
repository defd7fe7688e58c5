"""version tests: `version_tests` (a bot's candidate version against a baseline, played as
duplicate pairs until a paired SPRT decides) and `bot_versions` (the versions each bot's Play
streams said they run, and whether one is connected now)

Revision ID: 0011_version_tests
Revises: 0010_events
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_version_tests"
down_revision = "0010_events"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "version_tests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("candidate_bot_id", sa.Integer(), nullable=False),
        sa.Column("candidate_version", sa.String(length=100), nullable=True),
        sa.Column("baseline_bot_id", sa.Integer(), nullable=False),
        sa.Column("baseline_version", sa.String(length=100), nullable=True),
        sa.Column("elo0", sa.Float(), nullable=True),
        sa.Column("elo1", sa.Float(), nullable=True),
        sa.Column("alpha", sa.Float(), nullable=False),
        sa.Column("beta", sa.Float(), nullable=False),
        sa.Column("max_pairs", sa.Integer(), nullable=True),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("lost_both", sa.Integer(), nullable=False),
        sa.Column("split", sa.Integer(), nullable=False),
        sa.Column("won_both", sa.Integer(), nullable=False),
        sa.Column("forfeited", sa.Integer(), nullable=False),
        sa.Column("voided", sa.Integer(), nullable=False),
        sa.Column("llr", sa.Float(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("wait_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("started_by", sa.String(length=60), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["candidate_bot_id"], ["bots.id"],
                                name=op.f("fk_version_tests_candidate_bot_id_bots")),
        sa.ForeignKeyConstraint(["baseline_bot_id"], ["bots.id"],
                                name=op.f("fk_version_tests_baseline_bot_id_bots")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_version_tests")),
    )
    op.create_index("ix_version_tests_state", "version_tests", ["state"], unique=False)
    op.create_index("ix_version_tests_candidate", "version_tests", ["candidate_bot_id"],
                    unique=False)
    op.create_table(
        "bot_versions",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("open_streams", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"],
                                name=op.f("fk_bot_versions_bot_id_bots"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("bot_id", "version", name=op.f("pk_bot_versions")),
    )


def downgrade() -> None:
    op.drop_table("bot_versions")
    op.drop_index("ix_version_tests_candidate", table_name="version_tests")
    op.drop_index("ix_version_tests_state", table_name="version_tests")
    op.drop_table("version_tests")
