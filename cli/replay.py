"""`bummerl replay FILE...`: replay conformance cases and match records.

A conformance case gets the JSON its `expect` must hold (/work/shared/conformance/README.md's
contract). A match record (docs/match-record.md) is checked against the engine: one line
`{"match_id", "verified", "problems", "match"}`. A file may hold one document (a case or a
record, pretty-printed or not) or many as JSON lines (what `bummerl games export` writes): one
line of output per document (client/replay.py, which the kit's `bummerl-kit replay` runs too).
"""

from __future__ import annotations

import argparse
from typing import Any

from client.replay import replay_files


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="replay conformance cases and check match records, one JSON line each",
        description="For each conformance case, apply its actions with the engine and print one "
                    "line: the JSON object its `expect` should hold. For each match record "
                    "(as `bummerl games export` writes them, one per line), replay it and print "
                    "{\"match_id\", \"verified\", \"problems\", \"match\"}: verified is false, "
                    "and problems says where, when the record and the rules disagree. Anything "
                    "else gets {\"invalid\": why}. Exit status 0 when every file was read and "
                    "every record verified, 1 when a record did not verify, 2 when a file or "
                    "document was invalid.")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return replay_files(args.files)
