"""The dashboard's queries for a long history (migration 0012's indexes, bounded counts, keyset
pages, counting in the database) give what the old ones gave: each old query is written out
here as it was and compared on the same real matches, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest
from historykit import NOW, add_bots, add_match, history_database, rate
from sqlalchemy import DateTime, and_, case, func, or_, select

from db.base import aware
from db.models import ABORTED, FINISHED, FORFEIT_TIMEOUT, HOUSE, RUNNING, ActionLog, Bot, Match
from db.ratings import LadderMatch, RatingHistory
from db.standings import INITIAL_MU, rank_of
from web import create_app, queries

NAMES = ["house", "alpha", "Bob", "_under", "zed", "Zoe", "bob-2", "a.b"]


@pytest.fixture(params=["sqlite", "postgres"])
def sessions(request, tmp_path):
    with history_database(request.param, request, tmp_path) as factory:
        yield factory


@pytest.fixture
def history(sessions):
    """30 matches among 8 bots over 3 days: ladder (rated), challenges, running, aborted,
    forfeited, in both profiles."""
    bots = add_bots(sessions, NAMES)
    ids = []
    for i in range(30):
        a, b = bots[i % len(bots)], bots[(i * 3 + 1) % len(bots)]
        if a == b:
            b = bots[(i + 2) % len(bots)]
        created = NOW - timedelta(days=3) + timedelta(hours=2.5 * i)
        fate = RUNNING if i in (7, 22, 29) else ABORTED if i == 11 else \
            FORFEIT_TIMEOUT if i % 9 == 4 else FINISHED
        ladder = i % 4 != 3 and fate != ABORTED
        m = add_match(sessions, a, b, created=created, seed=1000 + i, fate=fate,
                      profile="sharp" if i % 5 == 0 else "soft", ladder=ladder,
                      origin="ladder" if ladder else "challenge",
                      cut=None if fate == FINISHED else 9 + i)
        if ladder and fate in (FINISHED, FORFEIT_TIMEOUT):
            with sessions.begin() as s:  # rated when it finished, as the ladder does
                s.get(Match, m).finished_at = created + timedelta(minutes=30)
            rate(sessions, m)
            with sessions.begin() as s:
                for h in s.scalars(select(RatingHistory).where(RatingHistory.match_id == m)):
                    h.at = created + timedelta(minutes=31)
        ids.append(m)
    return bots, ids


def old_list(sessions, conditions, page, per_page):
    """The matches list as it was: every match sorted, running first, then newest first."""
    with sessions() as s:
        total = s.scalar(select(func.count()).select_from(Match).where(*conditions)) or 0
        ids = list(s.scalars(select(Match.id).where(*conditions)
                             .order_by(case((Match.state == RUNNING, 0), else_=1),
                                       Match.id.desc())
                             .offset((page - 1) * per_page).limit(per_page)))
    return total, ids


def test_the_matches_list_is_the_old_one_page_by_page(sessions, history):
    bots, _ = history
    per_page = 4
    for where, conditions in [
        (queries.MatchFilter(), []),
        (queries.MatchFilter(state=FINISHED), [Match.state == FINISHED]),
        (queries.MatchFilter(state=RUNNING), [Match.state == RUNNING]),
        (queries.MatchFilter(profile="sharp"), [Match.profile == "sharp"]),
        (queries.MatchFilter(bot_id=bots[1]),
         [or_(Match.bot0_id == bots[1], Match.bot1_id == bots[1])]),
    ]:
        total, _ = old_list(sessions, conditions, 1, per_page)
        pages = max(1, math.ceil(total / per_page))
        for page in range(1, pages + 1):
            got = queries.list_matches(sessions, where, page, per_page)
            assert (got["total"], [m["id"] for m in got["matches"]]) == \
                old_list(sessions, conditions, page, per_page), (where, page)
            assert got["pages"] == pages and got["more"] is False
            assert got["next_before"] is None
        with pytest.raises(queries.Missing, match=f"page {pages + 1} does not exist"):
            queries.list_matches(sessions, where, pages + 1, per_page)


def test_past_the_counted_matches_keyset_pages_go_on_in_the_same_order(sessions, history,
                                                                      monkeypatch):
    monkeypatch.setattr(queries, "COUNT_CAP", 10)  # 30 matches: 3 running, 10 counted
    per_page = 4
    _, everything = old_list(sessions, [], 1, 100)
    got = queries.list_matches(sessions, queries.MatchFilter(), 1, per_page)
    assert got["more"] is True and got["total"] == 13 and got["pages"] == 4
    seen = []
    for page in range(1, 5):
        got = queries.list_matches(sessions, queries.MatchFilter(), page, per_page)
        seen += [m["id"] for m in got["matches"]]
    assert got["next_before"] == seen[-1]  # the last numbered page leads on by keyset
    with pytest.raises(queries.Missing, match="before=ID"):
        queries.list_matches(sessions, queries.MatchFilter(), 5, per_page)
    while got["next_before"] is not None:
        got = queries.list_matches(sessions, queries.MatchFilter(), 1, per_page,
                                   before=got["next_before"])
        assert got["page"] is None and len(got["matches"]) <= per_page
        seen += [m["id"] for m in got["matches"]]
    assert seen == everything
    with pytest.raises(queries.Invalid, match="before must be a match id"):
        queries.list_matches(sessions, queries.MatchFilter(), 1, per_page, before=0)


def test_the_pages_link_to_the_keyset_pages(sessions, history, monkeypatch):
    monkeypatch.setattr(queries, "COUNT_CAP", 10)
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "PAGE_SIZE": 4, "TESTING": True})
    client = app.test_client()
    last = client.get("/matches?page=4")
    assert last.status_code == 200 and b"page 4 of 4+" in last.data
    data = client.get("/api/matches?page=4").get_json()
    link = f"/matches?before={data['next_before']}".encode()
    assert link in last.data
    older = client.get(link.decode())
    assert older.status_code == 200 and b"matches older than" in older.data
    bots, _ = history
    assert client.get(f"/bots/{bots[1]}?before={data['next_before']}").status_code == 200
    assert client.get("/matches?before=x").status_code == 400
    app.extensions["bummerl.sessions"].kw["bind"].dispose()


def old_opponents(sessions, bot_id):
    table = {}
    with sessions() as s:
        rows = s.scalars(select(Match).where(
            or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id), Match.state == FINISHED))
        for m in rows.unique():
            seat = m.seat_of(bot_id)
            other = m.bot(1 - seat)
            row = table.setdefault(other.id, {"bot_id": other.id, "name": other.name,
                                              "played": 0, "won": 0, "lost": 0,
                                              "forfeited": 0, "opponent_forfeited": 0})
            row["played"] += 1
            row["won" if m.winner == seat else "lost"] += m.winner is not None
            if m.forfeit_seat == seat:
                row["forfeited"] += 1
            elif m.forfeit_seat is not None:
                row["opponent_forfeited"] += 1
    for row in table.values():
        row["win_rate"] = row["won"] / row["played"] if row["played"] else None
    return sorted(table.values(), key=lambda r: (-r["played"], r["name"]))


def old_move_times(sessions, bot_id):
    previous = func.lag(ActionLog.created_at, type_=DateTime(timezone=True)).over(
        partition_by=ActionLog.match_id, order_by=ActionLog.seq)
    gaps = (select(ActionLog.match_id, ActionLog.seq, ActionLog.seat, ActionLog.created_at,
                   previous.label("before"))
            .join(Match, Match.id == ActionLog.match_id)
            .where(or_(Match.bot0_id == bot_id, Match.bot1_id == bot_id)).subquery())
    with sessions() as s:
        rows = s.execute(
            select(gaps.c.created_at, gaps.c.before, Match.created_at)
            .join(Match, Match.id == gaps.c.match_id)
            .where(or_(and_(Match.bot0_id == bot_id, gaps.c.seat == 0),
                       and_(Match.bot1_id == bot_id, gaps.c.seat == 1)))
            .order_by(gaps.c.created_at.desc()).limit(queries.MOVE_SAMPLE)).all()
    return sorted(max(0.0, (aware(at) - aware(before or started)).total_seconds() * 1000)
                  for at, before, started in rows)


def test_a_bots_tables_are_the_old_ones(sessions, history, monkeypatch):
    bots, _ = history
    for bot in bots:
        assert queries.opponents(sessions, bot) == old_opponents(sessions, bot)
        ms = old_move_times(sessions, bot)
        got = queries.move_times(sessions, bot)
        assert got["moves"] == len(ms) and got["moves"] > 0
        assert got["median_ms"] == queries._quantile(ms, 0.5)
    # its latest matches only: with 2 of them the sample is theirs
    monkeypatch.setattr(queries, "MOVE_MATCHES", 2)
    with sessions() as s:
        latest = list(s.scalars(select(Match.id).where(
            or_(Match.bot0_id == bots[1], Match.bot1_id == bots[1]))
            .order_by(Match.id.desc()).limit(2)))
        mine = s.scalar(select(func.count()).select_from(ActionLog).join(
            Match, Match.id == ActionLog.match_id).where(
            Match.id.in_(latest), or_(and_(Match.bot0_id == bots[1], ActionLog.seat == 0),
                                      and_(Match.bot1_id == bots[1], ActionLog.seat == 1))))
    assert queries.move_times(sessions, bots[1])["moves"] == mine


def test_a_bots_rank_is_its_place_in_the_whole_standings(sessions, history):
    bots, _ = history
    for profile in ("soft", "sharp"):
        table = queries.standings(sessions, profile)
        assert table, profile
        for row in table:
            rank, of, st = rank_of(sessions(), profile, row["bot_id"], 30)
            assert (rank, of) == (row["rank"], len(table))
            assert queries.standing_row(rank, st) == row
            page = queries.bot_detail(sessions, row["bot_id"])
            assert {**row, "profile": profile, "of": len(table)} in page["ratings"]


def test_ties_are_ranked_by_name_as_python_sorts_them(sessions):
    bots = add_bots(sessions, NAMES)
    from db.ratings import Rating

    with sessions.begin() as s:
        s.add_all(Rating(bot_id=b, profile="soft", mu=25.0, sigma=25 / 3) for b in bots)
    table = queries.standings(sessions, "soft")
    assert [r["name"] for r in table] == sorted(NAMES)
    for row in table:
        assert rank_of(sessions(), "soft", row["bot_id"], 30)[0] == row["rank"]


def old_day_changes(sessions, profile):
    """`day_changes` with the last row before the day found by grouping all history."""
    from db.ratings import Rating

    since = NOW - timedelta(days=1)
    with sessions() as s:
        recent = s.execute(select(RatingHistory.bot_id, func.count(), func.min(RatingHistory.id))
                           .where(RatingHistory.profile == profile, RatingHistory.at >= since)
                           .group_by(RatingHistory.bot_id)).all()
        ids = [b for b, _, _ in recent]
        now_mu = dict(s.execute(select(Rating.bot_id, Rating.mu).where(
            Rating.profile == profile, Rating.bot_id.in_(ids))).all())
        matches = dict(s.execute(select(Rating.bot_id, Rating.matches).where(
            Rating.profile == profile, Rating.bot_id.in_(ids))).all())
        before = dict(s.execute(select(RatingHistory.bot_id, func.max(RatingHistory.id))
                                .where(RatingHistory.profile == profile,
                                       RatingHistory.at < since, RatingHistory.bot_id.in_(ids))
                                .group_by(RatingHistory.bot_id)).all())
        mu_of = dict(s.execute(select(RatingHistory.id, RatingHistory.mu)).all())
    out = {}
    for bot_id, count, first_id in recent:
        if bot_id in before:
            start = mu_of[before[bot_id]]
        elif matches.get(bot_id, 0) <= count:
            start = INITIAL_MU
        else:
            start = mu_of[first_id]
        out[bot_id] = now_mu[bot_id] - start
    return out


def test_the_days_rating_change_is_the_old_one(sessions, history, monkeypatch):
    monkeypatch.setattr(queries, "utcnow", lambda: NOW)
    for profile in ("soft", "sharp"):
        old = old_day_changes(sessions, profile)
        assert queries.day_changes(sessions, profile) == pytest.approx(old)
    assert old_day_changes(sessions, "soft")  # the day had ratings, and some before it


def test_the_house_bots_last_move_is_the_latest_of_all_their_actions(sessions, history):
    with sessions() as s:
        old = [s.scalar(select(func.max(ActionLog.created_at)).join(
            Match, Match.id == ActionLog.match_id).join(Bot, Bot.id == column).where(
            ActionLog.seat == seat, Bot.kind == HOUSE))
            for seat, column in ((0, Match.bot0_id), (1, Match.bot1_id))]
    expected = max(aware(t) for t in old if t is not None)
    got = queries.activity(sessions)["last_task"]["house move"]
    assert got == queries.iso(expected)


def test_the_last_ladder_match_and_the_hours_refusals_use_their_indexes(sessions, history):
    from sqlalchemy import inspect

    with sessions() as s:
        indexes = {t: {tuple(i["column_names"]) for i in inspect(s.get_bind()).get_indexes(t)}
                   for t in ("matches", "ladder_matches", "refusals", "rating_history")}
        newest = s.scalar(select(func.max(LadderMatch.created_at)))
    assert ("bot0_id", "id") in indexes["matches"] and ("bot1_id", "id") in indexes["matches"]
    assert ("created_at",) in indexes["ladder_matches"]
    assert ("created_at",) in indexes["refusals"]
    assert ("profile", "at") in indexes["rating_history"]
    assert queries.activity(sessions)["last_task"]["ladder match started"] == \
        queries.iso(aware(newest))


def test_the_standings_page_draws_the_best_rows_and_links_to_all(sessions, history):
    url = sessions.kw["bind"].url.render_as_string(hide_password=False)
    app = create_app({"DATABASE_URL": url, "STANDINGS_ROWS": 3, "TESTING": True})
    client = app.test_client()
    every = client.get("/api/standings?profile=soft").get_json()["profiles"]["soft"]
    assert len(every) == len(NAMES)  # the JSON has every row
    page = client.get("/standings/soft").get_data(as_text=True)
    assert page.count("<tr data-bot=") == 3
    assert [f'data-bot="{r["bot_id"]}"' in page for r in every] == [True] * 3 + [False] * 5
    assert f"The best 3 of {len(NAMES)} bots" in page and "all=1" in page
    whole = client.get("/standings/soft?all=1").get_data(as_text=True)
    assert whole.count("<tr data-bot=") == len(NAMES) and "The best" not in whole
    assert client.get("/standings").get_data(as_text=True).count("<tr data-bot=") == 6
    app.extensions["bummerl.sessions"].kw["bind"].dispose()
