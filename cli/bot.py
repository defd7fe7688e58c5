"""`bummerl bot register|run|challenge|test` and `bummerl match create`: the bot author's
commands (all but `bot test` talk to a running engine service)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any


def _server(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"),
                        help="host:port of the service (default: $BUMMERL_SERVER or %(default)s)")
    parser.add_argument("--wait", type=float, default=30.0, metavar="S",
                        help="how long to wait for the service to answer (default: %(default)s)")
    from client.connect import add_arguments

    add_arguments(parser)  # --tls, --ca


def _operator(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--operator-token", default=os.environ.get("BUMMERL_OPERATOR_TOKEN", ""),
                        help="the operator token (default: $BUMMERL_OPERATOR_TOKEN)")
    parser.set_defaults(token_kind="operator")


def register(subparsers: Any) -> None:
    bot = subparsers.add_parser("bot", help="register, run, challenge or test a bot")
    commands = bot.add_subparsers(dest="bot_command", metavar="COMMAND", required=True)
    reg = commands.add_parser("register", help="register a bot; prints its id and secret token")
    reg.add_argument("name")
    _server(reg)
    _operator(reg)
    reg.set_defaults(func=run_register)
    play = commands.add_parser("run", help="play a bot class (module:Class or file.py:Class)")
    from client.__main__ import add_arguments, default_token

    add_arguments(play)
    play.set_defaults(func=run_bot, token_kind="bot")

    ch = commands.add_parser(
        "challenge", help="start unrated matches against a house bot or a connected bot",
        description="Start unrated matches of your bot (its --token) against OPPONENT: a house "
                    "bot (house-rdeep, house-bully, house-random: only where workers run, e.g. "
                    "`bummerl up`) or a remote bot that is connected (a bot just started is "
                    "waited for, up to --wait). They start at once; run your bot to play them.")
    ch.add_argument("--vs", required=True, metavar="OPPONENT", help="the opponent's name")
    ch.add_argument("--matches", type=int, default=1, help="how many (1-20, default 1)")
    ch.add_argument("--profile", choices=["soft", "sharp"], default="soft")
    ch.add_argument("--move-ms", type=int, default=0)
    ch.add_argument("--bank-ms", type=int, default=0)
    ch.add_argument("--token", default=default_token(),
                    help="your bot's token (default: $BUMMERL_TOKEN)")
    _server(ch)
    ch.set_defaults(func=run_challenge, token_kind="bot")

    from cli.hosted import add_commands

    add_commands(commands, _server)  # upload, versions, logs, stop, resume (hosted bots)

    test = commands.add_parser(
        "test", help="practise a bot locally against a house bot (no server)",
        description="Play your bot against a house bot over N duplicate deals in this process "
                    "(no server), print the result table of `bummerl simulate` and every "
                    "exception or illegal action of your bot with the observation that caused "
                    "it. Exit status 1 if there was any.")
    test.add_argument("bot", help="the bot class, as module:Class or file.py:Class")
    test.add_argument("--vs", default="rdeep", help="house strategy or bot name: random, "
                                                    "bully, rdeep (default: %(default)s)")
    test.add_argument("-n", "--deals", type=int, default=200,
                      help="distinct deals, each played twice (default: %(default)s)")
    test.add_argument("--seed", type=int, default=None, help="seed of the deals (random)")
    test.add_argument("--profile", choices=["soft", "sharp"], default="soft")
    test.add_argument("--no-progress", action="store_true", help="no progress bar")
    test.set_defaults(func=run_test)

    match = subparsers.add_parser("match", help="create a match between two bots")
    mcommands = match.add_subparsers(dest="match_command", metavar="COMMAND", required=True)
    create = mcommands.add_parser(
        "create", help="create a match; prints its id and seats",
        description="Create a match between two registered bots (BOT0 in seat 0, BOT1 in seat "
                    "1), each given by name or by the id `bummerl bot register` printed (a "
                    "number is an id). Needs the operator token.")
    create.add_argument("bots", nargs=2, metavar="BOT",
                        help="the bots of seat 0 and seat 1: names or ids")
    create.add_argument("--profile", choices=["soft", "sharp"], default="soft")
    create.add_argument("--seed", type=int, default=None)
    create.add_argument("--move-ms", type=int, default=0)
    create.add_argument("--bank-ms", type=int, default=0)
    _server(create)
    _operator(create)
    create.set_defaults(func=run_create)


def _metadata(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),) if token else ()


def run_register(args: argparse.Namespace) -> int:
    from bummerl.v1 import bot_pb2, bot_pb2_grpc

    from cli.errors import ready_channel

    with ready_channel(args.server, args.wait, tls=args.tls, ca=args.ca) as channel:
        reply = bot_pb2_grpc.BotServiceStub(channel).RegisterBot(
            bot_pb2.RegisterBotRequest(name=args.name), metadata=_metadata(args.operator_token),
            timeout=30)
    print(f"bot id {reply.bot.bot_id}\ntoken {reply.token}\n(keep the token: it is shown once)")
    return 0


def run_create(args: argparse.Namespace) -> int:
    from bummerl.v1 import common_pb2, match_pb2, match_pb2_grpc

    from cli.errors import ready_channel

    request = match_pb2.CreateMatchRequest(
        profile=common_pb2.PROFILE_SHARP if args.profile == "sharp" else common_pb2.PROFILE_SOFT,
        time_control=match_pb2.TimeControl(move_ms=args.move_ms, bank_ms=args.bank_ms))
    if args.seed is not None:
        request.seed = args.seed
    with ready_channel(args.server, args.wait, tls=args.tls, ca=args.ca) as channel:
        if all(b.isdigit() for b in args.bots):
            request.bot_ids.extend(int(b) for b in args.bots)
        else:  # names (an id among them is looked up: GetBot is public)
            request.bot_names.extend(_name_of(channel, b) for b in args.bots)
        reply = match_pb2_grpc.MatchServiceStub(channel).CreateMatch(
            request, metadata=_metadata(args.operator_token), timeout=30)
    m = reply.match
    print(f"match id {m.match_id}")
    for seat, (bot_id, name) in enumerate(zip(m.bot_ids, m.bot_names, strict=False)):
        print(f"seat {seat}: {name} (bot id {bot_id})")
    return 0


def _name_of(channel: Any, bot: str) -> str:
    """`bot` as a name: a number is a bot id, looked up."""
    if not bot.isdigit():
        return bot
    from bummerl.v1 import bot_pb2, bot_pb2_grpc

    return str(bot_pb2_grpc.BotServiceStub(channel).GetBot(
        bot_pb2.GetBotRequest(bot_id=int(bot)), timeout=30).bot.name)


def run_bot(args: argparse.Namespace) -> int:
    from client.__main__ import play

    return play(args)


def _why(error: Any) -> str:
    """The `why` of a bummerl error's google.rpc ErrorInfo, if it has one."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    try:
        status = rpc_status.from_call(error)
    except (AttributeError, ValueError):
        return ""
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info.metadata.get("why", "")
    return ""


