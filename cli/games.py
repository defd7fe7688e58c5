"""`bummerl games export`: download finished matches as match records, one JSON line each
(docs/match-record.md), from a running service's `ExportMatches`, with a progress bar on stderr.

A dropped connection is resumed where it stopped (the cursor of the last record written), a
few times, so the output holds each match once. At the end the command prints the cursor after
the last record: `--cursor` with it later exports only the matches that finished since. When
the service's release horizon held matches back (a finished leg of a duplicate pair whose other
leg has not ended, and what finished after it: the trailing metadata `bummerl-withheld`), it
says how many; the cursor stops before them, so running again with it later gets them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime
from typing import IO, Any

from client.errors import KitError, closed_pipe

ORIGINS = ("ladder", "challenge", "tournament", "test", "manual", "people")  # db.models.ORIGINS
RESUMES = 5  # reconnections after a dropped stream before giving up


def register(subparsers: Any) -> None:
    games = subparsers.add_parser("games", help="download finished matches as match records")
    commands = games.add_subparsers(dest="games_command", metavar="COMMAND", required=True)
    ex = commands.add_parser(
        "export", help="write finished matches as JSON lines (match records)",
        description="Write one match record (a JSON document, docs/match-record.md) per line "
                    "for each finished match the filters hold, in the order they finished, "
                    "with a progress bar on stderr. Check the records with `bummerl replay "
                    "FILE`. Every filter is optional.")
    ex.add_argument("--bot", metavar="NAME", default="", help="matches this bot plays in")
    ex.add_argument("--opponent", metavar="NAME", default="",
                    help="matches against this bot (with --bot: in the other seat)")
    ex.add_argument("--version", default="",
                    help="matches in which --bot's seat (or either seat) ran this version")
    ex.add_argument("--profile", choices=["soft", "sharp"], default=None)
    ex.add_argument("--origin", choices=ORIGINS, default="")
    ex.add_argument("--since", metavar="WHEN", default=None,
                    help="finished at or after WHEN (ISO 8601, e.g. 2026-12-01 or "
                         "2026-12-01T18:00; UTC unless it says otherwise)")
    ex.add_argument("--until", metavar="WHEN", default=None, help="finished before WHEN")
    ex.add_argument("--match", type=int, default=0, metavar="ID", help="just this match")
    ex.add_argument("--cursor", default="",
                    help="start after the record of this cursor (as a previous export printed)")
    ex.add_argument("--limit", type=int, default=0, help="at most this many records (0: all)")
    ex.add_argument("--view", action="store_true",
                    help="add each turn as your bot's seat saw it (needs --token: exports "
                         "your bot's matches)")
    from client.__main__ import default_token

    ex.add_argument("--token", default=default_token(),
                    help="your bot's token, for --view (default: $BUMMERL_TOKEN)")
    ex.add_argument("-o", "--output", metavar="FILE", default="-",
                    help="write to FILE instead of stdout")
    ex.add_argument("--no-progress", action="store_true", help="no progress bar")
    ex.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"),
                    help="host:port of the service (default: $BUMMERL_SERVER or %(default)s)")
    ex.add_argument("--wait", type=float, default=30.0, metavar="S",
                    help="how long to wait for the service to answer (default: %(default)s)")
    from client.connect import add_arguments

    add_arguments(ex)  # --tls, --ca
    ex.set_defaults(func=run_export, token_kind="bot")


def when(text: str | None, flag: str) -> datetime | None:
    """The moment an ISO 8601 `text` names (UTC unless it has an offset)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise KitError(f"{flag} {text!r} is not a date or time: write it like 2026-12-01 or "
                       "2026-12-01T18:00 (UTC) or 2026-12-01T18:00+01:00") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def request_of(args: argparse.Namespace, cursor: str, limit: int) -> Any:
    from bummerl.v1 import common_pb2, match_pb2

    profiles = {"soft": common_pb2.PROFILE_SOFT, "sharp": common_pb2.PROFILE_SHARP}
    request = match_pb2.ExportMatchesRequest(
        bot=args.bot, opponent=args.opponent, version=args.version,
        profile=profiles.get(args.profile or "", common_pb2.PROFILE_UNSPECIFIED),
        origin=args.origin, match_id=args.match, cursor=cursor, limit=limit,
        seat_view=args.view)
    for field, text, flag in (("finished_since", args.since, "--since"),
                              ("finished_until", args.until, "--until")):
        moment = when(text, flag)
        if moment is not None:
            getattr(request, field).FromDatetime(moment)
    return request


