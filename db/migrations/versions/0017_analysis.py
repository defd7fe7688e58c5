"""analyses: the analysis of a finished match (every decision valued, docs/analysis.md),
requested by the dashboard or by every match's end (BUMMERL_ANALYSE_ALL), computed by the
workers' `bummerl.analyse` task

Revision ID: 0017_analysis
Revises: 0013_bot_versions
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017_analysis"
down_revision = "0016_people"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "analyses",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("analysis_version", sa.Integer(), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("document", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"],
                                name=op.f("fk_analyses_match_id_matches")),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_analyses")),
    )
    op.create_index("ix_analyses_state", "analyses", ["state"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_analyses_state", table_name="analyses")
    op.drop_table("analyses")
