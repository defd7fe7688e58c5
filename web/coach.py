"""Hints, reviews and exercises for people (issue 31; docs/web.md "Hints, reviews and
exercises"). The web writes nothing: each answer comes from the engine service's PeopleService
(Hint, RequestReview, ListExercises, GetExercise, SolveExercise) for the session's person; the
review reads the stored analysis from the database as the replay page does.

- `GET /api/table/<id>/hint`: the values of the person's legal actions now (casual games only:
  the service refuses a rated one, 409 naming the rule).
- `POST /review/<id>` asks for the analysis of the person's finished match (the path of the
  dashboard's "analyse" button: a worker on the batch queue); `/review/<id>` shows each hand's
  decisions with their loss and the better action (the replay page's analysis part).
- `/exercises`, `/exercises/<id>`: the exercises easiest first with the person's solved count;
  one exercise drawn from its seat's observation, each legal action a button whose click is an
  intent (`POST /api/exercises/<id>/solve`) the service checks.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, redirect, render_template, request, url_for

from web import analyses
from web.accounts import current, person_id
from web.db import sessions
from web.params import ident, json_body
from web.queries import Invalid
from web.service_client import client
from web.tableview import action_text, card_key, trick_json

bp = Blueprint("coach", __name__)


def values_json(actions: Any) -> list[dict[str, Any]]:
    return [{"action": a.action, "value": round(a.value, 4), "exact": a.exact,
             "se": None if a.exact else round(a.se, 4), "loss": round(a.loss, 4)}
            for a in actions]


@bp.get("/api/table/<match_id>/hint")
def hint(match_id: str) -> Any:
    from bummerl.v1 import people_pb2

    answer = client().call("Hint", people_pb2.HintRequest(
        person_id=person_id(), match_id=ident(match_id, "match id")))
    return jsonify({"seq": answer.seq, "best": answer.best, "method": answer.method,
                    "basis": answer.basis, "actions": values_json(answer.actions)})


@bp.post("/review/<match_id>")
def ask_review(match_id: str) -> Any:
    from bummerl.v1 import people_pb2

    number = ident(match_id, "match id")
    refused = analyses.too_many(person_id())  # the analyse button's limit: one count
    if refused is not None:
        return refused
    client().call("RequestReview", people_pb2.RequestReviewRequest(person_id=person_id(),
                                                                   match_id=number))
    return redirect(url_for("coach.review", match_id=number))


@bp.get("/review/<match_id>")
def review(match_id: str) -> Any:
    """The person's finished match with each decision's loss and the better action."""
    from bummerl.v1 import people_pb2

    number = ident(match_id, "match id")
    table = client().call("GetTable", people_pb2.GetTableRequest(
        person_id=person_id(), match_id=number)).table  # only a seat's person: 403 otherwise
    names = list(table.names)
    found = analyses.of_match(sessions(), number)
    hands: list[dict[str, Any]] = []
    mine = {"exact": 0.0, "estimate": 0.0}
    if found is not None and found["document"] is not None:
        doc = found["document"]
        numbers = sorted({h.number for h in table.hands} | {d["hand"] for d in doc["decisions"]})
        for number_ in numbers:  # a resigned match's last hand too
            decisions = [{**d, "who": names[d["seat"]]} for d in doc["decisions"]
                         if d["hand"] == number_]
            hands.append({"number": number_, "analysis": {
                "state": found["state"], "error": None, "decisions": decisions,
                "budget": doc["budget"]}})
        for part in ("exact", "estimate"):
            mine[part] = doc["seats"][table.seat][part]["loss"]
    return render_template("review.html", match_id=number, seat=table.seat, names=names,
                           over=table.seed_revealed, found=found, hands=hands, mine=mine)


@bp.get("/exercises")
def exercises() -> Any:
    from bummerl.v1 import people_pb2

    if current() is None:
        return redirect(url_for("play.index"))
    level = request.args.get("difficulty", "0")
    if level not in ("0", "1", "2", "3", "4", "5"):
        raise Invalid(f"difficulty must be 1 to 5 (or 0 for all), not {level[:10]!r}")
    answer = client().call("ListExercises", people_pb2.ListExercisesRequest(
        person_id=person_id(), difficulty=int(level)))
    return render_template("exercises.html", exercises=answer.exercises, solved=answer.solved,
                           total=answer.total, difficulty=int(level))


@bp.get("/exercises/<exercise_id>")
def exercise(exercise_id: str) -> Any:
    from bummerl.v1 import people_pb2

    number = ident(exercise_id, "exercise id")
    answer = client().call("GetExercise", people_pb2.GetExerciseRequest(
        person_id=person_id(), exercise_id=number))
    return render_template("exercise.html", exercise=answer.exercise,
                           match_id=answer.match_id, state=exercise_json(answer))


def exercise_json(answer: Any) -> dict[str, Any]:
    """What the exercise page draws: the seat's observation (the service's), nothing more."""
    obs, e = answer.observation, answer.exercise
    trump = obs.trump_suit
    return {
        "exercise_id": e.exercise_id, "difficulty": e.difficulty, "kind": e.kind,
        "solved": e.solved, "seat": obs.seat, "hand": sorted(obs.hand, key=card_key),
        "legal": [action_text(a) for a in obs.legal_actions],
        "trump_suit": trump, "trump_card": obs.trump_card or None,
        "trump_face_up": obs.trump_card_face_up, "stock_size": obs.stock_size,
        "closed_by": None if obs.closed_by < 0 else obs.closed_by,
        "lead_card": obs.lead_card or None, "leader": obs.leader,
        "tricks": [trick_json(t) for t in obs.tricks],
        "marriages": [{"seat": x.seat, "suit": x.suit, "points": 40 if x.suit == trump else 20}
                      for x in obs.marriages],
        "points": obs.points, "pending_points": obs.pending_points,
        "tricks_won": obs.tricks_won, "opponent_tricks_won": obs.opponent_tricks_won,
        "opponent_hand_size": obs.opponent_hand_size,
        "solve_url": url_for("coach.solve", exercise_id=e.exercise_id),
    }


@bp.post("/api/exercises/<exercise_id>/solve")
def solve(exercise_id: str) -> Any:
    from bummerl.v1 import people_pb2

    number = ident(exercise_id, "exercise id")
    body = json_body()
    action = body.get("action")
    if not isinstance(action, str) or not action or len(action) > 20:
        raise Invalid('the body must hold "action": the action\'s text, e.g. "play TH"')
    answer = client().call("SolveExercise", people_pb2.SolveExerciseRequest(
        person_id=person_id(), exercise_id=number, action=action))
    return jsonify({"correct": answer.correct, "loss": round(answer.loss, 4),
                    "answer": answer.answer or None, "actions": values_json(answer.actions),
                    "solved": answer.solved, "first_solve": answer.first_solve})
