"""history at scale: indexes for the pages that read a long history, and pruned action logs

- `ix_matches_bot0` / `ix_matches_bot1` become (bot, id): a bot's newest matches are a walk
  down the index (its move times, the house bots' last moves), not a scan of its history.
- `ix_rating_history_profile_at (profile, at)`: the standings' change over the last day reads
  the day's rows only.
- `ix_ladder_matches_created_at`, `ix_refusals_created`: the health page's "last ladder match"
  and "refused in the last hour" read the newest rows only.
- `matches.actions_pruned_at`, `matches.actions_archive` and the table `actions_archive`: the
  action logs of old finished matches that `bummerl db prune` moved out of `actions` (to the
  archive table, or to match records in files); the match, its hands and its ratings stay.

None of these columns is changed by a move: a move's update of its match row stays HOT.

Revision ID: 0012_history
Revises: 0011_version_tests
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_history"
down_revision = "0011_version_tests"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("actions_pruned_at", sa.DateTime(timezone=True),
                                      nullable=True))
        batch_op.add_column(sa.Column("actions_archive", sa.String(length=10), nullable=True))
        batch_op.drop_index("ix_matches_bot0")
        batch_op.drop_index("ix_matches_bot1")
        batch_op.create_index("ix_matches_bot0", ["bot0_id", "id"])
        batch_op.create_index("ix_matches_bot1", ["bot1_id", "id"])
    op.create_index("ix_rating_history_profile_at", "rating_history", ["profile", "at"])
    op.create_index("ix_ladder_matches_created_at", "ladder_matches", ["created_at"])
    op.create_index("ix_refusals_created", "refusals", ["created_at"])
    op.create_table(
        "actions_archive",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("think_ms", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"],
                                name="fk_actions_archive_match_id_matches", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_actions_archive"),
        sa.UniqueConstraint("match_id", "seq", name="uq_actions_archive_match_id_seq"),
    )


def downgrade() -> None:
    op.drop_table("actions_archive")
    op.drop_index("ix_refusals_created", table_name="refusals")
    op.drop_index("ix_ladder_matches_created_at", table_name="ladder_matches")
    op.drop_index("ix_rating_history_profile_at", table_name="rating_history")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_bot1")
        batch_op.drop_index("ix_matches_bot0")
        batch_op.create_index("ix_matches_bot0", ["bot0_id"])
        batch_op.create_index("ix_matches_bot1", ["bot1_id"])
        batch_op.drop_column("actions_archive")
        batch_op.drop_column("actions_pruned_at")
