"""Every duplicate pair ends, with real processes (`bummerl serve`, a Celery worker with beat on
the real Redis, bots run by `bummerl bot run`) on PostgreSQL (issue 29):

- a version test run with docs/version-tests.md's commands as written (both versions
  `--challenges-only`, `bummerl test start ...`, `bummerl test show`) to its decision;
- a tournament cancelled, and a bot withdrawn, while a pair of that bot is between its legs.

After each: no pair left open, the bot's export (`bummerl games export --bot`) complete (no
match withheld by the release horizon), each of its finished matches' pages showing its seed
and whether it counts, and the ladder pairing the bot again (in a process that takes the
ladder: never in a challenges-only one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from eventsite import Site, event_site
from sqlalchemy import func, select

from db.models import FINISHED, ORIGIN_TEST, RUNNING, Bot, Match
from db.pairs import FINAL, OWNER_TEST, OWNER_TOURNAMENT, PLAYING, VOID, DuplicatePair
from db.versiontests import VersionTest
from workers.app import ROOT
from workers.testing import wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

DOC = ROOT / "docs" / "version-tests.md"
BIN = Path(sys.executable).parent  # the venv's `bummerl`
README = ROOT / "README.md"
# The README's bot is class MyBot in mybot.py; its versions here: 1.9 plays at random, 2.0 is
# the greedy example, much stronger. The files define MyBot and no other bot class, so the
# doc's commands must name the README's class (issue 44: they ran `mybot.py:Bot`, the kit's
# abstract class, every turn a NotImplementedError).
OLD = "from examples.random_bot import RandomBot as MyBot\n"  # mybot.py: 1.9
NEW = "from examples.simple_bot import SimpleBot as MyBot\n"  # mybot_new.py: 2.0, stronger


@pytest.fixture
def site(postgres_url, redis_url, tmp_path):
    with event_site(postgres_url, redis_url, tmp_path) as site:
        site.env["BUMMERL_LADDER_EVERY"] = "1"  # the ladder runs all along
        site.env["BUMMERL_TESTS_EVERY"] = "0.5"
        site.add_house(["house-r"], "random")  # the ladder's opponent
        (tmp_path / "mybot.py").write_text(OLD)
        (tmp_path / "mybot_new.py").write_text(NEW)
        yield site


def doc_commands() -> dict[str, list[str]]:
    """The commands of docs/version-tests.md's "Running one" (before its synopsis), by their
    first two words."""
    section = DOC.read_text().split("## Running one", 1)[1].split("\n## ", 1)[0]
    section = section.split("Every command and its options", 1)[0]
    found: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line.startswith("    bummerl "):
            command = line.strip().removesuffix("&").strip()
            found.setdefault(" ".join(command.split()[1:3]), []).append(command)
    return found


def shell_env(site: Site, token: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BUMMERL_")}
    return {**env, "PATH": f"{BIN}:{env['PATH']}", "TOKEN": token,
            "BUMMERL_SERVER": site.service.address, "PYTHONPATH": str(ROOT)}


def start(site: Site, command: str, token: str, log: str) -> subprocess.Popen:
    """Run a documented `bummerl bot run ...` line in the background, as a shell would."""
    with open(site.tmp / log, "ab") as out:
        proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=site.tmp,
                                env=shell_env(site, token), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    site.kits[log] = proc  # stopped with the site
    return proc


def run(site: Site, command: str, token: str) -> str:
    """Run a documented command to its end (exit status 0); its output."""
    done = subprocess.run(["bash", "-c", command], cwd=site.tmp, env=shell_env(site, token),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    return done.stdout


def logged(site: Site, log: str, text: str) -> bool:
    path = site.tmp / log
    return path.exists() and text in path.read_text(errors="replace")


def started_in(site: Site, log: str) -> set[int]:
    """The matches a kit's log says it played."""
    text = (site.tmp / log).read_text(errors="replace") if (site.tmp / log).exists() else ""
    return {int(i) for i in re.findall(r"match (\d+)(?: started|: playing)", text)}


def bot_id(site: Site, name: str) -> int:
    with site.sessions() as s:
        found = s.scalar(select(Bot.id).where(Bot.name == name))
    assert found is not None
    return int(found)


def bot_matches(site: Site, bot: int) -> list[Match]:
    return [m for m in site.matches().values() if bot in (m.bot0_id, m.bot1_id)]


def open_pairs(site: Site, owner: str, owner_id: int) -> list[DuplicatePair]:
    with site.sessions() as s:
        rows = list(s.scalars(select(DuplicatePair).where(
            DuplicatePair.owner == owner, DuplicatePair.owner_id == owner_id,
            DuplicatePair.state.not_in(FINAL))))
        s.expunge_all()
    return rows