def run_export(args: argparse.Namespace) -> int:
    import grpc
    from bummerl.v1 import match_pb2_grpc
    from tqdm import tqdm

    from cli.errors import ready_channel

    if args.limit < 0:
        raise KitError(f"--limit must be 0 (all) or more, not {args.limit}")
    if args.view and not args.token:
        raise KitError("--view needs your bot's token: pass --token or set $BUMMERL_TOKEN")
    request_of(args, args.cursor, args.limit)  # a bad --since/--until before connecting
    metadata = (("authorization", f"Bearer {args.token}"),) if args.view else ()
    out = _open(args.output)
    written, cursor, bar, withheld = 0, args.cursor, None, 0
    resumes = 0
    try:
        while True:
            left = args.limit - written if args.limit else 0
            if args.limit and left <= 0:
                break
            try:
                with ready_channel(args.server, args.wait, tls=args.tls, ca=args.ca) as channel:
                    stub = match_pb2_grpc.MatchServiceStub(channel)
                    call = stub.ExportMatches(request_of(args, cursor, left),
                                              metadata=metadata)
                    for reply in call:
                        if bar is None:
                            bar = tqdm(total=reply.total, unit="match", file=sys.stderr,
                                       disable=args.no_progress)
                        out.write(reply.record_json + "\n")
                        written += 1
                        cursor = reply.cursor
                        bar.update(1)
                    withheld = withheld_of(call.trailing_metadata())
                break
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.PERMISSION_DENIED and args.view and args.bot:
                    raise KitError(f"--view shows your own bot's turns, and --bot {args.bot} "
                                   "is not the bot of this token (--token or $BUMMERL_TOKEN): "
                                   "give your bot's name, or leave --bot out") from None
                if e.code() != grpc.StatusCode.UNAVAILABLE or resumes >= RESUMES:
                    raise
                resumes += 1
                print(f"\nthe connection to {args.server} was lost after {written} records; "
                      f"resuming after the last one ({resumes} of {RESUMES})", file=sys.stderr)
                time.sleep(min(8.0, 0.5 * 2 ** resumes))
        out.flush()
    except BrokenPipeError:  # the reader went away (`| head`): stop, quietly
        return closed_pipe()
    finally:
        if bar is not None:
            bar.close()
        if out is not sys.stdout:
            out.close()
    where = "" if args.output == "-" else f" to {args.output}"
    if withheld:
        # The release horizon cut the export short: the cursor stops before the first leg
        # of a pair still being played, so resuming from it later gets that leg too.
        resume = f"--cursor {cursor}" if cursor else "the same command"
        print(f"exported {written} match{'es' * (written != 1)}{where}; {withheld} "
              f"match{'es' * (withheld != 1)} withheld until their pair's other leg ends (a "
              "leg of a duplicate pair, and what finished after it): to get them and the "
              f"ones that finish later, run again with {resume}", file=sys.stderr)
    elif not written:
        print("no finished match holds these filters", file=sys.stderr)
    else:
        print(f"exported {written} match{'es' * (written != 1)}{where}; to export only the "
              f"ones that finish later: --cursor {cursor}", file=sys.stderr)
    return 0


def withheld_of(metadata: Any) -> int:
    """How many matches the service's release horizon held back (its trailing metadata
    `bummerl-withheld`; 0 from a service that does not say)."""
    for key, value in metadata or ():
        if key == "bummerl-withheld" and str(value).isdigit():
            return int(value)
    return 0


def _open(path: str) -> IO[str]:
    if path == "-":
        return sys.stdout
    try:
        return open(path, "w", encoding="utf-8")
    except OSError as e:
        raise KitError(f"cannot write {path}: {e.strerror}") from None
