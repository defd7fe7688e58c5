"""exercises and exercise_solves: positions with exactly one right action cut from analysed
matches, and who solved them (issue 31, db/exercises.py)

Revision ID: 0018_exercises
Revises: 0017_analysis
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_exercises"
down_revision = "0017_analysis"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "exercises",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("observation", sa.Text(), nullable=False),
        sa.Column("answer", sa.String(length=20), nullable=False),
        sa.Column("values", sa.Text(), nullable=False),
        sa.Column("losses", sa.Text(), nullable=False),
        sa.Column("taken", sa.String(length=20), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("difficulty", sa.Integer(), nullable=False),
        sa.Column("cards_left", sa.Integer(), nullable=False),
        sa.Column("deals", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"],
                                name=op.f("fk_exercises_match_id_matches")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exercises")),
        sa.UniqueConstraint("match_id", "seq", name="uq_exercises_match_id_seq"),
    )
    op.create_table(
        "exercise_solves",
        sa.Column("person_id", sa.Integer(), nullable=False),
        sa.Column("exercise_id", sa.Integer(), nullable=False),
        sa.Column("solved_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["person_id"], ["people.id"], ondelete="CASCADE",
                                name=op.f("fk_exercise_solves_person_id_people")),
        sa.ForeignKeyConstraint(["exercise_id"], ["exercises.id"], ondelete="CASCADE",
                                name=op.f("fk_exercise_solves_exercise_id_exercises")),
        sa.PrimaryKeyConstraint("person_id", "exercise_id", name=op.f("pk_exercise_solves")),
    )


def downgrade() -> None:
    op.drop_table("exercise_solves")
    op.drop_table("exercises")
