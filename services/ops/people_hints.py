"""Hints, reviews and exercises for people (issue 31; docs/analysis.md "Hints and exercises for
people"): plain functions under PeopleService's Hint, RequestReview, ListExercises,
GetExercise and SolveExercise (`services.api.people_hints_servicer`).

- A hint is the analysis of the live position from the person's seat only: the seat's
  observation (`matches.get_observation`, as the table's) given to the registered position
  analyst (`services.core.analysts`). Casual games only: a rated game is played unaided.
- A review asks for the finished match's analysis on the path of the dashboard's "analyse"
  button (`admin.request_analysis`: a request row, the workers' `bummerl.analyse` task).
- Exercises are rows of `exercises` (cut by the workers); an answer is checked here against the
  stored one; a person's solves are rows of `exercise_solves`, written here and counted once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

import engine
from db.exercises import Exercise, ExerciseSolve
from db.models import FINISHED, RUNNING
from services.core import analysts, matches
from services.core.connections import factory_of, writing
from services.core.errors import FailedPrecondition, InvalidArgument, NotFound, quote
from services.ops import admin
from services.ops.people import _person, _seat_of

HINTS_RULE = ("hints are for casual games only: a rated game is played unaided "
              "(docs/analysis.md, hints and exercises for people)")
LIMIT, MAX_LIMIT = 50, 200


@dataclass(frozen=True)
class Hint:
    seq: int
    found: dict[str, Any]  # analysis.position.hint's answer


def hint(person_id: int, match_id: int, *, sessions: sessionmaker[Session] | None = None
         ) -> Hint:
    """The values of the legal actions of person `person_id`'s seat in match `match_id` now."""
    with factory_of(sessions)() as s:
        bot, m, seat = _seat_of(s, person_id, match_id)
        if m.rated:
            raise FailedPrecondition(f"no hint in match {match_id}: it is rated, and {HINTS_RULE}")
        if m.state != RUNNING:
            raise FailedPrecondition(f"match {match_id} is over: its review has the analysis")
    obs, m = matches.get_observation(match_id, seat, bot_id=bot.id, sessions=sessions)
    if obs.to_act != seat or not obs.legal_actions:
        raise FailedPrecondition(f"it is not your turn in match {match_id}: a hint is for "
                                 "your own decision")
    try:
        found = analysts.value_position(obs)
    except ValueError as e:
        raise FailedPrecondition(str(e)) from None
    return Hint(m.seq, found)


def request_review(person_id: int, match_id: int, *,
                   sessions: sessionmaker[Session] | None = None) -> str:
    """Ask for the analysis of person `person_id`'s finished match; its state."""
    with factory_of(sessions)() as s:
        _, m, _ = _seat_of(s, person_id, match_id)
        if m.state != FINISHED:
            raise FailedPrecondition(f"match {match_id} is not finished: it is reviewed once "
                                     "it is over")
    return admin.request_analysis(match_id, sessions=sessions)


# --- exercises -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExerciseView:
    exercise: Exercise
    solved: bool


def _solved_ids(s: Session, person_id: int) -> set[int]:
    return set(s.scalars(select(ExerciseSolve.exercise_id)
                         .where(ExerciseSolve.person_id == person_id)))


def list_exercises(person_id: int, difficulty: int = 0, limit: int = 0, *,
                   sessions: sessionmaker[Session] | None = None
                   ) -> tuple[list[ExerciseView], int, int]:
    """Exercises easiest first (the person's unsolved ones before their solved ones at each
    difficulty), how many the person solved, how many there are."""
    if not 0 <= difficulty <= 5:
        raise InvalidArgument(f"bad difficulty {difficulty}: 1 to 5, or 0 for all",
                              field="difficulty")
    limit = min(limit or LIMIT, MAX_LIMIT)
    with factory_of(sessions)() as s:
        _person(s, person_id)
        solved = _solved_ids(s, person_id)
        query = select(Exercise).order_by(Exercise.difficulty, Exercise.id)
        if difficulty:
            query = query.where(Exercise.difficulty == difficulty)
        rows = list(s.scalars(query.limit(limit + len(solved))))
        rows.sort(key=lambda e: (e.difficulty, e.id in solved, e.id))
        total = s.scalar(select(func.count()).select_from(Exercise)) or 0
        return [ExerciseView(e, e.id in solved) for e in rows[:limit]], len(solved), total


def _exercise(s: Session, exercise_id: int) -> Exercise:
    row = s.get(Exercise, exercise_id)
    if row is None:
        raise NotFound(f"no exercise with id {exercise_id}")
    return row


def observation_of(row: Exercise) -> engine.Observation:
    return engine.Observation.from_dict(json.loads(row.observation))


def get_exercise(person_id: int, exercise_id: int, *,
                 sessions: sessionmaker[Session] | None = None
                 ) -> tuple[ExerciseView, engine.Observation]:
    with factory_of(sessions)() as s:
        _person(s, person_id)
        row = _exercise(s, exercise_id)
        return ExerciseView(row, exercise_id in _solved_ids(s, person_id)), observation_of(row)


@dataclass(frozen=True)
class Verdict:
    correct: bool
    loss: float
    solved_before: bool  # solved (now or before): the answer may be shown
    first_solve: bool
    solved_count: int
    answer: str
    values: dict[str, float]
    losses: dict[str, float]


def solve_exercise(person_id: int, exercise_id: int, action: str, *,
                   sessions: sessionmaker[Session] | None = None) -> Verdict:
    """Check `action` against exercise `exercise_id`; a right one is counted once."""
    factory = factory_of(sessions)
    with factory() as s:
        _person(s, person_id)
        row = _exercise(s, exercise_id)
        obs = observation_of(row)
        try:
            chosen = engine.Action.from_text(action)
        except ValueError:
            raise InvalidArgument(f"bad action {quote(action)}: e.g. 'play TH', 'close'",
                                  field="action") from None
        if chosen not in obs.legal_actions:
            raise InvalidArgument(f"{quote(action)} is not legal in exercise {exercise_id}: "
                                  f"{', '.join(str(a) for a in obs.legal_actions)}",
                                  field="action")
        losses = json.loads(row.losses)
        values = json.loads(row.values)
        answer = row.answer
        before = exercise_id in _solved_ids(s, person_id)
    correct = str(chosen) == answer
    first = False
    if correct and not before:
        try:
            with factory() as s, writing(s), s.begin():
                s.add(ExerciseSolve(person_id=person_id, exercise_id=exercise_id))
            first = True
        except IntegrityError:  # solved at the same moment in another tab: counted once
            first = False
    with factory() as s:
        count = s.scalar(select(func.count()).select_from(ExerciseSolve)
                         .where(ExerciseSolve.person_id == person_id)) or 0
    return Verdict(correct, 0.0 if correct else float(losses[str(chosen)]),
                   correct or before, first, count, answer, values, losses)
