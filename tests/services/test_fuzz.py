"""Fuzzing every RPC of every bummerl.v1 service, against a real server process on a loopback
port (SQLite and PostgreSQL). Requests are generated from the descriptors: random and boundary
values per field type, oversized strings and repeated fields, unknown enum numbers, raw garbage
bytes (a generic channel with identity serializers), and stream floods. Seeded
(`BUMMERL_FUZZ_SEED`) and bounded in time (`BUMMERL_FUZZ_SECONDS` per database).

Asserted: no status is UNKNOWN or INTERNAL (nor an ActionRejected code on the Play stream),
health still answers SERVING, the server logged no traceback and little else, and its memory
(RSS) and thread count are back near their baseline afterwards.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bummerl.v1 import bot_pb2, match_pb2
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from grpc_health.v1 import health_pb2, health_pb2_grpc
from servicekit import OPERATOR, fresh_database

from db.settings import Settings, sha256
from services.core import matches
from services.ops import bots

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("BUMMERL_FUZZ_SEED", "20261201"))
SECONDS = float(os.environ.get("BUMMERL_FUZZ_SECONDS", "10"))
CALLERS = 4  # concurrent fuzzing clients
FORBIDDEN = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
SERVICES = [f.services_by_name[name] for f in (match_pb2.DESCRIPTOR, bot_pb2.DESCRIPTOR)
            for name in f.services_by_name]
METHODS = [m for service in SERVICES for m in service.methods]

SERVER = """
import logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
from sqlalchemy.orm import sessionmaker
from db.base import make_engine
from db.settings import Settings
from services.api.server import create_server
url, schema, digest, refused_wait_s = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
args = {"options": f"-csearch_path={schema}"} if schema else None
engine = make_engine(url, connect_args=args) if args else make_engine(url)
sessions = sessionmaker(bind=engine, expire_on_commit=False)
config = Settings(operator_token_sha256=digest, move_ms=60000, bank_ms=60000, max_illegal=1000,
                  refused_wait_s=refused_wait_s)
