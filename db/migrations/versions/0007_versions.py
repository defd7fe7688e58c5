"""bots and matches: the version a bot runs, and the version each seat of a match ran

A bot says which version it runs when it connects (`Hello.version`): `bots.version` holds the
newest one, and a match records each seat's in `matches.version0` / `version1`. All nullable:
older bots, house bots and matches made before this say none.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0007_versions", "0006_hot_updates"
COLUMNS = {"bots": ["version"], "matches": ["version0", "version1"]}


def upgrade() -> None:
    for table, names in COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            for name in names:
                batch.add_column(sa.Column(name, sa.String(length=100), nullable=True))


def downgrade() -> None:
    for table, names in COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            for name in reversed(names):
                batch.drop_column(name)
