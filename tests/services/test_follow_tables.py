"""PeopleService.FollowTables (services.live.tables): a socket process's pushed tables.

Each test plays a real match through the service (the person over PeopleService.Act, the house
bot by the workers' code) while a FollowTables stream follows it, and checks what was pushed
against the engine's replay of the match's log."""

from __future__ import annotations

import queue
import random
import threading

import grpc
import pytest
from bummerl import wire
from bummerl.v1 import match_pb2, people_pb2
from peoplekit import WEB, house_bot, people_service
from servicekit import held_after


@pytest.fixture
def people(database, monkeypatch):
    with people_service(database, monkeypatch) as p:
        house_bot(p.service.sessions)
        yield p


class Follower:
    """One FollowTables stream: requests go in with `send`, responses land in `got`."""

    def __init__(self, people, metadata=WEB) -> None:  # type: ignore[no-untyped-def]
        self.requests: queue.Queue[people_pb2.FollowTablesRequest | None] = queue.Queue()
        self.got: queue.Queue[people_pb2.FollowTablesResponse | grpc.RpcError] = queue.Queue()
        self.call = people.stub.FollowTables(iter(self.requests.get, None), metadata=metadata)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for response in self.call:
                self.got.put(response)
        except grpc.RpcError as e:
            self.got.put(e)

    def send(self, **fields) -> None:  # type: ignore[no-untyped-def]
        self.requests.put(people_pb2.FollowTablesRequest(**fields))

    def next(self, timeout: float = 30.0) -> people_pb2.FollowTablesResponse:
        found = self.got.get(timeout=timeout)
        if isinstance(found, grpc.RpcError):
            raise found
        return found

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()


def start(people, person_id: int) -> int:  # type: ignore[no-untyped-def]
    return people.stub.StartGame(people_pb2.StartGameRequest(
        person_id=person_id, opponent="house-random"), metadata=WEB).match.match_id


def act_once(people, person_id: int, match_id: int, rng: random.Random) -> bool:  # type: ignore[no-untyped-def]
    """The person takes one random legal action when it is their turn; False once it is over."""
    table = people.my_turn(person_id, match_id)
    if table.match.state != match_pb2.MATCH_STATE_RUNNING:
        return False
    legal = [str(wire.action_from_pb(a)) for a in table.observation.legal_actions]
    people.act(person_id, table, "claim" if table.claim_good else rng.choice(
        [a for a in legal if a != "claim"] or legal))
    return True


def test_a_followed_table_is_pushed_at_every_change_with_every_action_and_only_its_seat(people):
    alice = people.guest("alice")
    match_id = start(people, alice.person_id)
    follower = Follower(people)
    follower.send(follow_id=7, person_id=alice.person_id, match_id=match_id)
    rng = random.Random(5)
    pushed: list[people_pb2.FollowTablesResponse] = []
    try:
        while act_once(people, alice.person_id, match_id, rng):
            pass
        while not (pushed and pushed[-1].ended):
            pushed.append(follower.next())
    finally:
        follower.close()
    assert all(p.follow_id == 7 and not p.refused for p in pushed)
    final = pushed[-1].table
    assert final.match.state == match_pb2.MATCH_STATE_FINISHED and final.seed_revealed
    seqs = [a.seq for p in pushed for a in p.actions]
    first = seqs[0]
    assert seqs == list(range(first, final.seq)), "an action was missed or sent twice"
    assert first == 0 or pushed[0].table.seq > 0
    tables = [p.table for p in pushed]
    assert [t.seq for t in tables] == sorted({t.seq for t in tables})  # rising, no repeats
    for t in tables[:-1]:  # what the seat holds, and nothing of the other seat's
        assert sorted(t.observation.hand) == held_after(people.service.sessions, match_id,
                                                         t.seat, t.seq)
        assert t.seat == pushed[0].table.seat and not t.seed_revealed and t.seed == 0


def test_a_follow_resumed_from_a_seq_sends_the_actions_after_it(people):
    bob = people.guest("bob")
    match_id = start(people, bob.person_id)
    rng = random.Random(9)
    for _ in range(3):
        act_once(people, bob.person_id, match_id, rng)
    seen = people.my_turn(bob.person_id, match_id).seq
    for _ in range(2):
        act_once(people, bob.person_id, match_id, rng)
    now = people.my_turn(bob.person_id, match_id).seq  # (the house bot has answered)
    assert now > seen
    follower = Follower(people)
    try:
        follower.send(follow_id=1, person_id=bob.person_id, match_id=match_id, after_seq=seen)
        first = follower.next()
        assert first.table.seq == now
        assert [a.seq for a in first.actions] == list(range(seen, now))
        # a viewer that saw everything gets nothing until the match moves
        follower.send(follow_id=2, person_id=bob.person_id, match_id=match_id, after_seq=now)
        act_once(people, bob.person_id, match_id, rng)
        moved = follower.next()
        while moved.follow_id != 2:
            moved = follower.next()
        assert moved.actions[0].seq == now and moved.table.seq > now
    finally:
        follower.close()


def test_another_persons_table_and_an_unknown_match_are_refused_and_end(people):
    carol, dave = people.guest("carol"), people.guest("dave")
    match_id = start(people, carol.person_id)
    follower = Follower(people)
    try:
        follower.send(follow_id=1, person_id=dave.person_id, match_id=match_id)
        refused = follower.next()
        assert refused.ended and "plays no seat" in refused.refused
        assert not refused.HasField("table")
        follower.send(follow_id=2, person_id=carol.person_id, match_id=999_999)
        assert "no match with id" in follower.next().refused
    finally:
        follower.close()


def test_only_the_web_may_follow_tables(people):
    follower = Follower(people, metadata=())
    follower.send(follow_id=1, person_id=1, match_id=1)
    with pytest.raises(grpc.RpcError) as caught:
        follower.next()
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_followed_tables_read_after_a_change_is_one_statement(people):
    """Once a follow has heard the change's action and read the finished hands, the table it
    sends after the next change costs one statement (the seat's row); the log and the hands
    are read only when missing."""
    from servicekit import statements_run

    from services.ops.people import table_since

    gil = people.guest("gil")
    match_id = start(people, gil.person_id)
    rng = random.Random(6)
    while people.my_turn(gil.person_id, match_id).match.hand_number == 0:
        assert act_once(people, gil.person_id, match_id, rng)
    sessions = people.service.sessions
    seen = people.my_turn(gil.person_id, match_id).seq - 1
    first, actions = table_since(gil.person_id, match_id, seen, sessions=sessions)
    assert [a[0] for a in actions] == [seen] and first.hands
    heard = {seq: (seat, text) for seq, seat, text in actions}
    with statements_run(sessions.kw["bind"]) as cold:
        table_since(gil.person_id, match_id, seen, sessions=sessions)
    with statements_run(sessions.kw["bind"]) as warm:
        again, same = table_since(gil.person_id, match_id, seen, sessions=sessions,
                                  heard=heard,
                                  known_hands=(first.match.hand_number, first.hands))
    assert same == actions and again.hands == first.hands
    selects = [s for s in warm if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1, warm
    assert len([s for s in cold if s.lstrip().upper().startswith("SELECT")]) == 3, cold