server = create_server("127.0.0.1:0", sessions=sessions, config=config).start()
print(server.address, flush=True)
server.wait()
"""

INT32 = [0, 1, -1, 2, 7, 99, 2**31 - 1, -(2**31)]
INT64 = [*INT32, 2**63 - 1, -(2**63), 10**15, 2**31, 86_400_001, 10**18]
STRINGS = ["", "TH", "QS", "H", "x", "9" * 30, "9" * 19, "12", "-1", "a" * 41, "r" * 65,
           "n" * 20_000, "X" * 100_000, "\x00", "é" * 100, "--token", "Bearer x", "💥" * 30,
           "' OR 1=1 --", "%s%s%n", "alice", "bob"]


class Fuzzer:
    def __init__(self, rng: random.Random, ids: list[int], tokens: list[str]) -> None:
        self.rng = rng
        self.ids = ids
        self.tokens = tokens

    def integer(self, field: FieldDescriptor) -> int:
        wide = field.type in (field.TYPE_INT64, field.TYPE_SINT64, field.TYPE_SFIXED64)
        unsigned = field.type in (field.TYPE_UINT32, field.TYPE_UINT64, field.TYPE_FIXED32,
                                  field.TYPE_FIXED64)
        pick = self.rng.random()
        if pick < 0.3:
            value = self.rng.choice(self.ids + [0, 1])
        elif pick < 0.7:
            value = self.rng.choice(INT64 if wide else INT32)
        else:
            value = self.rng.randint(-(2**63), 2**63 - 1) if wide else \
                self.rng.randint(-(2**31), 2**31 - 1)
        if unsigned:
            value = abs(value) % (2**32)
        return value

    def string(self) -> str:
        if self.rng.random() < 0.7:
            return self.rng.choice(STRINGS)
        size = self.rng.choice([1, 5, 40, 64, 101, 1001])
        return "".join(chr(self.rng.choice([self.rng.randint(32, 126),
                                            self.rng.randint(0x100, 0xD7FF)]))
                       for _ in range(size))

    def value(self, field: FieldDescriptor, depth: int) -> Any:
        kind = field.type
        if kind == field.TYPE_BOOL:
            return self.rng.random() < 0.5
        if kind == field.TYPE_STRING:
            return self.string()
        if kind == field.TYPE_BYTES:
            return self.rng.randbytes(self.rng.choice([0, 3, 100, 2000]))
        if kind == field.TYPE_ENUM:
            known = [v.number for v in field.enum_type.values]
            return self.rng.choice(known + [99, -1, 2**31 - 1])
        if kind in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
            return self.rng.choice([0.0, -1.0, 1e300, float("nan")])
        return self.integer(field)

    def fill(self, message: Message, depth: int = 0) -> Message:
        for field in message.DESCRIPTOR.fields:
            if self.rng.random() < 0.35:
                continue
            if field.is_repeated:
                count = self.rng.choice([0, 1, 2, 3, 3, 5000 if depth == 0 else 3])
                target = getattr(message, field.name)
                for _ in range(count):
                    if field.message_type is not None:
                        if depth < 3:
                            self.fill(target.add(), depth + 1)
                    else:
                        target.append(self.value(field, depth))
            elif field.message_type is not None:
                if depth < 3:
                    self.fill(getattr(message, field.name), depth + 1)
                    getattr(message, field.name).SetInParent()
            else:
                setattr(message, field.name, self.value(field, depth))
        return message

    def request(self, method: MethodDescriptor) -> Message:
        return self.fill(GetMessageClass(method.input_type)())

    def metadata(self) -> tuple[tuple[str, str], ...] | None:
        pick = self.rng.random()
        if pick < 0.2:
            return None
        if pick < 0.75:
            token = self.rng.choice(self.tokens)
        else:
            token = self.rng.choice(["-dash", "", "x" * 5000, "not-a-token", "\\t"])
        return (("authorization", f"Bearer {token}"),)

    def garbage(self, method: MethodDescriptor) -> bytes:
        if self.rng.random() < 0.5:
            return self.rng.randbytes(self.rng.randint(0, 300))
        data = bytearray(self.fill(GetMessageClass(method.input_type)()).SerializeToString())
        for _ in range(self.rng.randint(1, 4)):
            if data:
                data[self.rng.randrange(len(data))] = self.rng.randrange(256)
        return bytes(data[: self.rng.randint(0, len(data))])


def path(method: MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


class Run:
    """The calls of one fuzz run and what they were answered."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.channel = channel
        self.codes: Counter[str] = Counter()
        self.bad: list[str] = []
        self.lock = threading.Lock()

    def record(self, what: str, code: grpc.StatusCode, details: str = "") -> None:
        with self.lock:
            self.codes[code.name] += 1
            if code in FORBIDDEN:
                self.bad.append(f"{what}: {code.name} {details[:300]}")

    def call(self, method: MethodDescriptor, request: Any, metadata: Any, raw: bool,
             messages: int = 1, seconds: float = 1.0) -> None:
        """One call; `request` is a message (or bytes when `raw`); streams send `messages`
        copies (a flood) and are read for at most `seconds`."""
        out = GetMessageClass(method.output_type)
        serialize = None if raw else type(request).SerializeToString
        kinds = (method.client_streaming, method.server_streaming)
        what = f"{method.name}{' raw' if raw else ''}"
        try:
            if kinds == (False, False):
                self.channel.unary_unary(path(method), request_serializer=serialize,
                                         response_deserializer=out.FromString)(
                    request, metadata=metadata, timeout=10)
            elif kinds == (False, True):
                stream = self.channel.unary_stream(path(method), request_serializer=serialize,
                                                   response_deserializer=out.FromString)(
                    request, metadata=metadata, timeout=seconds)
                self.drain(what, stream, 20)
            else:
                stream = self.channel.stream_stream(path(method), request_serializer=serialize,
                                                    response_deserializer=out.FromString)(
                    iter([request] * messages), metadata=metadata, timeout=seconds)
                self.drain(what, stream, 200)
            self.record(what, grpc.StatusCode.OK)
        except grpc.RpcError as e:
            self.record(what, e.code(), e.details() or "")  # type: ignore[attr-defined]

    def drain(self, what: str, stream: Any, most: int) -> None:
        for count, response in enumerate(stream):
            rejected = getattr(response, "rejected", None)
            if rejected is not None and response.HasField("rejected") and \
                    rejected.code in ("INTERNAL", "UNKNOWN"):
                with self.lock:
                    self.bad.append(f"{what}: ActionRejected {rejected.code} {rejected.message}")
            if count >= most:
                stream.cancel()
                return


