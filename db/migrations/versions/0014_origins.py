"""origins: every match records where it came from; old rows backfilled, the column not null

Until now only challenges and the legs of duplicate pairs set `matches.origin`; ladder matches
and CreateMatch by an operator left it null. The rule for a row without an origin, in order:

1. a leg of a duplicate pair (`pair_id` set): its pair's owner, 'tournament' or 'test'
   (events have made their matches only as pairs since they exist: 0010_events);
2. a match the ladder recorded (a row in `ladder_matches`): 'ladder';
3. anything else: 'manual' (CreateMatch by an operator; the only other way a match was made).

A row's origin once set is kept. Then the column is NOT NULL: every path that creates a match
sets it (services.core.matches.create_matches).

Revision ID: 0014_origins
Revises: 0013_bot_versions
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_origins"
down_revision = "0013_bot_versions"
branch_labels = None
depends_on = None

BACKFILL = (
    "UPDATE matches SET origin = (SELECT duplicate_pairs.owner FROM duplicate_pairs "
    "WHERE duplicate_pairs.id = matches.pair_id) "
    "WHERE origin IS NULL AND pair_id IS NOT NULL",
    "UPDATE matches SET origin = 'ladder' WHERE origin IS NULL "
    "AND id IN (SELECT match_id FROM ladder_matches)",
    "UPDATE matches SET origin = 'manual' WHERE origin IS NULL",
)


def upgrade() -> None:
    for statement in BACKFILL:
        op.execute(statement)
    with op.batch_alter_table("matches") as batch:
        batch.alter_column("origin", existing_type=sa.String(length=12), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.alter_column("origin", existing_type=sa.String(length=12), nullable=True)
