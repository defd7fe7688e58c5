"""`bummerl exercises cut`: exercises for people cut from the analysed matches (no service
needed; docs/analysis.md, "Hints and exercises for people").

    bummerl exercises cut [--limit N] [--database-url URL]

Looks at every analysed match that has no exercise yet (at most N), keeps each position where
exactly one action is best against every hand the opponent could hold (each solved exactly) in
`exercises`, and prints one JSON line: the matches looked at, the exercises stored. The workers
do the same after each analysis (`bummerl.analyse`) and as the `bummerl.cut_exercises` task.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: Any) -> None:
    group = subparsers.add_parser(
        "exercises", help="exercises for people, cut from analysed matches",
        description="Exercises for people: positions with exactly one right action.")
    commands = group.add_subparsers(dest="exercises_command", metavar="COMMAND", required=True)
    cut = commands.add_parser(
        "cut", help="cut exercises from the analysed matches that have none yet",
        description="Keep every position of the analysed matches where exactly one action is "
                    "best against every hand the opponent could hold (each solved exactly).")
    cut.add_argument("--limit", type=int, default=None, metavar="N",
                     help="look at most at N matches (default: all)")
    cut.add_argument("--database-url", default=None,
                     help="the database (default: $DATABASE_URL, else SQLite under var/)")
    cut.set_defaults(func=run_cut)


def run_cut(args: argparse.Namespace) -> int:
    from client.errors import KitError
    from db.base import make_session_factory
    from workers.exercises import cut_all

    if args.limit is not None and args.limit < 1:
        raise KitError(f"bad --limit {args.limit}: at least 1")
    sessions = make_session_factory(args.database_url)
    try:
        print(json.dumps(cut_all(sessions, limit=args.limit)))
    finally:
        sessions.kw["bind"].dispose()
    return 0