def server_stats(pid: int) -> tuple[int, int]:
    """(RSS in kB, threads) of process `pid`."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["Threads"])


def settle(pid: int, seconds: float = 4.0) -> tuple[int, int]:
    time.sleep(seconds)
    return server_stats(pid)


@contextlib.contextmanager
def serving(kind: str, request: pytest.FixtureRequest, tmp_path: Path, refused_wait_s: float
            ) -> Iterator[tuple[subprocess.Popen, str, list[int], list[str]]]:
    """The service in its own process on a fresh `kind` database with two bots and a match:
    (the process, its address, [bot a, bot b, the match], [a's token, b's, the operator's])."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc to read the server's memory and threads")
    with fresh_database(kind, request, tmp_path) as database:
        database.create_tables()
        sessions = database.sessions()
        a, a_token = bots.register_bot("fuzz-a", sessions=sessions)
        b, b_token = bots.register_bot("fuzz-b", sessions=sessions)
        config = Settings(move_ms=60000, bank_ms=60000, max_illegal=1000)
        m = matches.create_match([a.id, b.id], seed=SEED, sessions=sessions, config=config)
        sessions.kw["bind"].dispose()
        log = tmp_path / "server.log"
        with log.open("wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-c", SERVER, database.url, database.schema or "",
                 sha256(OPERATOR), str(refused_wait_s)], cwd=ROOT, stdout=subprocess.PIPE,
                stderr=err, env={**os.environ, "PYTHONPATH": str(ROOT)})
            try:
                assert proc.stdout is not None
                address = proc.stdout.readline().decode().strip()
                assert address, log.read_text()[-3000:]
                yield proc, address, [a.id, b.id, m.id], [a_token or "", b_token or "", OPERATOR]
            finally:
                proc.terminate()
                proc.wait(timeout=20)
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, text[text.index("Traceback") - 300:][:3000]
        assert len(text) < 300_000, f"the server logged {len(text)} characters"


@pytest.fixture(params=["sqlite", "postgres"])
def server(request, tmp_path) -> Iterator[tuple[subprocess.Popen, str, list[int], list[str]]]:
    """The service with the default settings (a refused stream waits 2 s for its Hello)."""
    with serving(request.param, request, tmp_path, Settings().refused_wait_s) as served:
        yield served


@pytest.fixture(params=["sqlite", "postgres"])
def patient_server(request, tmp_path
                   ) -> Iterator[tuple[subprocess.Popen, str, list[int], list[str]]]:
    """The service whose refused streams wait up to 60 s for the Hello
    (`BUMMERL_REFUSED_WAIT_S`): the storm's client, sharing this machine's 2 cores with the
    server and the suite, was seen to write its Hellos more than 2 s late."""
    with serving(request.param, request, tmp_path, 60.0) as served:
        yield served


class Driver:
    """Near-valid calls that move matches on: a legal action of the seat to act at the right
    seq, with one field mutated half of the time (so deep states are fuzzed too)."""

    def __init__(self, run: Run, fuzz: Fuzzer, ids: list[int], tokens: list[str]) -> None:
        self.run, self.fuzz, self.ids, self.tokens = run, fuzz, ids, tokens
        self.channel = run.channel
        self.submit = next(m for m in METHODS if m.name == "SubmitAction")
        self.match_id = ids[2]

    def step(self) -> None:
        from bummerl.v1 import match_pb2_grpc

        stub = match_pb2_grpc.MatchServiceStub(self.channel)
        try:
            match = stub.GetMatch(match_pb2.GetMatchRequest(match_id=self.match_id),
                                  timeout=10).match
            if match.state != match_pb2.MATCH_STATE_RUNNING:
                operator = (("authorization", f"Bearer {OPERATOR}"),)
                self.match_id = stub.CreateMatch(match_pb2.CreateMatchRequest(
                    bot_ids=self.ids[:2], seed=self.fuzz.rng.randrange(2**62)),
                    metadata=operator, timeout=10).match.match_id
                return
            seat = match.to_act
            auth = (("authorization", f"Bearer {self.tokens[seat]}"),)
            seen = stub.GetObservation(match_pb2.GetObservationRequest(
                match_id=self.match_id, seat=seat), metadata=auth, timeout=10)
        except grpc.RpcError as e:
            self.run.record("drive", e.code(), e.details() or "")  # type: ignore[attr-defined]
            return
        if not seen.observation.legal_actions:  # it moved on meanwhile (another caller)
            return
        request = match_pb2.SubmitActionRequest(
            match_id=self.match_id, seat=seat, expected_seq=seen.seq,
            action=self.fuzz.rng.choice(list(seen.observation.legal_actions)),
            request_id=f"r{self.fuzz.rng.randrange(10**6)}")
        if self.fuzz.rng.random() < 0.5:
            target: Message = request if self.fuzz.rng.random() < 0.5 else request.action
            field = self.fuzz.rng.choice(target.DESCRIPTOR.fields)
            if field.message_type is None and not field.is_repeated:
                setattr(target, field.name, self.fuzz.value(field, 1))
        if self.fuzz.rng.random() < 0.15:
            self.play(request, auth)
        else:
            self.run.call(self.submit, request, auth, raw=False)

    def play(self, request: match_pb2.SubmitActionRequest, auth: Any) -> None:
        """The same answer on the Play stream: wait for the turn, answer, read what follows."""
        import queue

        from bummerl.v1 import bot_pb2_grpc

        answers: queue.SimpleQueue[Any] = queue.SimpleQueue()
        answers.put(bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="fuzz")))

        def send() -> Iterator[Any]:
            while (item := answers.get()) is not None:
                yield item

        stream = bot_pb2_grpc.BotServiceStub(self.channel).Play(send(), metadata=auth,
                                                                 timeout=1)
        try:
            for response in stream:
                kind = response.WhichOneof("message")
                if kind == "turn" and response.turn.match_id == request.match_id:
                    answers.put(bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(
                        match_id=request.match_id, seq=request.expected_seq,
                        action=request.action, request_id=request.request_id)))
                elif kind == "rejected" and response.rejected.code in ("INTERNAL", "UNKNOWN"):
                    self.run.bad.append(f"Play: ActionRejected {response.rejected.code} "
                                        f"{response.rejected.message}")
                if kind in ("rejected", "hand_ended", "match_ended") or (
                        kind == "turn" and response.turn.seq > request.expected_seq):
                    break
            stream.cancel()
            self.run.record("Play drive", grpc.StatusCode.OK)
        except grpc.RpcError as e:
            self.run.record("Play drive", e.code(), e.details() or "")  # type: ignore[attr-defined]
        finally:
            answers.put(None)


