"""The README's "Try it all" walkthrough runs as written (issues 11 and 22): it uses the names
and tokens the commands print, both bots finish their match, then practise: three unrated
challenges with both bots connected for challenges only, each bot exiting after its three.
The terminal shows the server's own lines only (no alembic INFO, no kombu note) and each bot
line says which bot speaks. Only the port, the bot file, the database and the broker's folder
are changed for the test."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_walkthrough_then_the_export_paragraph_run_as_written(tmp_path):
    """The walkthrough, then "Your games as data" (its own paragraph, run after it on its
    database), in one shell as a reader runs them: the walkthrough's matches are played as it
    says, the records verify, and the view holds mybot's turns."""
    text = README.read_text()
    guide = text.split("## Write a bot in 10 minutes", 1)[1]
    bot_code = re.search(r"```python\n(.*?)```", guide, re.S).group(1)
    walk = guide.split("**Try it all on your machine**", 1)[1]
    script = re.search(r"```sh\n(.*?)```", walk, re.S).group(1)
    assert "match create 1 2" not in script and "match create mybot randy" in script
    assert "--challenges-only --matches 3" in script
    games = guide.split("**Your games as data.**", 1)[1]
    marker = "echo WALKTHROUGH-DONE >&2\n"
    script += marker + re.search(r"```sh\n(.*?)```", games, re.S).group(1)
    (tmp_path / "mybot.py").write_text(bot_code)
    port = free_port()
    script = script.replace("127.0.0.1:50051", f"127.0.0.1:{port}")
    script = script.replace("mybot.py:MyBot", f"{tmp_path / 'mybot.py'}:MyBot")
    for name in ("games.jsonl", "seen.jsonl"):  # written beside the test, not in the tree
        script = script.replace(f" {name}", f" {tmp_path / name}")
    # no server left behind; `|| true`: the server may be gone, though still listed, by then (its
    # kill then fails, and under -e that failure was the script's exit status: a flaky test)
    script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # the default hooks, as for a reader (they queue rating tasks in the embedded broker)
    env.update(DATABASE_URL=f"sqlite:///{tmp_path / 'walk.sqlite3'}",
               BUMMERL_BROKER_DIR=str(tmp_path / "broker"))
    env.pop("BUMMERL_HOOKS", None)
    # files, not pipes: the server in the background must not hold the test's pipes open
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        done = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, stdout=out,
                              stderr=err, timeout=300)
    stdout, stderr = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    assert done.returncode == 0, stdout + stderr
    everything = stderr
    stderr = stderr.split("WALKTHROUGH-DONE", 1)[0]  # the walkthrough's part
    assert re.search(r"match id \d+\nseat 0: mybot \(bot id \d+\)\nseat 1: randy", stdout)
    assert stdout.count("turns ") == 4  # each bot's summary after its match, then its three
    assert stdout.count("unrated challenge") == 3
    assert "Traceback" not in stderr
    # the terminal: the server's own lines, and every bot line names its bot
    assert "alembic" not in stderr and "kombu" not in stderr, stderr
    kit = [line for line in stderr.splitlines()
           if re.match(r"\d\d:\d\d:\d\d (INFO|WARN)", line)]
    assert kit and all(re.search(r"\[(mybot|randy)\] ", line) for line in kit), stderr
    assert "--matches 3 reached: taking no new matches" in stderr
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{tmp_path / 'walk.sqlite3'}")
    with engine.connect() as connection:
        rows = connection.execute(text(
            "SELECT origin, rated, state, end_reason FROM matches ORDER BY id")).all()
    engine.dispose()
    assert [tuple(r) for r in rows] == [("manual", 1, "finished", "played")] + \
        [("challenge", 0, "finished", "played")] * 3


    # then the export paragraph
    records = (tmp_path / "games.jsonl").read_text().splitlines()
    verdicts = [json.loads(line) for line in stdout.splitlines() if line.startswith('{"match_id"')]
    # Every match mybot finished in the walkthrough (the manual one and the challenges) is
    # exported once, and every record replays to its result.
    assert len(records) >= 2, stdout + everything
    assert f"exported {len(records)} matches" in everything, stdout + everything
    assert sorted(v["match_id"] for v in verdicts) == sorted(
        json.loads(r)["match_id"] for r in records), stdout
    assert all(v["verified"] for v in verdicts), stdout
    seen = (tmp_path / "seen.jsonl").read_text().splitlines()
    assert len(seen) == len(records), seen
    for line in seen:
        view = json.loads(line)["view"]
        assert view["bot"] == "mybot" and view["turns"], view
    assert "Traceback" not in everything, everything
