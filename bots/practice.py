"""Practice: an author's bot against a house bot, in-process on duplicate deals, no server.

`bummerl bot test` (cli/practice.py) and the kit's `bummerl-kit practice` (bummerl_kit/offline.py)
play with this. The author's bot is anything with `act(observation)` (a `client.Bot`, the kit's
`bummerl_kit.Bot`); `Adapter` makes it a house bot (`choose`) and collects whatever it did wrong,
with the observation that caused it: an exception in `act`, or an answer that is not one of the
legal actions (the server would refuse it with its rule). In both cases the first legal action
is played, as the kit does.

- `practise`: duplicate deals (`bots.batch.play_pair`: each deal twice, seats swapped), the
  result of `bots.stats.summary`, as `bummerl simulate` reports it.
- `practise_matches`: duplicate matches (Bummerls): match i has the seed `seed + i` and is
  played twice, seats swapped; each match comes back as a match record
  (docs/match-record.md) that `verify_record` (`bummerl replay`) checks and the analyst values.
"""

from __future__ import annotations

import json
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from bots import make_bot
from bots.base import Bot as HouseBot
from bots.batch import play_pair, rngs
from bots.stats import Totals, summary
from engine import Action, Match, Observation, Profile
from engine.matchrecord import RECORD_VERSION, dealt

SHOWN = 5  # problems kept in full


class AuthorBot(Protocol):
    """What practice needs of an author's bot: the kit's `Bot.act`."""

    def act(self, observation: Observation) -> Action | str: ...


@dataclass
class Problem:
    kind: str  # "exception" or "illegal"
    what: str
    observation: Observation


@dataclass
class Adapter(HouseBot):
    """An author's bot as a house bot (`choose`), recording its problems."""

    bot: AuthorBot
    problems: list[Problem] = field(default_factory=list)
    count: dict[str, int] = field(default_factory=lambda: {"exception": 0, "illegal": 0})

    def choose(self, observation: Observation, rng: random.Random,
               deadline: float | None = None) -> Action:
        try:
            answer = self.bot.act(observation)
        except Exception as e:  # noqa: BLE001  (reported, like the kit does)
            where = traceback.extract_tb(e.__traceback__)[-1]
            self._problem("exception", f"{type(e).__name__}: {e} (at {where.filename}:"
                                       f"{where.lineno})", observation)
            return observation.legal_actions[0]
        try:
            action = Action.from_text(answer) if isinstance(answer, str) else answer
        except ValueError as e:
            self._problem("illegal", f"unreadable action {answer!r}: {e}", observation)
            return observation.legal_actions[0]
        if action not in observation.legal_actions:
            self._problem("illegal", f"{action} is not legal now (legal: "
                                     f"{', '.join(map(str, observation.legal_actions))})",
                          observation)
            return observation.legal_actions[0]
        return action

    def _problem(self, kind: str, what: str, observation: Observation) -> None:
        self.count[kind] += 1
        if len(self.problems) < SHOWN:
            self.problems.append(Problem(kind, what, observation))


def practise(bot: AuthorBot, strategy: str, deals: int, seed: int, profile: str = "soft",
             progress: Callable[[int], object] | None = None) -> tuple[dict, Adapter]:
    """Play `deals` duplicate pairs of `bot` (A) against house `strategy` (B); the summary
    (as `bots.stats.summary`) and the adapter with the problems. `progress(1)` after each
    deal."""
    adapter = Adapter(bot)
    house = make_bot(strategy)
    totals = Totals()
    for deal in range(deals):
        pair = play_pair(adapter, house, seed, deal, Profile(profile))
        totals.add_pair(pair.net, pair.wins_a, pair.points_a, pair.points_b)
        if progress is not None:
            progress(1)
    return summary(totals), adapter


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def play_match(bots: tuple[HouseBot, HouseBot], seed: int, profile: Profile,
               generators: tuple[random.Random, random.Random]
               ) -> tuple[Match, list[dict], str]:
    """One match between `bots` (seat 0, seat 1), each seeing only its observation (with the
    match counters); the match, its hands in the record's form (deal, actions with think
    times, results) and when it started."""
    created = _now()
    match = Match(seed, profile)
    hands: list[dict[str, Any]] = []
    seq = 0
    while not match.is_over:
        hand = match.hand
        if not hands or hands[-1]["number"] != match.hand_number:
            holdings, trump = dealt(list(hand.deck), hand.dealer)
            hands.append({"number": match.hand_number, "dealer": hand.dealer,
                          "deck": [str(c) for c in hand.deck], "holdings": holdings,
                          "trump_card": trump, "actions": [], "refusals": [], "result": None})
        seat = match.to_act
        assert seat is not None
        started = time.perf_counter()
        action = bots[seat].choose(match.observe(seat), generators[seat])
        think = round((time.perf_counter() - started) * 1000)
        result = match.apply(seat, action)
        hands[-1]["actions"].append({"seq": seq, "seat": seat, **action.to_dict(),
                                     "think_ms": think})
        seq += 1
        if result is not None:
            hands[-1]["result"] = result.to_dict()
    return match, hands, created