def run_challenge(args: argparse.Namespace) -> int:
    import grpc

    from cli.errors import ready_channel
    from client.challenge import challenge
    from client.errors import KitError

    if not args.token:
        raise KitError("no bot token: pass --token TOKEN or set BUMMERL_TOKEN "
                       "(`bummerl bot register NAME` prints it once)")
    started_at = time.monotonic()
    with ready_channel(args.server, args.wait, tls=args.tls, ca=args.ca) as channel:
        while True:
            try:
                started = challenge(channel, args.token, args.vs, args.matches,
                                    profile=args.profile, move_ms=args.move_ms,
                                    bank_ms=args.bank_ms)
                break
            except grpc.RpcError as e:  # a bot just started may not be connected yet: wait
                waited = int(time.monotonic() - started_at)
                if _why(e) != "opponent_not_connected" or waited >= args.wait:
                    if waited:
                        print(file=sys.stderr)
                    raise
                print(f"\rwaiting for {args.vs} to connect ... {waited} s (--wait "
                      f"{args.wait:g})", end="", file=sys.stderr, flush=True)
                time.sleep(0.5)
        if time.monotonic() - started_at >= 1:
            print(file=sys.stderr)
    for m in started:
        seats = ", ".join(f"seat {seat}: {name}" for seat, name in enumerate(m.bot_names))
        print(f"match id {m.match_id} ({seats}; unrated challenge)")
    print(f"{len(started)} match(es) started: run your bot (`bummerl bot run`) to play them")
    return 0


def run_test(args: argparse.Namespace) -> int:
    from cli.practice import run

    return run(args)
