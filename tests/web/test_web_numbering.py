"""A hand has one number everywhere a bot author looks (issue 22): the kit's log and its
`hand_ended` callback, the API (`HandEnded.hand_number`, `HandSummary.number`), the dashboard's
pages and its URLs all count from 0 (the dashboard counted from 1, and `/hands/0` was a 404).
A real match: two kits over the real gRPC service, the dashboard on the same database."""

from __future__ import annotations

import logging
import re

from bummerl.v1 import match_pb2
from servicekit import Database, play_in_threads, running_service

from client import Bot
from examples.random_bot import RandomBot
from services.core.matches import create_match
from web import create_app


class Recording(RandomBot):
    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.hands: list[int] = []

    def hand_ended(self, match_id, hand_number, result):  # type: ignore[no-untyped-def]
        self.hands.append(hand_number)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_hand_numbers_agree_in_the_kit_the_api_the_pages_and_the_urls(tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'numbers.sqlite3'}")
    lines = Lines()
    kit_log = logging.getLogger("bummerl.client")
    kit_log.addHandler(lines)
    level = kit_log.level
    kit_log.setLevel(logging.INFO)
    try:
        with running_service(database) as service:
            a_id, a_token = service.register("anna")
            b_id, b_token = service.register("bert")
            match_id = create_match([a_id, b_id], seed=12, sessions=service.sessions).id
            anna = Recording(1)
            bert: Bot = RandomBot(2)
            play_in_threads(service, [(anna, a_token), (bert, b_token)], matches=1)
            api = service.matches.GetMatch(match_pb2.GetMatchRequest(match_id=match_id))
    finally:
        kit_log.removeHandler(lines)
        kit_log.setLevel(level)
    numbers = list(range(len(api.hands)))
    assert len(numbers) >= 2  # a match of several hands
    assert [h.number for h in api.hands] == numbers  # the API
    assert anna.hands == numbers  # the kit's callback (HandEnded.hand_number)
    logged = [r for r in lines.records if getattr(r, "event", "") == "hand_ended"
              and r.fields["bot"] == "anna"]  # type: ignore[attr-defined]
    assert [r.fields["hand"] for r in logged] == numbers  # type: ignore[attr-defined]
    assert [int(re.search(r" hand (\d+):", r.getMessage()).group(1))  # type: ignore[union-attr]
            for r in logged] == numbers  # the kit's log line
    client = create_app({"DATABASE_URL": database.url}).test_client()
    page = client.get(f"/matches/{match_id}").get_data(as_text=True)
    table = [int(n) for n in re.findall(r'<a href="#hand-(\d+)">\1</a>', page)]
    assert table == numbers  # the hands table: the number shown is the anchor's
    headings = [int(n) for n in re.findall(r'<h3 id="hand-(\d+)">Hand \1 ', page)]
    assert sorted(headings) == numbers  # the action log's headings
    links = [int(n) for n in re.findall(rf'/matches/{match_id}/hands/(\d+)"', page)]
    assert links == numbers  # the replay URLs
    for number in numbers:  # each URL is that hand
        replay = client.get(f"/matches/{match_id}/hands/{number}")
        assert replay.status_code == 200
        assert f"· hand {number} · replay</h1>" in replay.get_data(as_text=True)
        data = client.get(f"/api/matches/{match_id}/hands/{number}").get_json()
        assert data["hand"]["number"] == number
    missing = client.get(f"/matches/{match_id}/hands/{len(numbers)}")
    assert missing.status_code == 404
    assert f"has no hand {len(numbers)} (its hands are numbered from 0)" in \
        missing.get_data(as_text=True)
