"""actions.think_ms and the index of finished matches, for match records and their export

`actions.think_ms` keeps each action's think time (from the start of the seat's turn to the
action, in ms), written by the group commit with the action; older actions have none. The index
`ix_matches_finished (finished_at, id)` is the order exports page through (keyset pagination):
`finished_at` is set once per match, so a move's update of the row stays a HOT update.

Revision ID: 0009_records
Revises: 0008_practice
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_records"
down_revision = "0008_practice"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("think_ms", sa.Integer(), nullable=True))
    op.create_index("ix_matches_finished", "matches", ["finished_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_matches_finished", table_name="matches")
    with op.batch_alter_table("actions", schema=None) as batch_op:
        batch_op.drop_column("think_ms")
