"""Benchmark: the kit as an author installs it, beside the raw engine measured in the same run.

    .venv/bin/python bench/kit.py [-n HANDS] [--rounds R] [--imports K] [--venv DIR]

It builds the kit's wheel from this tree (tools/kit.py, into a temporary folder), installs it
into the virtual environment `--venv` (made when missing; default /tmp/bummerl-kit-bench) and
prints, each with its ratio to the raw engine:
- random-play hands a second of the raw engine (this tree's `engine`, in .venv), of the
  installed kit's engine (`bummerl_kit.engine`), and of VU's `schnapsen` 0.0.5 engine (its
  venv made as bench/vu.py says: `python3 -m venv /tmp/vu-venv && /tmp/vu-venv/bin/pip install
  schnapsen==0.0.5`; skipped, saying why, without it). Each is HANDS random hands in a fresh
  process, the median of R rounds (the engines take turns in each round); a player picks
  uniformly among its legal moves (bummerl's claims exactly when the claim is right; VU's
  rules have no claims: its RandBot). Times are the process's CPU time (`time.process_time`),
  so other processes on the machine do not count;
- the kit's import time: `import bummerl_kit` in a fresh process of the venv, the median of K
  (beside `import engine` in .venv);
- the wheel's size (beside the raw engine's sources, engine/*.py);
- steps a second through the training environments, `bummerl_kit.envs`'s PettingZoo
  environment (an `env.step` with an action: the terminal `env.step(None)` of each agent is not
  counted) and OpenSpiel game (every `apply_action`: the deal's 20 chance steps a hand, then the
  players' actions), beside the raw engine's actions applied a second measured in the same
  rounds (this tree's, in .venv: the dev extras install pettingzoo and open-spiel); their hands
  a second too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VU_PYTHON = Path("/tmp/vu-venv/bin/python")
VU_VENV = "python3 -m venv /tmp/vu-venv && /tmp/vu-venv/bin/pip install schnapsen==0.0.5"

# Random play of `n` hands of bummerl's engine (imported as PACKAGE): its hands and its actions
# applied (steps) a second.
HANDS = """
import json, random, sys, time
from PACKAGE import Hand, deck_for
from PACKAGE.actions import CLAIM
from PACKAGE.rules import WINNING_POINTS

n = int(sys.argv[1])
rng = random.Random(1)
decks = [deck_for(1, i) for i in range(n)]
steps = 0
start = time.process_time()
for i in range(n):
    hand = Hand(decks[i], i & 1)
    while (seat := hand.to_act) is not None:
        steps += 1
        legal = hand.legal_actions()
        k = len(legal)
        if legal[-1] is CLAIM:  # claim comes last when it is legal
            if hand.points(seat) >= WINNING_POINTS:
                hand.apply(seat, CLAIM)
                break
            k -= 1
        hand.apply(seat, legal[int(rng.random() * k)])
elapsed = time.process_time() - start
print(json.dumps([n / elapsed, steps / elapsed]))
"""
# The same of VU's engine: a VU game is one hand, both players its RandBot.
VU_HANDS = """
import json, random, sys, time
from schnapsen.bots import RandBot
from schnapsen.game import SchnapsenGamePlayEngine

n = int(sys.argv[1])
engine = SchnapsenGamePlayEngine()
start = time.process_time()
for i in range(n):
    engine.play_game(RandBot(random.Random(2 * i)), RandBot(random.Random(2 * i + 1)),
                     random.Random(i))
print(json.dumps(n / (time.process_time() - start)))
"""
# Random play of `n` hands through the kit's training environments (this tree's, with the dev
# extras' pettingzoo and open-spiel): one hand an episode, random legal actions but the claim
# (played out to the end: the raw engine's players claim only when right, a random claim would
# end a hand early and flatter the figure); hands and steps a second.
PETTINGZOO_HANDS = """
import json, random, sys, time
from bummerl_kit.envs import pettingzoo_env
from bummerl_kit.envs.encoding import CLAIM_INDEX as CLAIM

n = int(sys.argv[1])
rng = random.Random(1)
env = pettingzoo_env(profile="soft", episode="hand")
steps = 0
start = time.process_time()
for i in range(n):
    env.reset(seed=i)
    for agent in env.agent_iter():
        observation, reward, ended, cut, info = env.last()
        if ended or cut:
            env.step(None)
            continue
        mask = observation["action_mask"]
        env.step(rng.choice([a for a in range(len(mask)) if mask[a] and a != CLAIM]))
        steps += 1
