"""Exercises for people (issue 31; docs/analysis.md, "Hints and exercises for people"): positions
cut from real finished matches where exactly one action is right against every hand the opponent
could hold, each solved exactly, and the people who solved them.

- `exercises`: one position (the deciding seat's observation, as JSON: only what that seat
  knew), its one right action (`answer`), what each other action loses (`losses`), a
  `difficulty` from 1 (easy) to 5 and the `kind` (what it is about). Written by the workers'
  cutter (`workers.exercises`, `bummerl exercises cut`), one per (match, seq).
- `exercise_solves`: person P solved exercise E (once: the primary key), written by the engine
  service (PeopleService.SolveExercise), never by the web.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from db.base import Base, utcnow


class Exercise(Base):
    """A position with exactly one right action (see the module's docstring)."""

    __tablename__ = "exercises"
    __table_args__ = (UniqueConstraint("match_id", "seq", name="uq_exercises_match_id_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"))
    seq: Mapped[int] = mapped_column(Integer)  # the seq of the action taken there in the match
    seat: Mapped[int] = mapped_column(Integer)
    observation: Mapped[str] = mapped_column(Text)  # JSON: engine.Observation.to_dict()
    answer: Mapped[str] = mapped_column(String(20))  # engine text of the one right action
    values: Mapped[str] = mapped_column(Text)  # JSON: {action text: mean exact value}
    losses: Mapped[str] = mapped_column(Text)  # JSON: {action text: game points lost}
    taken: Mapped[str] = mapped_column(String(20))  # what the player in the match did
    kind: Mapped[str] = mapped_column(String(40))
    difficulty: Mapped[int] = mapped_column(Integer)  # 1 (easy) .. 5 (hard)
    cards_left: Mapped[int] = mapped_column(Integer)  # cards in the seat's hand
    deals: Mapped[int] = mapped_column(Integer)  # consistent deals, each solved
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ExerciseSolve(Base):
    """Person `person_id` solved exercise `exercise_id` (counted once)."""

    __tablename__ = "exercise_solves"

    person_id: Mapped[int] = mapped_column(ForeignKey("people.id", ondelete="CASCADE"),
                                           primary_key=True)
    exercise_id: Mapped[int] = mapped_column(ForeignKey("exercises.id", ondelete="CASCADE"),
                                             primary_key=True)
    solved_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