def check_released(site: Site, name: str, token: str) -> list[Match]:
    """Once no match of `name` runs: its export holds every finished match of it (none
    withheld), and each one's page shows its seed and, for a pair's leg, whether it counts;
    its finished matches."""
    bot = bot_id(site, name)
    wait_until(lambda: not any(m.state == RUNNING for m in bot_matches(site, bot)), 60,
               every=0.3, what=f"{name}'s running matches to end")
    finished = [m for m in bot_matches(site, bot) if m.state == FINISHED]
    out = site.tmp / f"{name}.jsonl"
    done = subprocess.run(
        [str(BIN / "bummerl"), "games", "export", "--bot", name, "--no-progress", "-o",
         str(out)], env=shell_env(site, token), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "withheld" not in done.stderr, done.stderr
    exported = {json.loads(line)["match_id"] for line in out.read_text().splitlines()}
    # (the ladder goes on: a match that finished during the export may be in it too)
    after = {m.id for m in bot_matches(site, bot) if m.state == FINISHED}
    assert {m.id for m in finished} <= exported <= after, done.stderr

    from web import create_app

    client = create_app({"DATABASE_URL": site.url, "TESTING": True}).test_client()
    with site.sessions() as s:
        pairs = {p.id: p for p in s.scalars(select(DuplicatePair).where(
            DuplicatePair.id.in_({m.pair_id for m in finished if m.pair_id})))}
    for m in finished:
        page = client.get(f"/matches/{m.id}").get_data(as_text=True)
        assert f"<dt>seed</dt><dd>{m.seed}</dd>" in page, f"match {m.id}'s seed hidden"
        if m.pair_id is not None:
            counts = ("voided, not counted" if pairs[m.pair_id].state == "void"
                      else "counted")
            assert f'<span class="counts">{counts}' in page, (m.id, pairs[m.pair_id].state)
    return finished


def check_ladder_pairs(site: Site, name: str, since: int, log: str,
                       never_in: tuple[str, ...] = ()) -> Match:
    """The ladder gives `name` a match made after match `since`, played by the process of
    `log` and by none of `never_in`; that match."""
    bot = bot_id(site, name)

    def ladder_match() -> Match | None:
        return next((m for m in bot_matches(site, bot)
                     if m.id > since and m.pair_id is None and m.id in started_in(site, log)),
                    None)

    match = wait_until(ladder_match, 60, every=0.3, what=f"the ladder to pair {name} again")
    for other in never_in:
        assert match.id not in started_in(site, other), f"{other} was sent match {match.id}"
    return match


def readme_bot_class() -> str:
    """The class of the README's `mybot.py`."""
    guide = README.read_text().split("**2. Write `mybot.py`:**", 1)[1]
    code = re.search(r"```python\n(.*?)```", guide, re.S).group(1)  # type: ignore[union-attr]
    return re.search(r"^class (\w+)\(Bot\):", code, re.M).group(1)  # type: ignore[union-attr]


def test_a_version_test_run_as_documented_ends_with_every_pair_final(site):
    commands = doc_commands()
    kits, (start_test,), (show,), (keep,) = (commands["bot run"][:2], commands["test start"],
                                              commands["test show"], commands["bot run"][2:])
    assert all("--challenges-only" in k for k in kits) and "--challenges-only" not in keep
    assert readme_bot_class() == "MyBot"
    assert [c.split()[3] for c in (*kits, keep)] == \
        ["mybot.py:MyBot", "mybot_new.py:MyBot", "mybot_new.py:MyBot"]
    site.add_remote("mybot", start=False)
    token = site.tokens["mybot"]
    site.start_worker()
    for i, command in enumerate(kits):
        start(site, command, token, f"kit{i}.log")
    wait_until(lambda: all(logged(site, f"kit{i}.log", "connected to") for i in range(2)),
               30, every=0.2, what="both versions connected")

    began = time.monotonic()
    out = run(site, start_test, token)
    test_id = int(re.search(r"test (\d+)", out).group(1))  # type: ignore[union-attr]
    if "pairs      0 " in out:  # before any pair: no score or Elo (issue 44)
        assert "score      no pairs played yet" in out and "95%" not in out, out
    show = show.replace(" 1 ", f" {test_id} ")

    def decided() -> str | None:
        shown = run(site, show, token)
        state = re.search(rf"test {test_id}: (\w+)", shown)
        assert state is not None, shown
        return shown if state.group(1).lower() not in ("waiting", "running") else None

    try:
        shown = wait_until(decided, 120, every=1.0, what="the test's decision")
    except AssertionError as e:
        raise AssertionError(f"{e}\n{site.report(test_id)}") from None
    assert f"test {test_id}: H1" in shown, shown
    # the matches the doc says `test show` lists: each with its pair, seats and versions
    listed = [int(i) for i in re.findall(r"^  #(\d+) +pair \d+·[01]  mybot@", shown, re.M)]
    with site.sessions() as s:
        test_legs = list(s.scalars(select(Match.id).where(
            Match.origin == ORIGIN_TEST, Match.event_id == test_id).order_by(Match.id.desc())))
    assert listed and listed == test_legs[:50], shown
    assert re.search(r"mybot@(1\.9|2\.0)( \(won\))? vs mybot@(1\.9|2\.0).*; counted", shown), shown
    print(f"decided after {time.monotonic() - began:.1f} s: "
          f"{re.search(r'pairs .*', shown).group(0)}")  # type: ignore[union-attr]
    # the decision leaves no pair open: those in play are void at once (not counted)
    assert open_pairs(site, OWNER_TEST, test_id) == []
    with site.sessions() as s:  # the void ones are counted as such ("pairs played N (+M void")
        voided = s.scalar(select(func.count()).select_from(DuplicatePair).where(
            DuplicatePair.owner == OWNER_TEST, DuplicatePair.owner_id == test_id,
            DuplicatePair.state == VOID))
        assert s.get(VersionTest, test_id).voided == voided  # type: ignore[union-attr]
    legs = [m for m in site.matches().values() if m.origin == ORIGIN_TEST]
    assert legs and all({m.version0, m.version1} == {"1.9", "2.0"} for m in legs)
    last = max(m.id for m in site.matches().values())
    check_released(site, "mybot", token)

    start(site, keep, token, "kit-ladder.log")  # the doc's "run the version you keep"
    match = check_ladder_pairs(site, "mybot", last, "kit-ladder.log",
                               never_in=("kit0.log", "kit1.log"))
    seat = 0 if match.bot0_id == bot_id(site, "mybot") else 1
    assert (match.version0, match.version1)[seat] == "2.0"
    # while it ran, no ladder match reached a challenges-only process
    test_legs = {m.id for m in legs}
    assert started_in(site, "kit0.log") | started_in(site, "kit1.log") <= test_legs


def mid_pair(site: Site, tid: int, bot: int) -> DuplicatePair:
    """Wait until a pair of `bot` in tournament `tid` is between its legs: leg 0 finished, leg 1
    made; that pair."""
    def between() -> DuplicatePair | None:
        pairs = site.pairs(tid)  # first: a leg it names is in the matches read after
        matches = site.matches()
        for p in pairs:
            if (p.state == PLAYING and bot in (p.bot_a_id, p.bot_b_id)
                    and p.match_a_id is not None and p.match_b_id is not None
                    and matches[p.match_a_id].state == FINISHED
                    and matches[p.match_b_id].state == RUNNING):
                return p
        return None

    return wait_until(between, 90, every=0.05, what="a pair between its legs")


def tournament_site(site: Site) -> tuple[int, int, str]:
    site.add_house(["t0", "t1"], "random")
    site.add_remote("kit")
    site.start_worker()
    wait_until(lambda: site.connected(["kit"]), 30, every=0.2, what="the kit to connect")
    tid = site.create("--format", "round-robin", "--bots", "kit,t0,t1", "--concurrency", "1",
                      "--time-control", "2s+6s")
    return tid, bot_id(site, "kit"), site.tokens["kit"]


def test_a_tournament_cancelled_mid_pair_releases_everything(site):
    tid, kit, token = tournament_site(site)
    pair = mid_pair(site, tid, kit)
    assert "cancelled" in site.cli("cancel", str(tid), "--reason", "mid-pair")
    assert open_pairs(site, OWNER_TOURNAMENT, tid) == []
    assert next(p for p in site.pairs(tid) if p.id == pair.id).state == "void"
    last = max(m.id for m in site.matches().values())
    finished = check_released(site, "kit", token)
    assert pair.match_a_id in {m.id for m in finished}  # leg 0: exported, its seed shown
    from web import create_app

    page = create_app({"DATABASE_URL": site.url, "TESTING": True}).test_client().get(
        f"/tournaments/{tid}").get_data(as_text=True)
    assert "void" in page
    check_ladder_pairs(site, "kit", last, "kit.log")


def test_a_bot_withdrawn_mid_pair_is_released(site):
    tid, kit, token = tournament_site(site)
    pair = mid_pair(site, tid, kit)
    assert "forfeited" in site.cli("withdraw", str(tid), "kit", "--reason", "mid-pair")
    assert [p for p in open_pairs(site, OWNER_TOURNAMENT, tid)
            if kit in (p.bot_a_id, p.bot_b_id)] == []
    assert next(p for p in site.pairs(tid) if p.id == pair.id).state == "forfeited"
    last = max(m.id for m in site.matches().values())
    finished = check_released(site, "kit", token)
    assert pair.match_a_id in {m.id for m in finished}
    check_ladder_pairs(site, "kit", last, "kit.log")
