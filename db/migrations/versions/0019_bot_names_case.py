"""bots: names unique whatever their case (issue 44), as people's are

A unique index on lower(name). Bots whose names differ only in case (`MyBot` and `mybot`) are
renamed first: the oldest (lowest id) keeps its name, each later one becomes `<name>-<id>`
(cut to 40 characters), which no bot can already hold case-insensitively. A renamed bot keeps
its token, id, matches and ratings; each rename is logged (alembic's logger) and printed.

Revision ID: 0019_bot_names_case
Revises: 0018_exercises
Create Date: 2026-12-07
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

revision = "0019_bot_names_case"
down_revision = "0018_exercises"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")
BOTS = sa.table("bots", sa.column("id", sa.Integer), sa.column("name", sa.String))


def renames(rows: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """(id, old name, new name) of each bot to rename so that names are unique in lower case:
    the lowest id of each case-insensitive name keeps it."""
    taken = {name.lower() for _, name in rows}
    seen: set[str] = set()
    out = []
    for bot_id, name in sorted(rows):
        if name.lower() not in seen:
            seen.add(name.lower())
            continue
        suffix = f"-{bot_id}"
        new = name[:40 - len(suffix)] + suffix
        while new.lower() in taken:  # only if someone chose exactly that name: lengthen it
            suffix += "x"
            new = name[:40 - len(suffix)] + suffix
        taken.add(new.lower())
        out.append((bot_id, name, new))
    return out


def upgrade() -> None:
    connection = op.get_bind()
    rows = [(int(i), str(n)) for i, n in connection.execute(sa.select(BOTS.c.id, BOTS.c.name))]
    for bot_id, old, new in renames(rows):
        connection.execute(BOTS.update().where(BOTS.c.id == bot_id).values(name=new))
        message = (f"bot {bot_id} renamed {old!r} -> {new!r}: bot names are now unique whatever "
                   "their case, and an older bot holds that name")
        log.warning(message)
        print(f"0019_bot_names_case: {message}")
    op.create_index("uq_bots_name_lower", "bots", [sa.text("lower(name)")], unique=True)


def downgrade() -> None:
    op.drop_index("uq_bots_name_lower", table_name="bots")
