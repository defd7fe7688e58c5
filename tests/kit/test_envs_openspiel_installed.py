"""The OpenSpiel game as an author installs it (issue 45): without extras the kit says which
extra `register_openspiel` needs; `pip install 'bummerl_kit-….whl[openspiel]'` into a fresh
virtual environment brings open-spiel, and the installed game passes OpenSpiel's
`random_sim_test` in both profiles and OpenSpiel's IS-MCTS plays a hand of it to the end."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from kitkit import Kit, installed_kit, with_extra


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return installed_kit(tmp_path_factory)


def test_without_extras_register_openspiel_names_the_extra(kit):
    done = kit.run("from bummerl_kit.envs import register_openspiel\n"
                   "try:\n"
                   "    register_openspiel()\n"
                   "except ImportError as error:\n"
                   "    print(error)\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("register_openspiel needs open-spiel (pyspiel): pip install "
                                   "'bummerl-kit[openspiel]'")


def test_the_openspiel_extra_installs_and_its_game_passes_openspiels_checks(kit, tmp_path):
    python = with_extra(kit, "openspiel", tmp_path / "venv", timeout=900)
    done = subprocess.run(
        [str(python), "-c",
         "import numpy as np, pyspiel\n"
         "import bummerl_kit.envs.openspiel_game as og\n"
         "from bummerl_kit.envs import register_openspiel\n"
         "print(og.__file__)\n"
         "register_openspiel()\n"
         "for profile in ('soft', 'sharp'):\n"
         "    game = pyspiel.load_game('python_schnapsen', {'profile': profile})\n"
         "    pyspiel.random_sim_test(game, num_sims=20, serialize=False, verbose=False)\n"
         "    bot = og.ismcts_bot(game, simulations=10, seed=1)\n"
         "    state, rng = game.new_initial_state(), np.random.RandomState(2)\n"
         "    while not state.is_terminal():\n"
         "        if state.is_chance_node():\n"
         "            outcomes, p = zip(*state.chance_outcomes())\n"
         "            state.apply_action(int(rng.choice(outcomes, p=p)))\n"
         "        else:\n"
         "            state.apply_action(bot.step(state))\n"
         "    print(profile, sum(state.returns()), max(state.returns()))\n"],
        cwd=tmp_path, env=kit.env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert Path(lines[0]).is_relative_to(tmp_path / "venv"), done.stdout
    for line, profile in zip(lines[1:], ("soft", "sharp"), strict=True):
        name, total, best = line.split()
        assert name == profile and float(total) == 0 and float(best) in (1, 2, 3), line
