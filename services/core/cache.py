"""What this process keeps of the matches it serves, between their actions: the rebuilt game
states, the live match rows, the final rows and games of matches just finished, and each
match's lock.

The engine decides every transition. A match's game state is rebuilt from its seed and its
action log (`services.core.store.game_of`); the cache keeps the rebuilt state between actions
and is checked against the stored sequence number, so several processes (service replicas)
may act on the same database. Everything here is keyed by (database engine, match id).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple, TypeVar, cast

from sqlalchemy.orm import Session

import engine
from db.models import RUNNING, Bot, Match

# --- the rebuilt game states, per process ---------------------------------------------------
# Keyed by (database engine, match id); the engines are kept so that their ids stay unique.
_cache: dict[tuple[int, int], tuple[int, engine.Match]] = {}
T = TypeVar("T")


class _Lock:
    """A match's lock; kept only while some thread holds a reference to it."""

    __slots__ = ("lock", "__weakref__")

    def __init__(self) -> None:
        self.lock = threading.Lock()


_locks: weakref.WeakValueDictionary[tuple[int, int], _Lock] = weakref.WeakValueDictionary()
_engines: dict[int, object] = {}
_guard = threading.Lock()
CACHE_SIZE = 5000


def session_key(session: Session, match_id: int) -> tuple[int, int]:
    return bind_key(session.get_bind(), match_id)


def bind_key(bind: object, match_id: int) -> tuple[int, int]:
    if id(bind) not in _engines:  # kept, so that its id stays its own
        with _guard:
            _engines.setdefault(id(bind), bind)
    return (id(bind), match_id)


# The holders of the matches used lately, kept alive (a new lock per action cost two weak
# references); dropping one from here is safe: while a thread holds its lock it keeps the
# holder referenced, so `_locks` still gives every caller that same holder.
_recent: dict[tuple[int, int], _Lock] = {}


def _holder(key: tuple[int, int]) -> _Lock:
    with _guard:
        holder = _recent.get(key)
        if holder is not None:
            return holder
        holder = _locks.get(key)
        if holder is None:
            holder = _locks[key] = _Lock()
        if len(_recent) >= CACHE_SIZE:
            _recent.pop(next(iter(_recent)))
        _recent[key] = holder
        return holder


@contextmanager
def match_lock(key: tuple[int, int]) -> Iterator[None]:
    # `holder` must stay referenced while the lock is held: `with _holder(key).lock` would let
    # the holder be collected at once, and the next caller would get a new, free lock.
    holder = _holder(key)
    with holder.lock:
        yield


def try_lock(key: tuple[int, int]) -> _Lock | None:
    """The match's lock, acquired, if it was free (never waits: for the event loop); the
    caller releases `holder.lock` (from any thread) and keeps the holder until then."""
    holder = _holder(key)
    return holder if holder.lock.acquire(blocking=False) else None


def _read_cached(key: tuple[int, int], seq: int, read: Callable[[engine.Match], T]) -> T | None:
    """`read(game)` of the cached game if it is at `seq` and nobody holds the match's lock
    now; None otherwise (never waits: for the event loop)."""
    holder = _holder(key)
    if not holder.lock.acquire(blocking=False):
        return None
    try:
        game = cached_game(key, seq)
        return read(game) if game is not None else None
    finally:
        holder.lock.release()


def observe_cached(key: tuple[int, int], seq: int, seat: int) -> engine.Observation | None:
    """`seat`'s observation of the cached game at `seq` (see `_read_cached`)."""
    return _read_cached(key, seq, lambda game: game.observe(seat))


def keep_if_newer(key: tuple[int, int], seq: int, game: engine.Match) -> None:
    """`keep` the game rebuilt at `seq` unless the cache holds a newer one."""
    with _guard:
        cached = _cache.get(key)
    if cached is None or cached[0] < seq:
        keep(key, seq, game)


def cached_game(key: tuple[int, int], seq: int) -> engine.Match | None:
    """The cached engine state of the match `key` if it is at `seq`."""
    with _guard:
        cached = _cache.get(key)
    return cached[1] if cached is not None and cached[0] == seq else None


def keep(key: tuple[int, int], seq: int, game: engine.Match) -> None:
    with _guard:
        if game.is_over:
            _cache.pop(key, None)
            return
        if len(_cache) >= CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (seq, game)


def drop(key: tuple[int, int]) -> None:
    with _guard:
        _cache.pop(key, None)
        _rows.pop(key, None)


# --- the live match rows, per process -------------------------------------------------------
# The row of a match as this process last committed it (with the cached game at the same seq):
# the next action of the match is checked and applied against it without reading the row again
# (`services.core.actions`); the write is guarded by (seq, state, illegal counts), so a row
# changed by another process is noticed and read afresh.
_rows: dict[tuple[int, int], Match] = {}


def keep_row(key: tuple[int, int], m: Match) -> None:
    """Keep `m` (just committed) as the match's live row; an ORM row is kept as a LiveMatch."""
    if m.state == RUNNING and not isinstance(m, LiveMatch):
        m = _live_copy(m, (_live_bot(m.bot0), _live_bot(m.bot1)))
    with _guard:
        if m.state != RUNNING:
            _rows.pop(key, None)
            return
        if len(_rows) >= CACHE_SIZE:
            _rows.pop(next(iter(_rows)))
        _rows[key] = m


