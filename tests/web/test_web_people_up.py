"""The README's "Play in your browser" as a newcomer follows it: `bummerl up` (what
`bash scripts/run` starts, embedded defaults, in temporary folders), then the web's /play as a
guest against house-random, played to the end through the web, then the README's commands that
check the deal, as written: the seed's SHA-256 is the commitment shown from the start, and
`bummerl replay` verifies the match record downloaded with curl."""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from tablekit import Person, wait_for

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_the_readme_play_in_your_browser(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'bummerl.sqlite3'}",
           "BUMMERL_BROKER_DIR": str(tmp_path / "broker"),
           "BUMMERL_BEAT_SCHEDULE": str(tmp_path / "beat"), "COLUMNS": "160",
           "BUMMERL_HOUSE_MIN_THINK_MS": "50", "BUMMERL_LADDER_MATCHES": "0"}
    for name in ("BUMMERL_BROKER_URL", "REDIS_URL", "BUMMERL_WEB_TOKEN",
                 "BUMMERL_OPERATOR_TOKEN", "BUMMERL_HOUSE_TOKEN"):
        env.pop(name, None)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "up", "--address", "127.0.0.1:0",
         "--web", f"127.0.0.1:{port}", "--duration", "240"], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        header = []
        for line in proc.stdout:
            header.append(line)
            if "Ctrl-C stops everything" in line:
                break
        # the tables' live streams: the socket tier, on the dashboard's next port
        assert f"tables' live streams http://127.0.0.1:{port + 1}" in "".join(header)
        web = f"http://127.0.0.1:{port}"
        person = Person(web)
        status, body, _ = person.get("/play")
        assert status == 200 and "Play as a guest" in body
        person.guest("newcomer")
        status, body, _ = person.get("/play")
        assert 'data-bot="house-random"' in body
        match_id = person.start("house-random")
        _, page, _ = person.get(f"/table/{match_id}")
        live = html.unescape(re.search(r'data-live-url="([^"]+)"', page).group(1))  # type: ignore[union-attr]
        assert live.startswith(f"http://127.0.0.1:{port + 1}/sockets/table/{match_id}?ticket=")
        stream = urllib.request.urlopen(urllib.request.Request(  # the page's EventSource
            live, headers={"Origin": web}), timeout=60)
        assert stream.headers["Access-Control-Allow-Origin"] == web
        rng = random.Random(1)
        for _ in range(400):
            state = wait_for(lambda: (lambda t: t if t["state"] != "running"
                                      or t["to_act"] == t["seat"] else None)(
                person.table(match_id)), 60, "the house bot's answer")
            if state["state"] != "running":
                break
            person.act(match_id, rng.choice(state["legal"]), state["seq"])
        assert state["state"] == "finished"
        pushed = []  # every change came pushed, to the last
        for raw in stream:
            if raw.startswith(b"id: "):
                pushed.append(int(raw[4:]))
            if raw.startswith(b"event: end"):
                break
        stream.close()
        assert pushed and pushed[-1] == state["seq"]
        # the README's check as written, run where a reader would (a folder with the .venv):
        # the hash of the seed, then the record downloaded and re-dealt by the engine
        seed = state["seed"]
        block = README.read_text().split("## Play in your browser", 1)[1]
        script = re.search(r"```sh\n(.*?)```", block, re.S).group(1)  # type: ignore[union-attr]
        assert "curl -s 'http://127.0.0.1:8000/api/export?match=ID' > match-ID.jsonl" in script
        script = script.replace("SEED", seed).replace("ID", str(match_id)).replace(
            "http://127.0.0.1:8000", web)
        (tmp_path / ".venv").symlink_to(ROOT / ".venv")
        reader_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}

        def check() -> subprocess.CompletedProcess | None:
            done = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True,
                                  env=reader_env, cwd=tmp_path)
            return done if done.returncode == 0 and len(done.stdout.splitlines()) > 1 else None

        done = wait_for(check, 30, "the README's check")
        commitment, verdict = done.stdout.splitlines()[:2]
        assert commitment == state["commitment"] == hashlib.sha256(seed.encode()).hexdigest()
        assert json.loads(verdict)["verified"] is True, done.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