def record_of(match: Match, hands: list[dict], created: str, match_id: int, seed: int,
              names: tuple[str, str], strategies: tuple[str | None, str | None]) -> dict:
    """The match record (docs/match-record.md) of a practice match played by `play_match`:
    origin "practice", no bot ids and no time control (none applies in-process)."""
    winner = match.winner
    assert winner is not None
    return {
        "record_version": RECORD_VERSION, "match_id": match_id, "profile": match.profile.value,
        "seed": seed, "first_dealer": match.first_dealer, "origin": "practice", "rated": False,
        "time_control": {"move_ms": None, "bank_ms": None, "max_illegal": None},
        "bots": [{"bot_id": None, "name": names[s], "kind": "house" if strategies[s] else
                  "remote", "strategy": strategies[s], "version": None} for s in (0, 1)],
        "created_at": created, "finished_at": _now(), "hands": hands,
        "result": {"winner": winner, "counters": list(match.counters),
                   "schneider": match.schneider, "end_reason": "played",
                   "end_detail": f"seat {winner} ({names[winner]}) won the match "
                                 f"{match.counters[0]}:{match.counters[1]} in practice",
                   "forfeit_seat": None, "illegal": [0, 0], "bank_left_ms": [None, None]},
    }


def practise_matches(bot: AuthorBot, name: str, strategy: str, matches: int, seed: int,
                     profile: str = "soft", progress: Callable[[int], object] | None = None,
                     ) -> tuple[dict, Adapter, list[dict]]:
    """Play `matches` duplicate matches of `bot` (A, named `name`) against house `strategy`
    (B): match i has the seed `seed + i` and is played twice, A in seat 0 then in seat 1.
    The summary (as `bots.stats.summary`, a pair being a duplicate match: wins are matches,
    points are game points), the adapter with the problems, and the match records in the
    order played (ids from 1). `progress(1)` after each match pair."""
    adapter = Adapter(bot)
    house = make_bot(strategy)
    totals = Totals()
    records: list[dict] = []
    house_name = f"house-{strategy}"
    for i in range(matches):
        points, wins_a = [0, 0], 0  # [A, B]
        for play, seat_of_a in ((0, 0), (1, 1)):
            seats = (adapter, house) if seat_of_a == 0 else (house, adapter)
            match, hands, created = play_match(seats, seed + i, Profile(profile),
                                               rngs(seed, i, play))
            for hand in hands:
                result = hand["result"]
                points[0 if result["winner"] == seat_of_a else 1] += result["game_points"]
            wins_a += match.winner == seat_of_a
            names = (name, house_name) if seat_of_a == 0 else (house_name, name)
            kinds = (None, strategy) if seat_of_a == 0 else (strategy, None)
            records.append(record_of(match, hands, created, len(records) + 1, seed + i, names,
                                     kinds))
        totals.add_pair(points[0] - points[1], wins_a, points[0], points[1])
        if progress is not None:
            progress(1)
    return summary(totals), adapter, records


def report(adapter: Adapter, hands: int) -> list[str]:
    """What the bot did wrong, as lines for a person: none, or the counts and the first
    problems with their observations (`hands`: how many hands it played)."""
    if not adapter.problems:
        return [f"no exceptions, no illegal actions in {hands} hands"]
    lines = [f"{adapter.count['exception']} exception(s) and {adapter.count['illegal']} illegal "
             f"action(s) (the first legal action was played instead); the first "
             f"{len(adapter.problems)}:"]
    for p in adapter.problems:
        lines.append(f"- {p.kind}: {p.what}\n  observation: "
                     f"{json.dumps(p.observation.to_dict(), default=str)}")
    return lines