def phase(run: Run, fuzz: Fuzzer, seconds: float, driver: Driver | None = None) -> int:
    """Random calls of every method for `seconds`; returns the number of calls."""
    calls = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if driver is not None and fuzz.rng.random() < 0.3:
            driver.step()
            calls += 1
            continue
        method = fuzz.rng.choice(METHODS)
        streaming = method.server_streaming or method.client_streaming
        if fuzz.rng.random() < 0.25:
            run.call(method, fuzz.garbage(method), fuzz.metadata(), raw=True, seconds=0.3)
        else:
            run.call(method, fuzz.request(method), fuzz.metadata(), raw=False,
                     messages=fuzz.rng.choice([1, 3, 50]) if streaming else 1, seconds=0.3)
        calls += 1
    return calls


def phases(run: Run, fuzzers: list[Fuzzer], drivers: list[Driver], seconds: float) -> int:
    """`phase` in one thread per fuzzer, at once; returns the number of calls."""
    counts = [0] * len(fuzzers)

    def one(i: int) -> None:
        try:
            counts[i] = phase(run, fuzzers[i], seconds, drivers[i])
        except Exception as e:  # noqa: BLE001  (a broken fuzzer fails the test)
            run.bad.append(f"fuzzer {i} failed: {e!r}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(fuzzers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 60)
    return sum(counts)


def floods(run: Run, fuzz: Fuzzer, ids: list[int], tokens: list[str]) -> None:
    """Stream floods: a Play stream sending thousands of answers, and concurrent watchers."""
    play = next(m for m in METHODS if m.name == "Play")
    watch = next(m for m in METHODS if m.name == "WatchMatch")
    answer = bot_pb2.PlayRequest(action=bot_pb2.TurnAnswer(match_id=ids[2], seq=0))
    answer.action.action.kind = 1
    answer.action.action.card = "AS"
    auth = (("authorization", f"Bearer {tokens[0]}"),)
    threads = [threading.Thread(target=run.call, args=(play, answer, auth, False, 3000, 4.0))]
    threads += [threading.Thread(target=run.call, args=(
        watch, match_pb2.WatchMatchRequest(match_id=ids[2]), None, False, 1, 2.0))
        for _ in range(30)]
    garbage = bytes(fuzz.rng.randbytes(64))
    threads.append(threading.Thread(target=run.call, args=(play, garbage, auth, True, 500, 3.0)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)


def test_fuzz_every_rpc(server):
    proc, address, ids, tokens = server
    rng = random.Random(SEED)
    fuzz = Fuzzer(rng, ids, tokens)
    channel = grpc.insecure_channel(address, options=[
        ("grpc.max_send_message_length", 8 * 1024 * 1024)])
    run = Run(channel)
    health = health_pb2_grpc.HealthStub(channel)
    print(f"\nfuzz seed {SEED}, {SECONDS:g} s, {len(METHODS)} methods")
    # warm-up: every method once, and the floods once (the thread pool grows to its
    # working size), then the baseline
    for method in METHODS:
        run.call(method, fuzz.request(method), fuzz.metadata(), raw=False, seconds=0.5)
    floods(run, fuzz, ids, tokens)
    before = settle(proc.pid)
    # CALLERS concurrent callers, each with its own seeded generator and match driver
    fuzzers = [Fuzzer(random.Random(SEED * 100 + i), ids, tokens) for i in range(CALLERS)]
    drivers = [Driver(run, f, ids, tokens) for f in fuzzers]
    calls = phases(run, fuzzers, drivers, SECONDS * 0.6)
    floods(run, fuzz, ids, tokens)
    calls += phases(run, fuzzers, drivers, SECONDS * 0.4)
    after = settle(proc.pid)
    print(f"{calls} calls; codes {dict(run.codes)}")
    print(f"server RSS {before[0] / 1024:.0f} -> {after[0] / 1024:.0f} MB, "
          f"threads {before[1]} -> {after[1]}")
    assert not run.bad, "\n".join(run.bad[:20])
    assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == \
        health_pb2.HealthCheckResponse.SERVING
    assert after[1] <= before[1] + 10, f"threads {before[1]} -> {after[1]}"
    assert after[0] <= before[0] * 1.3 + 30 * 1024, f"RSS {before[0]} -> {after[0]} kB"
    channel.close()
    assert proc.poll() is None, "the server died"




STORM_BOTS = 3  # bots of the stream storm
STORM_STREAMS = 300  # Play streams each bot opens at once
STORM_CYCLES = 3
STORM_CAP = 4  # the server's max_play_streams (the Settings default of SERVER)


async def storm_cycle(address: str, tokens: list[str]) -> tuple[Counter[str], list[str]]:
    """Every bot opens STORM_STREAMS Play streams at once (a grpc.aio client, one channel per
    bot, as one bot process has), each sending its Hello and keeping its side open; the first
    answer of each (a Welcome, or the status that ended it) is counted per bot; then every
    stream is dropped. The codes (`welcome` for an admitted stream), and what was wrong."""
    import asyncio

    from bummerl.v1 import bot_pb2_grpc

    counts: Counter[str] = Counter()
    bad: list[str] = []
    channels = [grpc.aio.insecure_channel(address) for _ in tokens]
    calls = []
    hold = asyncio.Event()

    async def requests() -> Any:
        yield bot_pb2.PlayRequest(hello=bot_pb2.Hello(client="storm"))
        await hold.wait()  # the bot's side stays open, as a bot's does

    async def first(bot: int, call: Any) -> None:
        try:
            response = await asyncio.wait_for(call.read(), 60)
            kind = "welcome" if response is not grpc.aio.EOF and \
                response.WhichOneof("message") == "welcome" else f"first {response!r}"
        except grpc.RpcError as e:
            kind = e.code().name
            if e.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                bad.append(f"bot {bot}: {kind} {e.details()}")
        counts[f"{bot}:{kind}"] += 1

    waits = []
    for bot, (channel, token) in enumerate(zip(channels, tokens, strict=True)):
        stub = bot_pb2_grpc.BotServiceStub(channel)
        for _ in range(STORM_STREAMS):
            call = stub.Play(requests(), metadata=(("authorization", f"Bearer {token}"),))
            calls.append(call)
            waits.append(first(bot, call))
    await asyncio.gather(*waits)
    for call in calls:
        call.cancel()
    hold.set()
    for channel in channels:
        await channel.close()
    return counts, bad


def test_play_stream_storm_past_the_cap(patient_server):
    """Three bots open 300 Play streams each at once and drop them, three times (issue 25):
    each bot's first STORM_CAP streams are admitted and every other one is refused with
    RESOURCE_EXHAUSTED, never INTERNAL. (A refusal sent before the client's first write was
    done read as INTERNAL, "Internal error from Core", to a grpc.aio client: some 3 in 100.
    The server waits for the Hello, here up to 60 s: a client stalled past the wait, as this
    one was on a loaded machine at the default 2 s, still reads INTERNAL.)"""
    import asyncio

    from bummerl.v1 import bot_pb2_grpc

    proc, address, _ids, tokens = patient_server
    with grpc.insecure_channel(address) as channel:
        third = bot_pb2_grpc.BotServiceStub(channel).RegisterBot(
            bot_pb2.RegisterBotRequest(name="storm-c"),
            metadata=(("authorization", f"Bearer {OPERATOR}"),), timeout=10)
    players = [tokens[0], tokens[1], third.token]
    for cycle in range(STORM_CYCLES):
        counts, bad = asyncio.run(storm_cycle(address, players))
        print(f"storm cycle {cycle}: {dict(sorted(counts.items()))}")
        assert not bad, f"cycle {cycle}: {len(bad)} streams ended otherwise: {bad[:5]}"
        for bot in range(STORM_BOTS):
            admitted = counts[f"{bot}:welcome"]
            assert 1 <= admitted <= STORM_CAP, (cycle, bot, admitted)
            assert counts[f"{bot}:RESOURCE_EXHAUSTED"] == STORM_STREAMS - admitted, counts
        if cycle == 0:  # nothing was open before: exactly the cap was admitted
            assert all(counts[f"{bot}:welcome"] == STORM_CAP for bot in range(STORM_BOTS))
        time.sleep(0.5)  # the dropped streams close on the server
    assert proc.poll() is None, "the server died"
