"""The image holds every package the project installs: the Dockerfile copies each one that
pyproject.toml's package list names (analysis/ was missing once, and a worker importing it failed
to start only inside the image)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_dockerfile_copies_every_installed_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = {pattern.rstrip("*") for pattern in
             config["tool"]["setuptools"]["packages"]["find"]["include"]}
    packages = {name for name in names if (ROOT / name / "__init__.py").exists()}
    copied = set(re.findall(r"^COPY (\w+) \1$", (ROOT / "Dockerfile").read_text(), re.M))
    assert packages - copied == set(), "packages the image lacks"
