"""`bummerl db ...`: the operator's upkeep of the database itself (no service needed).

    bummerl db prune --actions-older-than DAYS --archive table [--dry-run]
    bummerl db prune --actions-older-than DAYS --archive records --dir DIR [--dry-run]

`prune` moves the action logs of matches that finished more than DAYS ago (and are rated, if
they are ladder matches) out of `actions`: to the table `actions_archive`, or to match-record
files in DIR (`db.prune` says what stays and how a crash is safe). Runs on the database of
`--database-url` (default: $DATABASE_URL, else SQLite under var/); the service may run meanwhile.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    group = subparsers.add_parser(
        "db", help="database upkeep: prune old action logs",
        description="The operator's upkeep of the database (no service needed).")
    commands = group.add_subparsers(dest="db_command", metavar="COMMAND", required=True)
    prune = commands.add_parser(
        "prune", help="move old finished matches' action logs to an archive",
        description="Move the action logs of matches that finished more than DAYS ago out of "
                    "the actions table (results, hands' scores and ratings stay), to the "
                    "archive table or to match-record files.")
    prune.add_argument("--actions-older-than", type=float, required=True, metavar="DAYS",
                       help="prune matches that finished more than DAYS days ago")
    prune.add_argument("--archive", choices=("table", "records"), required=True,
                       help="table: move the rows to actions_archive (pages still show them); "
                            "records: write match records to files in --dir, then drop")
    prune.add_argument("--dir", help="where --archive records writes its .jsonl files")
    prune.add_argument("--dry-run", action="store_true",
                       help="count what would be pruned; change nothing")
    prune.add_argument("--batch", type=int, default=500,
                       help="matches per transaction (default: %(default)s)")
    prune.add_argument("--database-url", default=None,
                       help="the database (default: $DATABASE_URL, else SQLite under var/)")
    prune.set_defaults(func=run_prune)


def run_prune(args: argparse.Namespace) -> int:
    from client.errors import KitError
    from db.base import MIGRATION_TIMEOUTS, make_engine
    from db.prune import BadPrune, prune

    usage = "(see `bummerl db prune --help`)"
    if args.actions_older_than < 0:
        raise KitError(f"--actions-older-than must be 0 or more, not "
                       f"{args.actions_older_than:g} {usage}")
    if args.batch < 1:
        raise KitError(f"--batch must be 1 or more, not {args.batch} {usage}")
    if args.archive == "records" and not args.dir:
        raise KitError(f"--archive records needs a directory for the record files: give it "
                       f"with --dir {usage}")
    if args.archive != "records" and args.dir:
        raise KitError(f"--dir goes with --archive records only {usage}")
    bind = make_engine(args.database_url, timeouts=MIGRATION_TIMEOUTS)  # no statement bound
    try:
        done = prune(bind, args.actions_older_than, args.archive, args.dir,
                     dry_run=args.dry_run, batch=args.batch,
                     say=lambda line: print(line, file=sys.stderr, flush=True))
    except BadPrune as e:
        raise KitError(str(e)) from None
    finally:
        bind.dispose()
    cutoff = done.cutoff.isoformat(timespec="seconds") if done.cutoff else "?"
    if done.dry_run:
        print(f"dry run: {done.matches:,} matches finished before {cutoff} "
              f"({done.actions:,} actions) would be pruned to the {args.archive} archive; "
              "nothing changed")
    else:
        print(f"pruned {done.matches:,} matches finished before {cutoff}: {done.actions:,} "
              f"actions moved to the {args.archive} archive"
              + (f" ({len(done.files)} files in {args.dir})" if done.files else ""))
    return 0
