"""PeopleService's hints, reviews and exercises (issue 31): a thin adapter from the requests to
`services.ops.people_hints`, mixed into `people_servicer.PeopleServicer` (one servicer per
gRPC service), each call checked against the web's token first as the others are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bummerl import wire
from bummerl.v1 import people_pb2

from services.api.servicers import unary
from services.ops import people_hints


def action_values(actions: list[dict[str, Any]]) -> list[people_pb2.ActionValue]:
    return [people_pb2.ActionValue(action=a["action"], value=a["value"] or 0.0,
                                   exact=a["exact"], se=a["se"] or 0.0, loss=a["loss"])
            for a in actions]


def summary_to_pb(view: people_hints.ExerciseView) -> people_pb2.ExerciseSummary:
    e = view.exercise
    return people_pb2.ExerciseSummary(exercise_id=e.id, difficulty=e.difficulty, kind=e.kind,
                                      cards_left=e.cards_left, solved=view.solved)


class HintsMixin:
    """Hint, RequestReview, ListExercises, GetExercise, SolveExercise."""

    sessions: Any  # PeopleServicer's
    _web: Callable[[Any, str], None]  # PeopleServicer's: the web's token checked

    @unary
    def Hint(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "Hint")
        found = people_hints.hint(request.person_id, request.match_id, sessions=self.sessions)
        return people_pb2.HintResponse(
            seq=found.seq, best=found.found["best"], method=found.found["method"],
            basis=found.found["basis"], actions=action_values(found.found["actions"]))

    @unary
    def RequestReview(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "RequestReview")
        state = people_hints.request_review(request.person_id, request.match_id,
                                            sessions=self.sessions)
        return people_pb2.RequestReviewResponse(state=state)

    @unary
    def ListExercises(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "ListExercises")
        views, solved, total = people_hints.list_exercises(
            request.person_id, request.difficulty, request.limit, sessions=self.sessions)
        return people_pb2.ListExercisesResponse(exercises=[summary_to_pb(v) for v in views],
                                                solved=solved, total=total)

    @unary
    def GetExercise(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "GetExercise")
        view, obs = people_hints.get_exercise(request.person_id, request.exercise_id,
                                              sessions=self.sessions)
        return people_pb2.GetExerciseResponse(exercise=summary_to_pb(view),
                                              observation=wire.observation_to_pb(obs),
                                              match_id=view.exercise.match_id)

    @unary
    def SolveExercise(self, request, context):  # type: ignore[no-untyped-def]
        self._web(context, "SolveExercise")
        v = people_hints.solve_exercise(request.person_id, request.exercise_id, request.action,
                                        sessions=self.sessions)
        actions = [] if not v.solved_before else action_values([
            {"action": a, "value": value, "exact": True, "se": None,
             "loss": v.losses.get(a, 0.0)} for a, value in v.values.items()])
        return people_pb2.SolveExerciseResponse(
            correct=v.correct, loss=v.loss, answer=v.answer if v.solved_before else "",
            actions=actions, solved=v.solved_count, first_solve=v.first_solve)
