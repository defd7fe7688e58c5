"""events: duplicate pairs, tournaments (entries, byes), and the pair and event of a match

`duplicate_pairs` holds the pairings that events play as two matches from one seed with the
seats swapped (tournaments, version tests); `tournaments`, `tournament_entries` and
`tournament_byes` the tournaments. A match records the pair it is a leg of (`pair_id`,
`pair_leg`, unique together: a repeated CreateMatch finds the match it made) and its event and
round (`event_id`, `event_round`).

Revision ID: 0010_events
Revises: 0009_records
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_events"
down_revision = "0009_records"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("pair_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("pair_leg", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("event_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("event_round", sa.Integer(), nullable=True))
        batch_op.create_index("ix_matches_pair", ["pair_id", "pair_leg"], unique=True)
    op.create_table(
        "duplicate_pairs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=12), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=True),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("bot_a_id", sa.Integer(), nullable=False),
        sa.Column("bot_b_id", sa.Integer(), nullable=False),
        sa.Column("version_a", sa.String(length=100), nullable=True),
        sa.Column("version_b", sa.String(length=100), nullable=True),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("match_a_id", sa.Integer(), nullable=True),
        sa.Column("match_b_id", sa.Integer(), nullable=True),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("grace_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("points_a", sa.Integer(), nullable=True),
        sa.Column("points_b", sa.Integer(), nullable=True),
        sa.Column("game_points_a", sa.Integer(), nullable=True),
        sa.Column("game_points_b", sa.Integer(), nullable=True),
        sa.Column("forfeit", sa.String(length=4), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["bot_a_id"], ["bots.id"],
                                name=op.f("fk_duplicate_pairs_bot_a_id_bots")),
        sa.ForeignKeyConstraint(["bot_b_id"], ["bots.id"],
                                name=op.f("fk_duplicate_pairs_bot_b_id_bots")),
        sa.ForeignKeyConstraint(["match_a_id"], ["matches.id"],
                                name=op.f("fk_duplicate_pairs_match_a_id_matches"),
                                ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["match_b_id"], ["matches.id"],
                                name=op.f("fk_duplicate_pairs_match_b_id_matches"),
                                ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_duplicate_pairs")),
        sa.UniqueConstraint("owner", "owner_id", "round", "board",
                            name=op.f("uq_duplicate_pairs_owner_owner_id_round_board")),
    )
    op.create_index("ix_duplicate_pairs_owner_state", "duplicate_pairs",
                    ["owner", "owner_id", "state"], unique=False)
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("state", sa.String(length=10), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("paired_rounds", sa.Integer(), nullable=False),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=False),
        sa.Column("bank_ms", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("grace_s", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("cancelled_reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index(op.f("ix_tournaments_state"), "tournaments", ["state"], unique=False)
    op.create_table(
        "tournament_entries",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("withdrawn_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"],
                                name=op.f("fk_tournament_entries_bot_id_bots")),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_tournament_entries_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", "bot_id", name=op.f("pk_tournament_entries")),
    )
    op.create_table(
        "tournament_byes",
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"],
                                name=op.f("fk_tournament_byes_bot_id_bots")),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"],
                                name=op.f("fk_tournament_byes_tournament_id_tournaments"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tournament_id", "round", name=op.f("pk_tournament_byes")),
    )


def downgrade() -> None:
    op.drop_table("tournament_byes")
    op.drop_table("tournament_entries")
    op.drop_index(op.f("ix_tournaments_state"), table_name="tournaments")
    op.drop_table("tournaments")
    op.drop_index("ix_duplicate_pairs_owner_state", table_name="duplicate_pairs")
    op.drop_table("duplicate_pairs")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_pair")
        batch_op.drop_column("event_round")
        batch_op.drop_column("event_id")
        batch_op.drop_column("pair_leg")
        batch_op.drop_column("pair_id")
