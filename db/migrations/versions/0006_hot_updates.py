"""matches: index the running state alone, so a move's update of the row is a HOT update

Every action rewrites its match row (seq, clocks, deadline). With `deadline_at` in an index,
PostgreSQL had to add an entry to each of the table's four indexes per action; indexing `state`
alone (which changes once, when the match ends) lets it update the row in place on its page
(a heap-only tuple), and a fill factor of 80 leaves the room for it. The referee's look for
overdue matches reads the running ones through the state index.

Revision ID: 0006_hot_updates
Revises: 0005_ops
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0006_hot_updates"
down_revision = "0005_ops"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_state_deadline")
        batch_op.create_index("ix_matches_state", ["state"], unique=False)
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE matches SET (fillfactor = 80)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE matches RESET (fillfactor)")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index("ix_matches_state")
        batch_op.create_index("ix_matches_state_deadline", ["state", "deadline_at"],
                              unique=False)
