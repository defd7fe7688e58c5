"""people: persons at the table, their invites and the people's rating pool (issue 30)

`people` (a person and its seat holder, a `bots` row of kind 'person'), `person_invites`,
`people_ratings` (the people's pool: people and the bots that play them), `people_rated`
(each rated game with a person counted once), and `bots.accepts_people` (Hello.accepts_people).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0016_people", "0014_origins"


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("accepts_people", sa.String(length=10), nullable=True))
    op.create_table(
        "people",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(length=20), nullable=False),
        sa.Column("name_key", sa.String(length=20), nullable=True, unique=True),
        sa.Column("password_hash", sa.String(length=255), nullable=True),
        sa.Column("guest", sa.Boolean(), nullable=False),
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id", ondelete="CASCADE"),
                  nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "person_invites",
        sa.Column("code", sa.String(length=40), primary_key=True),
        sa.Column("person_id", sa.Integer(), sa.ForeignKey("people.id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("profile", sa.String(length=10), nullable=False),
        sa.Column("move_ms", sa.Integer(), nullable=True),
        sa.Column("bank_ms", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("accepted_by", sa.Integer(),
                  sa.ForeignKey("people.id", ondelete="SET NULL"), nullable=True),
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id", ondelete="SET NULL"),
                  nullable=True),
    )
    op.create_table(
        "people_ratings",
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "people_rated",
        sa.Column("match_id", sa.Integer(), sa.ForeignKey("matches.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("people_rated")
    op.drop_table("people_ratings")
    op.drop_table("person_invites")
    op.drop_table("people")
    # SQLite drops a plain column in place (3.35+): a batch rebuild of `bots` would DROP the
    # table that every match's foreign keys point at, which fails once matches exist.
    op.drop_column("bots", "accepts_people")
