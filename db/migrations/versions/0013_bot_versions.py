"""ratings: the version of the bot each rating last saw

A bot's ladder rating carries across its versions; a rated match in which the bot ran another
version than the rating last saw widens its sigma once (workers/ladder.py, docs/versions.md).
`ratings.version` holds the version last seen. House bots' ratings start at their strategy
(the version their matches record), so that no house rating is widened by this upgrade.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0013_bot_versions", "0012_history"


def upgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        batch.add_column(sa.Column("version", sa.String(length=100), nullable=True))
    op.execute("UPDATE ratings SET version = (SELECT bots.house_strategy FROM bots "
               "WHERE bots.id = ratings.bot_id AND bots.kind = 'house')")


def downgrade() -> None:
    with op.batch_alter_table("ratings") as batch:
        batch.drop_column("version")
