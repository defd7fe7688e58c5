"""The kit's environments as an author installs them (issue 45): without extras the kit holds
the encoding and the training rows of match records, and says which extra an environment
needs; `pip install
'bummerl_kit-….whl[pettingzoo]'` into a fresh virtual environment brings PettingZoo, and the
installed environment passes PettingZoo's API test in both profiles."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from kitkit import Kit, installed_kit, with_extra
from recordkit import play_record

from bummerl_kit import records


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Kit:
    return installed_kit(tmp_path_factory)


def test_without_extras_the_kit_encodes_and_names_the_extra_an_environment_needs(kit):
    done = kit.run(
        "from bummerl_kit.engine import Match\n"
        "from bummerl_kit.envs import encoding, pettingzoo_env\n"
        "match = Match(seed=1)\n"
        "obs = match.observe(match.to_act)\n"
        "print(len(encoding.observation_tensor(obs)), sum(encoding.legal_mask(obs)) > 0)\n"
        "try:\n"
        "    pettingzoo_env()\n"
        "except ImportError as error:\n"
        "    print(error)\n")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == "200 True"
    assert second.startswith("pettingzoo_env needs the kit's pettingzoo extra (no module ")
    assert second.endswith("): pip install 'bummerl-kit[pettingzoo]'"), second


def test_the_pettingzoo_extra_installs_and_its_environment_passes_the_api_test(kit, tmp_path):
    python = with_extra(kit, "pettingzoo", tmp_path / "venv", timeout=600)
    done = subprocess.run(
        [str(python), "-c",
         "import bummerl_kit.envs.aec as aec, pettingzoo, sys\n"
         "from pettingzoo.test import api_test\n"
         "from bummerl_kit.envs import pettingzoo_env\n"
         "print(aec.__file__, pettingzoo.__version__)\n"
         "for profile in ('soft', 'sharp'):\n"
         "    api_test(pettingzoo_env(profile), num_cycles=300)\n"],
        cwd=tmp_path, env=kit.env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    where, version = done.stdout.splitlines()[0].split()
    assert Path(where).is_relative_to(tmp_path / "venv") and version.startswith("1.27"), done.stdout
    assert done.stdout.count("Passed API test") == 2, done.stdout


def test_the_installed_kit_turns_a_record_into_the_same_rows(kit, tmp_path):
    record, _ = play_record(5)
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(record) + "\n")
    done = kit.run("import json, sys\n"
                   "from bummerl_kit import records\n"
                   "for row in records.rows_of_files(sys.argv[1:]):\n"
                   "    print(json.dumps(row.to_dict()))\n", str(path))
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        json.loads(json.dumps(row.to_dict())) for row in records.rows_of_files([path])]