elapsed = time.process_time() - start
print(json.dumps([n / elapsed, steps / elapsed]))
"""
OPENSPIEL_HANDS = """
import json, random, sys, time
import pyspiel
from bummerl_kit.envs import register_openspiel
from bummerl_kit.envs.encoding import CLAIM_INDEX as CLAIM

n = int(sys.argv[1])
rng = random.Random(1)
register_openspiel()
game = pyspiel.load_game("python_schnapsen")
steps = 0
start = time.process_time()
for i in range(n):
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, weights = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, weights)[0])
        else:
            state.apply_action(rng.choice([a for a in state.legal_actions() if a != CLAIM]))
        steps += 1
elapsed = time.process_time() - start
print(json.dumps([n / elapsed, steps / elapsed]))
"""
# The import time of PACKAGE in a fresh process.
IMPORT = """
import json, time
start = time.process_time()
import PACKAGE
print(json.dumps(time.process_time() - start))
"""


def measure(python: Path | str, code: str, *args: str, cwd: Path | None = None) -> float:
    """The first (or only) figure `code` prints; `measures` gives them all."""
    return measures(python, code, *args, cwd=cwd)[0]


def measures(python: Path | str, code: str, *args: str, cwd: Path | None = None
             ) -> list[float]:
    """The figures `code` prints as JSON on its last line (a number or a list of numbers)."""
    done = subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True,
                          timeout=1800, cwd=cwd or tempfile.gettempdir())
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip()
                           else f"exit status {done.returncode}")
    value = json.loads(done.stdout.splitlines()[-1])
    return [float(v) for v in (value if isinstance(value, list) else [value])]


def install(venv: Path) -> tuple[Path, Path]:
    """Build the kit's wheel from this tree and install it into `venv` (made when missing);
    the wheel and the venv's Python."""
    build = tempfile.mkdtemp(prefix="bummerl-kit-bench-")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "kit.py"), "--outdir", build],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"the kit's build failed: {done.stderr.strip()[-2000:]}")
    (wheel,) = Path(build).glob("bummerl_kit-*.whl")
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    for extra in ([], ["--no-deps", "--force-reinstall"]):  # its dependencies, then this wheel
        done = subprocess.run([*pip, *extra, str(wheel)], capture_output=True, text=True,
                              timeout=900)
        if done.returncode != 0:
            raise SystemExit(f"pip install {wheel} failed: {done.stderr.strip()[-2000:]}")
    return wheel, python


def ratio(value: float, raw: float) -> str:
    return f"{value / raw:.2f}x the raw engine"


