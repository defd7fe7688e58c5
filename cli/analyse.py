"""`bummerl analyse MATCH_ID|FILE...`: every decision of finished matches valued from the
deciding seat's observation (docs/analysis.md), with a progress bar on stderr.

A whole number is a match id, read from a running service's `ExportMatches` (as `bummerl games
export --match ID` reads it); anything else is a file of match records (one document, or JSON
lines as `bummerl games export` writes them), analysed offline with no server. Each record is
written to stdout (or `-o FILE`) as one JSON line with its `analysis` field filled in, and a
line per match on stderr says what each seat lost.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

from client.errors import KitError
from client.recordfiles import records_of, write_analysed


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "analyse", help="value every decision of finished matches (loss, best action)",
        description="For every decision of each finished match: the value of each legal "
                    "action for the deciding seat from what it knew, the best one and the "
                    "loss; exact where every card is placed or one action is best against "
                    "every hand the opponent could hold, else an estimate with its standard "
                    "error (docs/analysis.md). MATCH_ID reads the match from the service; "
                    "FILE reads match records (JSON lines), no server needed. Writes each "
                    "record with its `analysis` as one JSON line.")
    parser.add_argument("targets", nargs="+", metavar="MATCH_ID|FILE")
    parser.add_argument("--samples", type=int, default=None,
                        help="deals sampled per estimated decision (default: analysis.SAMPLES)")
    parser.add_argument("-o", "--output", metavar="FILE", default="-",
                        help="write to FILE instead of stdout")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"),
                        help="host:port of the service, for match ids (default: "
                             "$BUMMERL_SERVER or %(default)s)")
    parser.add_argument("--wait", type=float, default=30.0, metavar="S",
                        help="how long to wait for the service to answer (default: %(default)s)")
    from client.connect import add_arguments

    add_arguments(parser)  # --tls, --ca
    parser.set_defaults(func=run)


def fetch(args: argparse.Namespace, match_id: int) -> dict[str, Any]:
    """The record of finished match `match_id`, from the service's export."""
    from bummerl.v1 import match_pb2, match_pb2_grpc

    from cli.errors import ready_channel

    with ready_channel(args.server, args.wait, tls=args.tls, ca=args.ca) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        for reply in stub.ExportMatches(match_pb2.ExportMatchesRequest(match_id=match_id,
                                                                       limit=1)):
            return dict(json.loads(reply.record_json))
    raise KitError(f"match {match_id} has no record: it is not finished (or does not exist)")


def targets(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    for target in args.targets:
        if target.isdigit():
            yield fetch(args, int(target))
        elif os.path.exists(target) or not target.lstrip("-").isdigit():
            yield from records_of(target)
        else:
            raise KitError(f"{target!r} is neither a match id (a whole number) nor a file")


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from analysis import SAMPLES, analyse_record, count_actions

    samples = SAMPLES if args.samples is None else args.samples
    if samples < 1:
        raise KitError(f"--samples must be 1 or more, not {samples}")

    def analysed(record: dict[str, Any]) -> dict[str, Any]:
        with tqdm(total=count_actions(record), unit="action", file=sys.stderr,
                  desc=f"match {record.get('match_id')}", disable=args.no_progress) as bar:
            return analyse_record(record, samples=samples, progress=bar.update)

    write_analysed(targets(args), args.output, analysed)
    return 0
