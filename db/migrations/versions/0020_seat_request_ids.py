"""a request id is its seat's own: the unique index of the action log's request ids becomes
(match_id, seat, request_id) instead of (match_id, request_id) (issue 44)

Keyed by the match alone, a seat could take the id the other seat would use next (the house
bots' ids were `house:<match>:<seq>`) and have that seat's move refused until it forfeited on
time. Every row the old index allowed is allowed by the new one, so the upgrade changes no data.
The downgrade puts the old index back: where both seats of a match used the same id, the later
action's request id is cleared first (that action stays in the log; only a retry of it would no
longer be recognised as one).

On PostgreSQL the index is rebuilt in the migration's transaction: writes to `actions` wait
while it builds (run it with the service stopped, as every migration).

Revision ID: 0020_seat_request_ids
Revises: 0019_bot_names_case
Create Date: 2026-12-07
"""

from __future__ import annotations

from alembic import op

revision = "0020_seat_request_ids"
down_revision = "0019_bot_names_case"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_actions_request", table_name="actions")
    op.create_index("ix_actions_request", "actions", ["match_id", "seat", "request_id"],
                    unique=True)


def downgrade() -> None:
    op.execute(
        "UPDATE actions SET request_id = NULL WHERE request_id IS NOT NULL AND EXISTS ("
        "SELECT 1 FROM actions AS earlier WHERE earlier.match_id = actions.match_id "
        "AND earlier.request_id = actions.request_id AND earlier.seq < actions.seq)")
    op.drop_index("ix_actions_request", table_name="actions")
    op.create_index("ix_actions_request", "actions", ["match_id", "request_id"], unique=True)
