"""The Celery broker's URL, from the environment (the variables are listed in `workers.app`).

A module of its own so that both the app and its metrics (`workers.metrics`, imported by the app
first) can read it.
"""

from __future__ import annotations

import os


def broker_url() -> str:
    url = os.environ.get("BUMMERL_BROKER_URL") or os.environ.get("REDIS_URL") or "bummerlfs://"
    if url.startswith("filesystem://"):
        url = "bummerlfs://" + url.removeprefix("filesystem://")
    return url
