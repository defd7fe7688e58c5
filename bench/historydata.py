"""A realistic history in a PostgreSQL database, fast: the data of `bench/history.py fill`.

`fill(url, matches, bots)` migrates a fresh database to the head revision and writes:
- `bots` bots: a few house bots (one per strategy) and remote bots (token hashes, versions);
- `matches` matches, created one after another over `days` days up to now, ids in that order:
  80 % ladder (rated, a `ladder_matches` row rated when it finished, two `rating_history` rows
  and the ratings they lead to), 10 % challenges (unrated), 7 % tournament matches of a few
  `tournaments`, 3 % manual; 2 % of them forfeited on time mid-hand, 0.5 % aborted, 1 % with a
  refused action; the newest `running` (default 40) still running, with a fresh deadline;
- their hands and action logs as the service writes them: each match replays one of `samples`
  real matches played by the engine in this process (random legal actions, claims only when
  right), so its seed, deals, actions and results agree (a match page, a hand replay and an
  export rebuild them with the engine); times shifted to the match's creation, a think time per
  action, remote seats' actions with a request id as the kit makes them (32 hex digits), house
  seats' as the workers do (`house:<match>:<seq>`).

Rows go in with COPY (psycopg's `cursor.copy`): bots, matches, ladder rows, ratings and their
history, refusals and the sample matches' hands and actions (small template tables); the hands
and actions of every match are then made on the server from the templates by one INSERT ...
SELECT per chunk of matches (the volume: about 70 actions and 5 hands per match), so Python
formats a few rows per match and PostgreSQL copies the rest.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
from sqlalchemy import make_url

from db import migrate
from db.models import (
    ABORTED,
    ABORTED_BY_OPERATOR,
    FINISHED,
    FORFEIT_TIMEOUT,
    HOUSE,
    ORIGIN_CHALLENGE,
    ORIGIN_LADDER,
    ORIGIN_MANUAL,
    ORIGIN_TOURNAMENT,
    PLAYED,
    REMOTE,
)
from engine import Match as Game
from engine.actions import CLAIM, Action
from engine.rules import WINNING_POINTS

HOUSE_STRATEGIES = ("random", "bully", "rdeep", "champion", "endgame", "ismcts")
MOVE_MS, BANK_MS, MAX_ILLEGAL = 5000, 60000, 3
PLAYS = [f"play {rank}{suit}" for suit in "CSHD" for rank in "AKQJT"]  # every card
CHUNK = 20_000  # matches per server-side INSERT ... SELECT of hands and actions


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL (postgresql+psycopg://...) as libpq takes it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def with_database(url: str, name: str) -> str:
    return make_url(url).set(database=name).render_as_string(hide_password=False)


def create_database(url: str, name: str) -> str:
    """Drop and create database `name` on the server of `url`; its URL."""
    if not name.replace("_", "").isalnum():
        raise ValueError(f"database name {name!r}: letters, digits and '_' only")
    with psycopg.connect(libpq_url(url), autocommit=True) as c:
        c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        c.execute(f'CREATE DATABASE "{name}"')
    return with_database(url, name)


# --- sample matches played by the engine -----------------------------------------------------
@dataclass
class Sample:
    seed: int
    seats: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    think: list[int] = field(default_factory=list)  # ms per action
    offset: list[int] = field(default_factory=list)  # ms from the match's creation, per action
    illegal: list[tuple[str, str, str]] = field(default_factory=list)  # a refused play, its
    # rule and message, per action (as the service records a refusal)
    hands: list[tuple[Any, ...]] = field(default_factory=list)  # hands' rows (see play)
    before: list[tuple[int, int]] = field(default_factory=list)  # counters at each hand's start
    counters: tuple[int, int] = (7, 7)
    winner: int = 0
    schneider: bool = False

    def hand_at(self, seq: int) -> int:
        """The index of the hand the action at `seq` belongs to."""
        for i, h in enumerate(self.hands):
            if h[2] <= seq <= h[3]:
                return i
        raise ValueError(seq)


def play(seed: int, rng: random.Random, remote: bool, profile: str = "soft") -> Sample:
    """One match played to its end by random legal actions (claims only when right)."""
    game = Game(seed, profile)
    out = Sample(seed)
    at = 0
    while (seat := game.to_act) is not None:
        legal = game.legal_actions()
        allowed = {str(a) for a in legal}
        refused = next(t for t in PLAYS if t not in allowed)
        why = game.hand.why_illegal(seat, Action.from_text(refused))
        out.illegal.append((refused, why.rule, str(why)))
        n = len(legal)
        if legal[-1] is CLAIM and game.hand.points(seat) >= WINNING_POINTS:
            action = CLAIM
        else:
            action = legal[int(rng.random() * (n - (legal[-1] is CLAIM)))]
        if not out.before or len(out.before) < len(game.hands):
            out.before.append(game.counters)
        game.apply(seat, action)
        ms = int(rng.lognormvariate(math.log(300 if remote else 40), 0.8))
        at += ms
        out.seats.append(seat)
        out.texts.append(str(action))
        out.think.append(ms)
        out.offset.append(at)
    first = 0
    for number, (hand, result) in enumerate(zip(game.hands, game.results, strict=True)):
        last = first + len(hand.history) - 1
        out.hands.append((number, hand.dealer, first, last, result.winner, result.game_points,
                          result.reason.value, result.points[0], result.points[1],
                          result.tricks[0], result.tricks[1], out.offset[last]))
        first = last + 1
    out.counters = game.counters
    out.winner = game.winner if game.winner is not None else 0
    out.schneider = game.schneider
    return out


# --- COPY helpers ----------------------------------------------------------------------------
def text(value: object) -> str:
    """One field of COPY's text format."""
    if value is None:
        return "\\N"
    if value is True:
        return "t"
    if value is False:
        return "f"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def copy_rows(c: psycopg.Connection[Any], table: str, columns: list[str],
              rows: Iterator[tuple[Any, ...]] | list[tuple[Any, ...]]) -> int:
    n = 0
    with c.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as cp:
        buf: list[str] = []
        for row in rows:
            buf.append("\t".join(map(text, row)) + "\n")
            n += 1
            if len(buf) >= 5000:
                cp.write("".join(buf))
                buf.clear()
        if buf:
            cp.write("".join(buf))
    return n


