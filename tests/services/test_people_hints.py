"""Hints, reviews and exercises for people (issue 31) on a real service (SQLite and PostgreSQL):
a hint in a casual game gives every legal action's value from the seat's observation; it is
refused in a rated game (the rule named) and at another person's table; a review asks for the
finished match's analysis; exercises cut from an analysed match are answered through the
service, a right answer counted once, a wrong one not, an illegal one refused."""

from __future__ import annotations

import random
import time

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import common_pb2, match_pb2, people_pb2
from exercisekit import with_exercises
from peoplekit import WEB, code_of, house_bot, people_service
from sqlalchemy import select

import engine
from analysis.position import hint
from db.analyses import REQUESTED, Analysis
from db.exercises import Exercise, ExerciseSolve
from db.models import Match
from services.core import analysts, hooks
from workers.exercises import cut_match


@pytest.fixture
def people(database, monkeypatch):
    monkeypatch.setattr(analysts, "position", [hint])  # what workers.hooks:install registers
    with people_service(database, monkeypatch) as p:
        yield p


def start(people, person_id: int, rated: bool = False) -> people_pb2.StartGameResponse:  # type: ignore[no-untyped-def]
    return people.stub.StartGame(people_pb2.StartGameRequest(
        person_id=person_id, opponent="house-random", rated=rated,
        profile=common_pb2.PROFILE_SOFT), metadata=WEB)


def ask_hint(people, person_id: int, match_id: int) -> people_pb2.HintResponse:  # type: ignore[no-untyped-def]
    return people.stub.Hint(people_pb2.HintRequest(person_id=person_id, match_id=match_id),
                            metadata=WEB)


def test_a_hint_values_every_legal_action_from_the_seats_observation(people):
    house_bot(people.service.sessions)
    gus = people.guest("gus")
    match_id = start(people, gus.person_id).match.match_id
    rng = random.Random(3)
    hinted = 0
    table = people.my_turn(gus.person_id, match_id)
    while table.match.state == match_pb2.MATCH_STATE_RUNNING and hinted < 4:
        obs = wire.observation_from_pb(table.observation)
        legal = [str(a) for a in obs.legal_actions]
        reply = ask_hint(people, gus.person_id, match_id)
        assert reply.seq == table.seq
        assert [a.action for a in reply.actions] == legal and reply.best in legal
        if len(legal) > 1:  # the same values the analysis gives the seat's observation
            found = hint(obs)
            assert reply.best == found["best"] and reply.method == found["method"]
            assert [round(a.value, 4) for a in reply.actions] == \
                [a["value"] for a in found["actions"]]
            best = next(a for a in reply.actions if a.action == reply.best)
            assert best.loss == 0 and all(a.loss >= 0 for a in reply.actions)
            assert all(a.se == 0 for a in reply.actions if a.exact)
            hinted += 1
        action = rng.choice([a for a in legal if a != "claim"] or legal)
        people.act(gus.person_id, table, action)
        table = people.my_turn(gus.person_id, match_id)
    assert hinted >= 2


def test_a_hint_is_refused_in_a_rated_game_and_at_another_persons_table(people):
    house_bot(people.service.sessions)
    alice, mallory = people.register("alice"), people.guest("mallory")
    rated = start(people, alice.person_id, rated=True).match.match_id
    people.my_turn(alice.person_id, rated)
    with pytest.raises(grpc.RpcError) as caught:
        ask_hint(people, alice.person_id, rated)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "rated" in caught.value.details() and "casual games only" in caught.value.details()
    casual = start(people, alice.person_id).match.match_id
    people.my_turn(alice.person_id, casual)
    assert code_of(lambda: ask_hint(people, mallory.person_id, casual)) == \
        grpc.StatusCode.PERMISSION_DENIED
    assert code_of(lambda: people.stub.Hint(people_pb2.HintRequest(
        person_id=alice.person_id, match_id=casual))) == grpc.StatusCode.UNAUTHENTICATED
    assert ask_hint(people, alice.person_id, casual).best  # the person's own casual table


def test_without_an_analyst_a_hint_is_unavailable_and_says_why(people, monkeypatch):
    house_bot(people.service.sessions)
    gus = people.guest("gus")
    match_id = start(people, gus.person_id).match.match_id
    people.my_turn(gus.person_id, match_id)
    monkeypatch.setattr(analysts, "position", [])
    monkeypatch.setattr(analysts, "_cache", type(analysts._cache)())
    with pytest.raises(grpc.RpcError) as caught:
        ask_hint(people, gus.person_id, match_id)
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "workers.hooks:install" in caught.value.details()


def analysed(people, count: int) -> int:  # type: ignore[no-untyped-def]
    """Analysed matches and their exercises; cutting again adds nothing."""
    sessions = people.service.sessions
    cut = with_exercises(sessions, count)
    with sessions() as s:
        ids = set(s.scalars(select(Exercise.match_id)))
    assert all(cut_match(match_id, sessions) == 0 for match_id in ids)
    return cut


