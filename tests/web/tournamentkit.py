"""Tournament rows written directly through the models (as the events scheduler and the engine
service write them) for the dashboard's tournament tests: a tournament, its field, its pairs
and their two matches each."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from db.events import T_RUNNING, Tournament, TournamentBye, TournamentEntry
from db.models import FINISHED, HOUSE, ORIGIN_TOURNAMENT, PLAYED, RUNNING, Bot, Match
from db.pairs import DONE, FORFEITED, OWNER_TOURNAMENT, PLAYING, WAITING, DuplicatePair
from events.scoring import Leg, pair_result


@dataclass
class Event:
    id: int
    bots: dict[str, int]
    pairs: dict[str, int] = field(default_factory=dict)  # "anna-bert": pair id
    legs: dict[str, list[int]] = field(default_factory=dict)  # "anna-bert": [match a, b]


def tournament(sessions, names: list[str], format: str = "round-robin", rounds: int = 3,
               name: str = "Winter cup", started_ago_s: float = 600) -> Event:
    with sessions.begin() as s:
        bots = [Bot(name=n, kind=HOUSE, house_strategy="bully") for n in names]
        s.add_all(bots)
        t = Tournament(name=name, format=format, state=T_RUNNING, rounds=rounds,
                       paired_rounds=0, profile="soft", move_ms=5000, bank_ms=30000,
                       rated=False, concurrency=4, grace_s=60, seed=99,
                       created_at=datetime.now(UTC) - timedelta(seconds=started_ago_s))
        s.add(t)
        s.flush()
        s.add_all([TournamentEntry(tournament_id=t.id, bot_id=b.id, position=i)
                   for i, b in enumerate(bots)])
        return Event(t.id, {b.name: b.id for b in bots})


def leg_match(s, event: Event, pair: DuplicatePair, leg: int, state: str,
              winner: int | None = None, loser_counter: int = 0) -> int:
    """Leg `leg` of `pair` (leg 0: bot a in seat 0), running or finished with `winner` seat
    (the loser's counter left at `loser_counter`)."""
    bot0, bot1 = pair.bots(leg)
    values = dict(bot0_id=bot0, bot1_id=bot1, profile="soft", seed=pair.seed, state=state,
                  move_ms=5000, bank_ms=30000, max_illegal=3, bank0_ms=30000, bank1_ms=30000,
                  origin=ORIGIN_TOURNAMENT, pair_id=pair.id, pair_leg=leg, event_id=event.id,
                  event_round=pair.round, rated=False)
    if state == FINISHED:
        assert winner is not None
        counters = [0, 0]
        counters[1 - winner] = loser_counter
        values.update(winner=winner, end_reason=PLAYED, counter0=counters[0],
                      counter1=counters[1], finished_at=datetime.now(UTC))
    else:
        values.update(to_act=0)
    m = Match(**values)
    s.add(m)
    s.flush()
    return m.id


def add_pair(sessions, event: Event, round_: int, board: int, a: str, b: str,
             legs: tuple[tuple[int, int], tuple[int, int]] | None = None,
             state: str | None = None, forfeit: str | None = None,
             detail: str | None = None) -> int:
    """A pair of `a` and `b`: with `legs` ((winner seat, loser's counter) of each), both legs
    finished and the pair done with its result from `events.scoring`; `state` PLAYING: both
    legs running; WAITING: no legs; `forfeit`: forfeited by "a", "b" or "both"."""
    with sessions.begin() as s:
        p = DuplicatePair(owner=OWNER_TOURNAMENT, owner_id=event.id, round=round_, board=board,
                          seed=1000 * round_ + board, bot_a_id=event.bots[a],
                          bot_b_id=event.bots[b], profile="soft", move_ms=5000, bank_ms=30000,
                          state=state or WAITING)
        s.add(p)
        s.flush()
        key = f"{a}-{b}"
        event.pairs[key] = p.id
        if legs is not None:
            ids = []
            for leg, (winner, counter) in enumerate(legs):
                ids.append(leg_match(s, event, p, leg, FINISHED, winner, counter))
            p.match_a_id, p.match_b_id = ids
            event.legs[key] = ids
            counters = []
            for winner, counter in legs:
                both = [0, 0]
                both[1 - winner] = counter
                counters.append(Leg(winner, (both[0], both[1])))
            result = pair_result(counters[0], counters[1])
            p.state = DONE
            p.points_a, p.points_b = result.points_a, result.points_b
            p.game_points_a, p.game_points_b = result.game_points_a, result.game_points_b
            p.finished_at = datetime.now(UTC)
        elif state == PLAYING:
            ids = [leg_match(s, event, p, leg, RUNNING) for leg in (0, 1)]
            p.match_a_id, p.match_b_id = ids
            event.legs[key] = ids
            p.started_at = datetime.now(UTC)
        elif forfeit is not None:
            p.state = FORFEITED
            p.forfeit = forfeit
            p.points_a = 2 if forfeit == "b" else 0
            p.points_b = 2 if forfeit == "a" else 0
            p.game_points_a = p.game_points_b = 0
            p.detail = detail
        t = s.get(Tournament, event.id)
        t.paired_rounds = max(t.paired_rounds, round_)
        return p.id


def finish_pair(sessions, event: Event, key: str, legs: tuple[tuple[int, int], tuple[int, int]]
                ) -> None:
    """End both running legs of pair `key` and score it (as the service and `settle` do)."""
    with sessions.begin() as s:
        p = s.get(DuplicatePair, event.pairs[key])
        results = []
        for leg, (winner, counter) in enumerate(legs):
            m = s.get(Match, p.match_id(leg))
            counters = [0, 0]
            counters[1 - winner] = counter
            m.state, m.winner, m.end_reason = FINISHED, winner, PLAYED
            m.counter0, m.counter1, m.to_act = counters[0], counters[1], None
            m.finished_at = datetime.now(UTC)
            results.append(Leg(winner, (counters[0], counters[1])))
        result = pair_result(results[0], results[1])
        p.state = DONE
        p.points_a, p.points_b = result.points_a, result.points_b
        p.game_points_a, p.game_points_b = result.game_points_a, result.game_points_b
        p.finished_at = datetime.now(UTC)


def add_bye(sessions, event: Event, round_: int, name: str) -> None:
    with sessions.begin() as s:
        s.add(TournamentBye(tournament_id=event.id, round=round_, bot_id=event.bots[name]))