MATCH_COLUMNS = [
    "id", "bot0_id", "bot1_id", "profile", "seed", "state", "seq", "to_act", "hand_number",
    "counter0", "counter1", "winner", "schneider", "end_reason", "end_detail", "forfeit_seat",
    "move_ms", "bank_ms", "max_illegal", "bank0_ms", "bank1_ms", "illegal0", "illegal1",
    "turn_started_at", "deadline_at", "created_at", "finished_at", "rated", "origin",
    "version0", "version1", "event_id", "event_round"]


@dataclass
class Filled:
    url: str
    matches: int
    bots: int
    rows: dict[str, int]
    seconds: dict[str, float]


def fill(url: str, matches: int, bots: int = 2000, *, days: float = 365, running: int = 40,
         samples: int = 400, seed: int = 1, say: Callable[[str], None] = print) -> Filled:
    """Fill the (fresh) database at `url` (see the module's docstring)."""
    if matches < running + 1 or bots < len(HOUSE_STRATEGIES) + 2:
        raise ValueError("need more matches than running ones and a few remote bots")
    rng = random.Random(seed)
    seconds: dict[str, float] = {}
    rows: dict[str, int] = {}
    t = time.perf_counter()
    migrate.upgrade(url)
    seconds["migrate"] = time.perf_counter() - t
    now = datetime.now(UTC).replace(microsecond=0)
    start = now - timedelta(days=days)
    step = days * 86400 / matches  # seconds between two matches' creations
    t = time.perf_counter()
    # samples of each kind of seat (think times) and rules profile: all_samples[index[...]]
    all_samples: list[Sample] = []
    index: dict[tuple[bool, str], list[int]] = {}
    for house, count in ((False, samples), (True, samples // 4)):
        for profile in ("soft", "sharp"):
            for _ in range(count if profile == "soft" else count // 4):
                index.setdefault((house, profile), []).append(len(all_samples))
                all_samples.append(play(rng.getrandbits(62), rng, not house, profile))
    seconds["play samples"] = time.perf_counter() - t
    with psycopg.connect(libpq_url(url)) as c:
        c.execute("SET synchronous_commit = off")
        t = time.perf_counter()
        # bots: house bots first
        house_ids = list(range(1, len(HOUSE_STRATEGIES) + 1))
        bot_rows = []
        for i in range(1, bots + 1):
            created = start - timedelta(days=rng.random() * 30)
            if i in house_ids:
                bot_rows.append((i, f"house-{HOUSE_STRATEGIES[i - 1]}", HOUSE,
                                 HOUSE_STRATEGIES[i - 1], None, created, None, None, None))
            else:
                bot_rows.append((i, f"bot-{i:05d}", REMOTE, None, f"{rng.getrandbits(256):064x}",
                                 created, None, created + timedelta(days=rng.random() * days),
                                 f"v{rng.randint(1, 9)}.{rng.randint(0, 20)}"))
        rows["bots"] = copy_rows(c, "bots", [
            "id", "name", "kind", "house_strategy", "token_hash", "created_at",
            "connected_since", "last_seen_at", "version"], bot_rows)
        tournaments = max(1, matches // 5000)
        rows["tournaments"] = copy_rows(c, "tournaments", [
            "id", "name", "format", "state", "rounds", "paired_rounds", "profile", "move_ms",
            "bank_ms", "rated", "concurrency", "grace_s", "seed", "created_at", "finished_at"],
            [(i, f"cup {i}", "swiss", "finished", 7, 7, "soft", MOVE_MS, BANK_MS, False, 8, 30,
              rng.getrandbits(62), start + timedelta(days=days * i / (tournaments + 1)),
              start + timedelta(days=days * i / (tournaments + 1), hours=3))
             for i in range(1, tournaments + 1)])
        # templates: the sample matches' actions and hands
        c.execute("CREATE UNLOGGED TABLE gen_actions (sample int, seq int, seat int, "
                  "action varchar(20), offset_ms bigint, think_ms int)")
        c.execute("CREATE UNLOGGED TABLE gen_hands (sample int, number int, dealer int, "
                  "first_seq int, last_seq int, winner int, game_points int, reason varchar(20),"
                  " points0 int, points1 int, tricks0 int, tricks1 int, end_ms bigint)")
        c.execute("CREATE UNLOGGED TABLE gen_matches (match_id int, sample int, cut int, "
                  "house0 bool, house1 bool)")
        copy_rows(c, "gen_actions", ["sample", "seq", "seat", "action", "offset_ms", "think_ms"],
                  ((k, q, s.seats[q], s.texts[q], s.offset[q], s.think[q])
                   for k, s in enumerate(all_samples) for q in range(len(s.texts))))
        copy_rows(c, "gen_hands", ["sample", "number", "dealer", "first_seq", "last_seq",
                                   "winner", "game_points", "reason", "points0", "points1",
                                   "tricks0", "tricks1", "end_ms"],
                  ((k, *h) for k, s in enumerate(all_samples) for h in s.hands))
        c.commit()

        # matches, in Python; ratings updated as the ladder would (a simple Elo-like step:
        # the figures need realistic rows, not openskill's exact numbers)
        ratings: dict[tuple[int, str], list[float]] = {}  # mu, sigma, matches, wins
        history: list[tuple[Any, ...]] = []
        ladder: list[tuple[Any, ...]] = []
        refusals: list[tuple[Any, ...]] = []
        gen: list[tuple[Any, ...]] = []

        def match_rows() -> Iterator[tuple[Any, ...]]:
            for mid in range(1, matches + 1):
                created = start + timedelta(seconds=(mid - 1) * step + rng.random() * step)
                house = rng.random() < 0.15
                b0 = rng.choice(house_ids) if house else rng.randint(len(house_ids) + 1, bots)
                b1 = rng.randint(len(house_ids) + 1, bots)
                while b1 == b0:
                    b1 = rng.randint(len(house_ids) + 1, bots)
                if rng.random() < 0.5:
                    b0, b1 = b1, b0
                is_running = mid > matches - running
                r = rng.random()
                origin = (ORIGIN_LADDER if r < 0.80 else ORIGIN_CHALLENGE if r < 0.90 else
                          ORIGIN_TOURNAMENT if r < 0.97 else ORIGIN_MANUAL)
                if is_running:
                    origin = ORIGIN_LADDER
                profile = "sharp" if rng.random() < 0.15 and origin == ORIGIN_LADDER else "soft"
                k = rng.choice(index[(house, profile)])  # played under the match's rules
                s = all_samples[k]
                rated = origin == ORIGIN_LADDER
                fate = rng.random()
                n = len(s.texts)
                cut = n
                state, end_reason, forfeit_seat = FINISHED, PLAYED, None
                if is_running:
                    state, cut, end_reason = "running", rng.randrange(1, n), None
                elif fate < 0.02:
                    cut = rng.randrange(1, n)
                    end_reason, forfeit_seat = FORFEIT_TIMEOUT, s.seats[cut]
                elif fate < 0.025:
                    state, cut, end_reason, rated = ABORTED, rng.randrange(1, n), \
                        ABORTED_BY_OPERATOR, False
                names = (bot_rows[b0 - 1][1], bot_rows[b1 - 1][1])
                if cut == n:
                    counters, winner, hand_number = s.counters, s.winner, len(s.hands) - 1
                    schneider = s.schneider
                    loser = 1 - winner
                    detail = (f"seat {winner} ({names[winner]}) won the match "
                              f"{counters[0]}:{counters[1]}"
                              + (" (Schneider-Bummerl, R9.1)" if schneider else "")
                              + f"; seat {loser} lost")
                    to_act = None
                    finished = created + timedelta(milliseconds=s.offset[-1])
                else:
                    hand_number = s.hand_at(cut)
                    counters = s.before[hand_number]
                    to_act = s.seats[cut]
                    schneider = False
                    winner = None if state != FINISHED else 1 - to_act
                    finished = None if is_running else created + timedelta(
                        milliseconds=s.offset[cut - 1] + (MOVE_MS if forfeit_seat is not None
                                                          else 1000))
                    detail = (f"seat {forfeit_seat} ({names[forfeit_seat]}) ran out of time"
                              if forfeit_seat is not None else
                              "aborted by an operator" if state == ABORTED else None)
                    if is_running:  # running now: created lately, its turn just started
                        created = now - timedelta(milliseconds=s.offset[cut - 1] + 200)
                        finished = None
                turn = now if is_running else None
                deadline = now + timedelta(milliseconds=MOVE_MS) if is_running else None
                event_id = event_round = None
                if origin == ORIGIN_TOURNAMENT:
                    event_id, event_round = rng.randint(1, tournaments), rng.randint(1, 7)
                gen.append((mid, k, cut, b0 in house_ids, b1 in house_ids))
                if origin == ORIGIN_LADDER:
                    rated_at = finished + timedelta(seconds=1) if state == FINISHED else None
                    ladder.append((mid, profile, created, rated_at))
                    if rated_at is not None and winner is not None:
                        for seat, bot in ((0, b0), (1, b1)):
                            row = ratings.setdefault((bot, profile), [25.0, 25 / 3, 0, 0])
                            other = ratings.setdefault(((b1, b0)[seat], profile),
                                                       [25.0, 25 / 3, 0, 0])
                            expected = 1 / (1 + math.exp(-(row[0] - other[0]) / 4))
                            row[0] += (row[1] / 4) * ((winner == seat) - expected)
                            row[1] = max(0.8, row[1] * 0.985)
                            row[2] += 1
                            row[3] += winner == seat
                            history.append((bot, profile, mid, row[0], row[1], rated_at))
                if rng.random() < 0.01 and cut > 2:
                    q = rng.randrange(1, cut)
                    refusals.append((mid, q, s.seats[q], *s.illegal[q],
                                     created + timedelta(milliseconds=s.offset[q - 1])))
                v0 = None if b0 in house_ids else bot_rows[b0 - 1][8]
                v1 = None if b1 in house_ids else bot_rows[b1 - 1][8]
                yield (mid, b0, b1, profile, s.seed, state, cut, to_act, hand_number,
                       counters[0], counters[1], winner, schneider, end_reason, detail,
                       forfeit_seat, MOVE_MS, BANK_MS, MAX_ILLEGAL, BANK_MS - rng.randint(0, 9000),
                       BANK_MS - rng.randint(0, 9000), 0, 0, turn, deadline, created, finished,
                       rated, origin, v0, v1, event_id, event_round)

        rows["matches"] = copy_rows(c, "matches", MATCH_COLUMNS, match_rows())
        rows["ladder_matches"] = copy_rows(c, "ladder_matches",
                                           ["match_id", "profile", "created_at", "rated_at"],
                                           ladder)
        rows["rating_history"] = copy_rows(
            c, "rating_history", ["bot_id", "profile", "match_id", "mu", "sigma", "at"],
            history)
        rows["ratings"] = copy_rows(
            c, "ratings", ["bot_id", "profile", "mu", "sigma", "matches", "wins", "updated_at"],
            [(b, p, r[0], r[1], r[2], r[3], now) for (b, p), r in ratings.items()])
        rows["refusals"] = copy_rows(c, "refusals", ["match_id", "seq", "seat", "action",
                                                     "rule", "message", "created_at"], refusals)
        copy_rows(c, "gen_matches", ["match_id", "sample", "cut", "house0", "house1"], gen)
        c.commit()
        seconds["copy"] = time.perf_counter() - t
        say(f"  copied {sum(rows.values()):,} rows in {seconds['copy']:.1f} s")

        t = time.perf_counter()
        c.execute("CREATE INDEX ON gen_actions (sample, seq)")
        c.execute("CREATE INDEX ON gen_hands (sample)")
        c.execute("ANALYZE gen_actions; ANALYZE gen_hands; ANALYZE gen_matches")
        c.commit()
        rows["hands"] = rows["actions"] = 0
        for low in range(1, matches + 1, CHUNK):
            high = low + CHUNK
            cur = c.execute(
                "INSERT INTO hands (match_id, number, dealer, first_seq, last_seq, winner, "
                "game_points, reason, points0, points1, tricks0, tricks1, finished_at) "
                "SELECT g.match_id, h.number, h.dealer, h.first_seq, "
                "CASE WHEN h.last_seq < g.cut THEN h.last_seq END, "
                "CASE WHEN h.last_seq < g.cut THEN h.winner END, "
                "CASE WHEN h.last_seq < g.cut THEN h.game_points END, "
                "CASE WHEN h.last_seq < g.cut THEN h.reason END, "
                "CASE WHEN h.last_seq < g.cut THEN h.points0 END, "
                "CASE WHEN h.last_seq < g.cut THEN h.points1 END, "
                "CASE WHEN h.last_seq < g.cut THEN h.tricks0 END, "
                "CASE WHEN h.last_seq < g.cut THEN h.tricks1 END, "
                "CASE WHEN h.last_seq < g.cut THEN m.created_at + h.end_ms * interval '1 ms' END"
                " FROM gen_matches g JOIN matches m ON m.id = g.match_id "
                "JOIN gen_hands h ON h.sample = g.sample AND h.first_seq <= g.cut "
                "WHERE g.match_id >= %s AND g.match_id < %s "
                "ORDER BY g.match_id, h.number", (low, high))
            rows["hands"] += cur.rowcount
            cur = c.execute(
                "INSERT INTO actions (match_id, seq, seat, action, request_id, created_at, "
                "think_ms) SELECT g.match_id, a.seq, a.seat, a.action, "
                "CASE WHEN (a.seat = 0 AND g.house0) OR (a.seat = 1 AND g.house1) "
                "THEN 'house:' || g.match_id || ':' || a.seq "
                "ELSE md5(g.match_id::text || ':' || a.seq) END, "
                "m.created_at + a.offset_ms * interval '1 ms', a.think_ms "
                "FROM gen_matches g JOIN matches m ON m.id = g.match_id "
                "JOIN gen_actions a ON a.sample = g.sample AND a.seq < g.cut "
                "WHERE g.match_id >= %s AND g.match_id < %s "
                "ORDER BY g.match_id, a.seq", (low, high))
            rows["actions"] += cur.rowcount
            c.commit()
            if (low - 1) % (CHUNK * 10) == 0 and low > 1:
                say(f"  ... {low - 1:,} matches' hands and actions")
        seconds["expand"] = time.perf_counter() - t
        say(f"  made {rows['hands'] + rows['actions']:,} hands and actions in "
            f"{seconds['expand']:.1f} s")
        c.execute("DROP TABLE gen_actions, gen_hands, gen_matches")
        for table in ("bots", "matches", "hands", "actions", "refusals", "tournaments"):
            c.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                      f"(SELECT coalesce(max(id), 1) FROM {table}))")
        c.execute("SELECT setval(pg_get_serial_sequence('rating_history', 'id'), "
                  "(SELECT coalesce(max(id), 1) FROM rating_history))")
        c.commit()
    t = time.perf_counter()
    with psycopg.connect(libpq_url(url), autocommit=True) as c:
        c.execute("VACUUM ANALYZE")
    seconds["vacuum analyze"] = time.perf_counter() - t
    return Filled(url, matches, bots, rows, seconds)