def live_row(key: tuple[int, int], seq: int) -> Match | None:
    """A copy of the match row as this process last committed it, if it was at `seq`."""
    with _guard:
        m = _rows.get(key)
    if m is None or m.seq != seq:
        return None
    return _live_copy(m, (m.bot0, m.bot1))


_COLUMNS = tuple(column.name for column in Match.metadata.tables["matches"].columns)
_COPIED = (*_COLUMNS, "bot0", "bot1")


def live_match(row: object, bots: tuple[object, object]) -> Match:
    """A LiveMatch of `row` (anything with the matches table's columns as attributes: a row
    of the ORM or of a Core select of them) and the two bots given (values with the
    attributes their readers use)."""
    return _live_copy(cast(Match, row), cast(tuple[Bot, Bot], bots))


def _live_copy(m: Match, bots: tuple[Bot | LiveBot, Bot | LiveBot]) -> Match:
    # A LiveMatch has every attribute and method of a Match row that the functions it goes to
    # use (it is never added to a session: its changes are written by `store.save`/`appends`).
    return cast(Match, _copy_columns(m, bots))


class LiveBot(NamedTuple):
    """A bot of a live row, as a plain value (a bot's name and kind never change): read on
    every action (its kind, for the clocks), without the ORM's instrumented attributes."""

    id: int
    name: str
    kind: str
    house_strategy: str | None


def _live_bot(bot: Bot) -> LiveBot:
    return LiveBot(bot.id, bot.name, bot.kind, bot.house_strategy)


class LiveMatch:
    """A match row as a plain object, without the ORM's instrumentation: the fast path reads
    and writes a live row some hundred times per action (`services.core.actions`, `appends`,
    `clocks`), and the ORM's attribute events cost more than the rest of the row's work."""

    __slots__ = _COPIED

    def bot_id(self, seat: int) -> int:
        return self.bot1_id if seat else self.bot0_id  # type: ignore[attr-defined,no-any-return]

    def bot(self, seat: int) -> Bot:
        return self.bot1 if seat else self.bot0  # type: ignore[attr-defined,no-any-return]

    def seat_of(self, bot_id: int) -> int | None:
        return Match.seat_of(self, bot_id)  # type: ignore[arg-type]

    def seat_name(self, seat: int) -> str:
        return Match.seat_name(self, seat)  # type: ignore[arg-type]


def _copier() -> Callable[[object, tuple[object, object]], LiveMatch]:
    """A LiveMatch of a row's columns and two bots, as one straight-line function of plain
    attribute reads and writes, made once from the table's columns: a copy is made on every
    action (`live_row`), and a loop of `setattr` over the columns took 5 µs of it, this 1."""
    lines = [f"    copy.{name} = m.{name}" for name in _COLUMNS]
    source = ("def copy_columns(m, bots):\n    copy = new(LiveMatch)\n" + "\n".join(lines)
              + "\n    copy.bot0, copy.bot1 = bots\n    return copy\n")
    namespace: dict[str, object] = {"new": object.__new__, "LiveMatch": LiveMatch}
    exec(compile(source, "<services.core.cache copy_columns>", "exec"), namespace)  # noqa: S102
    return cast(Callable[[object, tuple[object, object]], LiveMatch],
                namespace["copy_columns"])


_copy_columns = _copier()


def follow(key: tuple[int, int], seq: int, action: tuple[int, str] | None) -> None:
    """Another process committed the match `key` at `seq` (with `action`, if one, at
    seq - 1): advance the cached game if it is one behind; the live row is stale either way."""
    holder = _holder(key)
    if not holder.lock.acquire(blocking=False):  # busy here: never wait (the bus's thread)
        drop(key)
        return
    try:
        with _guard:
            _rows.pop(key, None)
            cached = _cache.get(key)
        if cached is None or cached[0] == seq:
            return
        if action is None or cached[0] != seq - 1:
            drop(key)
            return
        game = cached[1]
        try:
            game.apply(action[0], engine.Action.from_text(action[1]))
        except Exception:  # noqa: BLE001  (not the same history: rebuild it when needed)
            drop(key)
            return
        keep(key, seq, game)
    finally:
        holder.lock.release()


# The final row and game of the matches this process finished lately: the Play streams report
# their last hands and result from them, without reading the database. They are wanted for
# moments (a stream that misses one reads the database), and each holds some 150 objects that
# every full garbage collection walks: 5,000 of them made its pauses 40-75 ms.
_finished: dict[tuple[int, int], tuple[Match, engine.Match]] = {}
FINISHED_SIZE = 500


def keep_finished(key: tuple[int, int], m: Match, game: engine.Match) -> None:
    with _guard:
        if len(_finished) >= FINISHED_SIZE:
            _finished.pop(next(iter(_finished)))
        _finished[key] = (m, game)


def finished(key: tuple[int, int], seq: int) -> tuple[Match, engine.Match] | None:
    """The final row and game of the match `key` if this process finished it at `seq`."""
    with _guard:
        found = _finished.get(key)
    return found if found is not None and found[0].seq == seq else None


def results_cached(key: tuple[int, int], seq: int) -> list[engine.HandResult] | None:
    """The hand results of the cached game at `seq` (see `_read_cached`)."""
    return _read_cached(key, seq, lambda game: list(game.results))


def forget_rows() -> None:
    """Forget every live row (their clocks were reset in the database: `resume_all`)."""
    with _guard:
        _rows.clear()