def envs(here: str, n: str, rounds: int) -> list[str]:
    """Steps (and hands) a second through the training environments (PettingZoo, OpenSpiel:
    this tree's `bummerl_kit.envs` in `here`, where the dev extras installed both), each beside
    the raw engine's actions (and hands) a second measured in the same rounds, in turn."""
    codes = {"raw": HANDS.replace("PACKAGE", "engine"), "pettingzoo": PETTINGZOO_HANDS,
             "openspiel": OPENSPIEL_HANDS}
    hands: dict[str, list[float]] = {name: [] for name in codes}
    steps: dict[str, list[float]] = {name: [] for name in codes}
    try:
        for _ in range(rounds):
            for name, code in codes.items():
                rate, step = measures(here, code, n, cwd=ROOT)
                hands[name].append(rate)
                steps[name].append(step)
    except RuntimeError as e:
        why = f"not measured: {e} (the dev extras install pettingzoo and open-spiel)"
        return [f"PettingZoo env steps/s:  {why}", f"OpenSpiel env steps/s:   {why}"]
    raw, zoo, spiel = (statistics.median(steps[k]) for k in codes)
    raw_hands, zoo_hands, spiel_hands = (statistics.median(hands[k]) for k in codes)
    return [f"raw engine steps/s:      {raw:10,.0f}   (actions applied, in the environments' "
            f"rounds; {raw_hands:,.0f} hands/s)",
            f"PettingZoo env steps/s:  {zoo:10,.0f}   {ratio(zoo, raw)} (pettingzoo_env("
            f"episode='hand'): env.step with an action, random legal actions; {zoo_hands:,.0f} "
            f"hands/s, {ratio(zoo_hands, raw_hands)}'s hands/s)",
            f"OpenSpiel env steps/s:   {spiel:10,.0f}   {ratio(spiel, raw)} (python_schnapsen: "
            f"every apply_action, the deal's 20 chance steps a hand included; "
            f"{spiel_hands:,.0f} hands/s, {ratio(spiel_hands, raw_hands)}'s hands/s)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--hands", type=int, default=2000,
                        help="random hands per round (default %(default)s)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds; the median is printed")
    parser.add_argument("--imports", type=int, default=5,
                        help="fresh processes timing the import; the median is printed")
    parser.add_argument("--venv", type=Path, default=Path("/tmp/bummerl-kit-bench"),
                        help="the virtual environment the kit is installed into "
                             "(default %(default)s)")
    parser.add_argument("--vu-python", type=Path, default=VU_PYTHON,
                        help="the Python of the venv with schnapsen 0.0.5 (default "
                             "%(default)s)")
    args = parser.parse_args(argv)
    if min(args.hands, args.rounds, args.imports) < 1:
        parser.error("-n, --rounds and --imports must be at least 1")
    wheel, python = install(args.venv)
    n, rounds = str(args.hands), args.rounds
    here = Path(sys.executable)
    print(f"random play, {args.hands} hands a round, median of {rounds} rounds; the kit "
          f"installed from {wheel.name} into {args.venv}", flush=True)
    engines = {"raw": (here, HANDS.replace("PACKAGE", "engine"), ROOT),
               "kit": (python, HANDS.replace("PACKAGE", "bummerl_kit.engine"), None)}
    vu_skipped = None
    if not args.vu_python.exists():
        vu_skipped = f"skipped: no {args.vu_python} (make it: {VU_VENV})"
    else:
        engines["vu"] = (args.vu_python, VU_HANDS, None)
    rates: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(rounds):  # the engines in turn, round after round: a load that comes and
        for name, (interpreter, code, cwd) in list(engines.items()):  # goes hits them alike
            try:
                rates[name].append(measure(interpreter, code, n, cwd=cwd))
            except RuntimeError as e:
                if name != "vu":
                    raise
                vu_skipped = f"skipped: {e} (make its venv: {VU_VENV})"
                del engines[name]
    raw = statistics.median(rates["raw"])
    print(f"raw engine hands/s:      {raw:10,.0f}   (this tree's engine, {here})", flush=True)
    kit = statistics.median(rates["kit"])
    print(f"kit engine hands/s:      {kit:10,.0f}   {ratio(kit, raw)} "
          "(bummerl_kit.engine, installed)", flush=True)
    if vu_skipped is not None:
        print(f"VU schnapsen hands/s:    {vu_skipped}")
    else:
        vu = statistics.median(rates["vu"])
        print(f"VU schnapsen hands/s:    {vu:10,.0f}   {ratio(vu, raw)} "
              "(schnapsen 0.0.5, RandBot against RandBot)", flush=True)
    imports: dict[str, list[float]] = {"raw": [], "kit": []}
    for _ in range(args.imports):
        imports["raw"].append(measure(here, IMPORT.replace("PACKAGE", "engine"), cwd=ROOT))
        imports["kit"].append(measure(python, IMPORT.replace("PACKAGE", "bummerl_kit")))
    raw_import, kit_import = (statistics.median(imports[k]) for k in ("raw", "kit"))
    print(f"kit import time:         {kit_import * 1000:10,.1f} ms {ratio(kit_import, raw_import)}"
          f" (`import bummerl_kit`, fresh process, median of {args.imports}; `import engine`: "
          f"{raw_import * 1000:.1f} ms)", flush=True)
    size = wheel.stat().st_size
    sources = sum(p.stat().st_size for p in (ROOT / "engine").rglob("*.py"))
    print(f"wheel size:              {size / 1024:10,.1f} KiB {ratio(size, sources)} ({wheel.name};"
          f" the raw engine's sources engine/*.py: {sources / 1024:.1f} KiB)", flush=True)
    for line in envs(here, n, rounds):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