def test_exercises_are_solved_through_the_service_and_counted_once(people):
    gus, ann = people.guest("gus"), people.guest("ann")
    assert analysed(people, 6) >= 1
    listed = people.stub.ListExercises(people_pb2.ListExercisesRequest(
        person_id=gus.person_id), metadata=WEB)
    assert listed.total >= 1 and listed.solved == 0
    assert [e.difficulty for e in listed.exercises] == sorted(e.difficulty for e in
                                                              listed.exercises)
    summary = listed.exercises[0]
    got = people.stub.GetExercise(people_pb2.GetExerciseRequest(
        person_id=gus.person_id, exercise_id=summary.exercise_id), metadata=WEB)
    with people.service.sessions() as s:
        row = s.get(Exercise, summary.exercise_id)
        answer, match_id = row.answer, row.match_id
    obs = wire.observation_from_pb(got.observation)
    assert got.match_id == match_id and answer in [str(a) for a in obs.legal_actions]
    assert answer not in str(got.exercise)  # the list and the position never hold the answer

    def solve(person, action: str) -> people_pb2.SolveExerciseResponse:  # type: ignore[no-untyped-def]
        return people.stub.SolveExercise(people_pb2.SolveExerciseRequest(
            person_id=person.person_id, exercise_id=summary.exercise_id, action=action),
            metadata=WEB)

    wrong = next(str(a) for a in obs.legal_actions if str(a) != answer)
    miss = solve(gus, wrong)
    assert not miss.correct and miss.loss > 0 and miss.answer == "" and miss.solved == 0
    first = solve(gus, answer)
    assert first.correct and first.first_solve and first.solved == 1 and first.answer == answer
    assert {a.action for a in first.actions} == {str(a) for a in obs.legal_actions}
    again = solve(gus, answer)
    assert again.correct and not again.first_solve and again.solved == 1  # counted once
    assert solve(ann, answer).solved == 1  # another person's count is their own
    foreign = next(str(c) for c in engine.ALL_CARDS
                   if str(c) not in [str(h) for h in obs.hand])
    assert code_of(lambda: solve(gus, f"play {foreign}")) == grpc.StatusCode.INVALID_ARGUMENT
    with people.service.sessions() as s:
        rows = s.execute(select(ExerciseSolve.person_id)).scalars().all()
    assert sorted(rows) == sorted([gus.person_id, ann.person_id])
    listed = people.stub.ListExercises(people_pb2.ListExercisesRequest(
        person_id=gus.person_id), metadata=WEB)
    assert listed.solved == 1
    assert [e.solved for e in listed.exercises].count(True) == 1
    assert code_of(lambda: people.stub.GetExercise(people_pb2.GetExerciseRequest(
        person_id=gus.person_id, exercise_id=10**6), metadata=WEB)) == grpc.StatusCode.NOT_FOUND


def test_a_review_asks_for_the_finished_matchs_analysis(people, monkeypatch):
    house_bot(people.service.sessions)
    gus, mallory = people.guest("gus"), people.guest("mallory")
    asked: list[int] = []
    monkeypatch.setattr(hooks, "on_analysis_requested", [asked.append])
    match_id = start(people, gus.person_id).match.match_id
    people.my_turn(gus.person_id, match_id)

    def review(person) -> people_pb2.RequestReviewResponse:  # type: ignore[no-untyped-def]
        return people.stub.RequestReview(people_pb2.RequestReviewRequest(
            person_id=person.person_id, match_id=match_id), metadata=WEB)

    assert code_of(lambda: review(gus)) == grpc.StatusCode.FAILED_PRECONDITION  # still running
    people.stub.Resign(people_pb2.ResignRequest(person_id=gus.person_id, match_id=match_id),
                       metadata=WEB)
    assert code_of(lambda: review(mallory)) == grpc.StatusCode.PERMISSION_DENIED
    assert review(gus).state == REQUESTED
    with people.service.sessions() as s:
        assert s.get(Analysis, match_id).state == REQUESTED
        assert s.get(Match, match_id).state == "finished"
    deadline = time.monotonic() + 10
    while not asked and time.monotonic() < deadline:
        time.sleep(0.05)
    assert asked == [match_id]  # the workers' hook: the dashboard button's path


def test_the_workers_hooks_install_the_hints_analyst(monkeypatch):
    from workers import hooks as workers_hooks

    for name in ("on_turn", "on_match_end", "on_analysis_requested"):
        monkeypatch.setattr(hooks, name, [])
    monkeypatch.setattr(analysts, "position", [])
    monkeypatch.setattr(workers_hooks, "_installed", False)
    workers_hooks.install()  # what `bummerl serve` and `bummerl up` do (BUMMERL_HOOKS)
    assert analysts.position == [hint]
