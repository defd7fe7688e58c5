"""`bummerl test ...`: version tests of a running service (VersionTestService).

    bummerl test start --candidate mybot@2.0 --baseline mybot@1.9 [--elo0 0 --elo1 5 |
                       --games N] [--alpha A --beta B] [--profile soft|sharp]
                       [--time-control MOVE[+BANK]] [--concurrency N]
    bummerl test list [--state STATE]
    bummerl test show ID
    bummerl test stop ID [REASON]

With a bot's token (`--token`, $BUMMERL_TOKEN) a bot starts tests of itself and sees and
stops its own; with the operator token (`--operator-token`, $BUMMERL_OPERATOR_TOKEN) any.
docs/version-tests.md says what the numbers mean.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from cli import timecontrol
from client.errors import KitError

STATES = ("waiting", "running", "H1", "H0", "capped", "stopped", "timed_out")


def _common(parser: argparse.ArgumentParser) -> None:
    from client.connect import add_arguments

    parser.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"),
                        help="host:port of the service (default: $BUMMERL_SERVER or %(default)s)")
    parser.add_argument("--token", default=os.environ.get("BUMMERL_TOKEN", ""),
                        help="the bot's token (default: $BUMMERL_TOKEN)")
    parser.add_argument("--operator-token", default=os.environ.get("BUMMERL_OPERATOR_TOKEN", ""),
                        help="or the operator token (default: $BUMMERL_OPERATOR_TOKEN)")
    add_arguments(parser)


def register(subparsers: Any) -> None:
    test = subparsers.add_parser(
        "test", help="version tests: a bot's candidate version against a baseline (SPRT)",
        description="Version tests of a running service (docs/version-tests.md).")
    commands = test.add_subparsers(dest="test_command", metavar="COMMAND", required=True)
    start = commands.add_parser("start", help="start a version test")
    start.add_argument("--candidate", required=True, help="bot@version")
    start.add_argument("--baseline", required=True, help="bot@version, or a house bot")
    start.add_argument("--elo0", type=float, help="H0's Elo (default 0)")
    start.add_argument("--elo1", type=float, help="H1's Elo (default 5)")
    start.add_argument("--alpha", type=float, help="false-positive rate (default 0.05)")
    start.add_argument("--beta", type=float, help="false-negative rate (default 0.05)")
    start.add_argument("--games", type=int, default=0, metavar="N",
                       help="play N games (whole pairs); without --elo0/--elo1: no SPRT")
    start.add_argument("--profile", choices=("soft", "sharp"), default="soft")
    start.add_argument("--time-control", default="", metavar=timecontrol.METAVAR,
                       help=timecontrol.HELP)
    start.add_argument("--concurrency", type=int, default=1, metavar="N",
                       help="pairs played at once (default 1)")
    start.set_defaults(func=run_start)
    listing = commands.add_parser("list", help="list tests, newest first")
    listing.add_argument("--state", choices=STATES)
    listing.set_defaults(func=run_list)
    show = commands.add_parser("show", help="a test's numbers")
    show.add_argument("test_id", type=int)
    show.set_defaults(func=run_show)
    stop = commands.add_parser("stop", help="stop an open test")
    stop.add_argument("test_id", type=int)
    stop.add_argument("reason", nargs="?", default="")
    stop.set_defaults(func=run_stop)
    for parser in (start, listing, show, stop):
        _common(parser)
        parser.set_defaults(token_kind="either")


def _call(args: argparse.Namespace, method: str, request: Any) -> Any:
    from bummerl.v1 import versiontest_pb2_grpc

    from cli.errors import BOT_FLAGS, OPERATOR_FLAGS
    from client.connect import from_args

    token = args.token or args.operator_token
    if not token:  # refused before a call: the service's answer would speak of metadata
        raise KitError(f"`bummerl test {args.test_command}` needs a token: your bot's "
                       f"({BOT_FLAGS}) for its own tests, or the operator's "
                       f"({OPERATOR_FLAGS}) for any")
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with from_args(args) as channel:
        stub = versiontest_pb2_grpc.VersionTestServiceStub(channel)
        return getattr(stub, method)(request, metadata=metadata, timeout=30)


def _state(test: Any) -> str:
    from bummerl.v1 import versiontest_pb2

    return versiontest_pb2.TestState.Name(test.state).removeprefix("TEST_STATE_")


def _side(side: Any) -> str:
    return f"{side.bot_name}@{side.version}" if side.version else side.bot_name


NO_PAIRS = "no pairs played yet"  # instead of a score and an Elo, whose intervals say nothing


def line(test: Any) -> str:
    pairs = test.lost_both + test.split + test.won_both
    return (f"{test.test_id:>5}  {_state(test):<9}  {_side(test.candidate)} vs "
            f"{_side(test.baseline)}  pairs {pairs}  "
            f"LLR {test.llr:+.2f}  score {f'{test.score:.3f}' if pairs else '-'}")


def _match_line(entry: Any) -> str:
    """One of `test show`'s matches: id, pair and leg, the seats with their versions (the
    winner starred), how it stands or ended, and whether its pair counts."""
    from bummerl.v1 import match_pb2

    m = entry.match
    seats = []
    for seat in (0, 1):
        version = m.bot_versions[seat] if len(m.bot_versions) > seat else ""
        seats.append(f"{m.bot_names[seat]}@{version}" if version else m.bot_names[seat])
        if m.winner == seat:
            seats[seat] += " (won)"
    if m.state == match_pb2.MATCH_STATE_RUNNING:
        status = f"running, game points needed {m.counters[0]}-{m.counters[1]}"
    else:
        status = match_pb2.EndReason.Name(m.end_reason).removeprefix("END_REASON_").lower()
    if entry.counts:
        status += f"; {entry.counts}"
    return (f"  #{m.match_id:<6} pair {m.event.pair_id}·{m.event.pair_leg}  "
            f"{seats[0]} vs {seats[1]}  {status}")


def describe(test: Any) -> str:
    """What `bummerl test show` prints."""
    pairs = test.lost_both + test.split + test.won_both

    def think(side: Any) -> str:
        return f"{side.mean_think_ms:.0f} ms/move" if side.mean_think_ms else "-"

    lines = [
        f"test {test.test_id}: {_state(test)}" + (f" ({test.reason})" if test.reason else ""),
        f"candidate  {_side(test.candidate)}  "
        f"{'connected' if test.candidate.connected else 'not connected'}  "
        f"{think(test.candidate)}",
        f"baseline   {_side(test.baseline)}  "
        f"{'connected' if test.baseline.connected else 'not connected'}  "
        f"{think(test.baseline)}",
    ]
    if test.sprt:
        lines.append(f"SPRT       elo0 {test.elo0:g}  elo1 {test.elo1:g}  alpha {test.alpha:g}"
                     f"  beta {test.beta:g}")
        lines.append(f"LLR        {test.llr:+.2f}  bounds [{test.llr_lower:+.2f}, "
                     f"{test.llr_upper:+.2f}]")
    if test.max_games:
        lines.append(f"games cap  {test.max_games}")
    lines += [
        f"pairs      {pairs} (lost both {test.lost_both}, split {test.split}, won both "
        f"{test.won_both}; forfeited {test.forfeited_pairs}; void {test.void_pairs})",
    ]
    if pairs:
        lines += [
            f"score      {test.score:.3f}  95% [{test.score_low:.3f}, {test.score_high:.3f}]",
            f"Elo        {test.elo:+.1f}  95% [{test.elo_low:+.1f}, {test.elo_high:+.1f}]",
        ]
    else:
        lines += [f"score      {NO_PAIRS}", f"Elo        {NO_PAIRS}"]
    lines += [
        f"running    {', '.join(str(i) for i in test.running_match_ids) or '-'}",
        f"started by {test.started_by}",
        f"matches    {len(test.matches) or 'none yet'}"
        + (" (newest first; at most 50)" if test.matches else ""),
    ]
    lines += [_match_line(entry) for entry in test.matches]
    return "\n".join(lines)


def run_start(args: argparse.Namespace) -> int:
    from bummerl.v1 import common_pb2, match_pb2, versiontest_pb2

    request = versiontest_pb2.StartTestRequest(
        candidate=args.candidate, baseline=args.baseline, games=args.games,
        profile=common_pb2.PROFILE_SHARP if args.profile == "sharp" else common_pb2.PROFILE_SOFT,
        concurrency=args.concurrency)
    for name in ("elo0", "elo1", "alpha", "beta"):
        if getattr(args, name) is not None:
            setattr(request, name, getattr(args, name))
    if args.time_control:
        move, bank = timecontrol.parse(args.time_control)
        request.time_control.CopyFrom(match_pb2.TimeControl(move_ms=move, bank_ms=bank or 0))
    reply = _call(args, "StartTest", request)
    print(describe(reply.test))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from bummerl.v1 import versiontest_pb2

    state: Any = versiontest_pb2.TestState.Value(f"TEST_STATE_{args.state.upper()}") \
        if args.state else versiontest_pb2.TEST_STATE_UNSPECIFIED
    reply = _call(args, "ListTests", versiontest_pb2.ListTestsRequest(state=state,
                                                                      page_size=100))
    for test in reply.tests:
        print(line(test))
    if not reply.tests:
        print("no version tests")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from bummerl.v1 import versiontest_pb2

    reply = _call(args, "GetTest", versiontest_pb2.GetTestRequest(test_id=args.test_id))
    print(describe(reply.test))
    return 0


def run_stop(args: argparse.Namespace) -> int:
    from bummerl.v1 import versiontest_pb2

    reply = _call(args, "StopTest", versiontest_pb2.StopTestRequest(test_id=args.test_id,
                                                                    reason=args.reason))
    print(describe(reply.test))
    return 0
