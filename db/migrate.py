"""Apply the Alembic migrations: `python -m db.migrate [URL]` (default: DATABASE_URL / SQLite).

`python -m db.migrate --wait [SECONDS]` changes nothing: it waits until the database is at the
newest revision (the Kubernetes pods wait so for the migration Job), failing after SECONDS
(default 600). Give the URL before `--wait`: `python -m db.migrate URL --wait`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

INI = Path(__file__).resolve().parent / "alembic.ini"


def config(url: str | None = None) -> Config:
    cfg = Config(str(INI))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str | None = None, revision: str = "head") -> None:
    """Bring the database at `url` (default: the configured one) to `revision`."""
    command.upgrade(config(url), revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    command.downgrade(config(url), revision)


def is_current(url: str | None = None) -> bool:
    """Whether the database at `url` is at the newest revision (False if unreachable)."""
    from db.base import make_engine

    heads = set(ScriptDirectory.from_config(config(url)).get_heads())
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return set(MigrationContext.configure(connection).get_current_heads()) == heads
    except Exception:  # noqa: BLE001  (not reachable yet: not current)
        return False
    finally:
        engine.dispose()


WAIT_SECONDS = 600.0  # `--wait` alone


def wait(url: str | None = None, timeout: float = WAIT_SECONDS, every: float = 2) -> bool:
    """Wait until the database is current; False if it is not after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not is_current(url):
        if time.monotonic() > deadline:
            return False
        time.sleep(every)
    return True


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m db.migrate", description=__doc__)
    parser.add_argument("url", nargs="?", default=None,
                        help="database URL (default: DATABASE_URL, else SQLite under var/)")
    parser.add_argument("--wait", type=float, metavar="SECONDS", nargs="?", default=None,
                        const=WAIT_SECONDS,
                        help="do not migrate: wait until the database is current, failing "
                             f"after SECONDS (default {WAIT_SECONDS:g})")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.wait is not None:
        if wait(args.url, args.wait):
            return 0
        print(f"db.migrate: the database is not at the newest revision after {args.wait:g} s "
              "(has the migration Job run?)", file=sys.stderr)
        return 1
    upgrade(args.url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
