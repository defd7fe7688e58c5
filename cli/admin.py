"""`bummerl admin ...`: the operator's controls over a running service (AdminService).

    bummerl admin bots [--suspended]
    bummerl admin suspend BOT REASON
    bummerl admin reinstate BOT
    bummerl admin rotate-token BOT
    bummerl admin abort-match MATCH_ID REASON

Each needs the operator token (`--operator-token` or $BUMMERL_OPERATOR_TOKEN); `--server`,
`--tls` and `--ca` say where and how to connect. BOT is a bot's id or name (in any case: bot
names are unique whatever their case); a person (who plays from the browser) is suspended by
their seat's name, e.g. `bummerl admin suspend @alice "abusive chat"`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def _common(parser: argparse.ArgumentParser) -> None:
    from client.connect import add_arguments

    parser.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"),
                        help="host:port of the service (default: $BUMMERL_SERVER or %(default)s)")
    parser.add_argument("--operator-token", default=os.environ.get("BUMMERL_OPERATOR_TOKEN", ""),
                        help="the operator token (default: $BUMMERL_OPERATOR_TOKEN)")
    parser.set_defaults(token_kind="operator")
    add_arguments(parser)


def register(subparsers: Any) -> None:
    admin = subparsers.add_parser(
        "admin", help="operator controls: list, suspend, reinstate bots; rotate tokens; abort",
        description="Operator controls over a running service (needs the operator token).")
    commands = admin.add_subparsers(dest="admin_command", metavar="COMMAND", required=True)
    bots = commands.add_parser("bots", help="list the bots with their state")
    bots.add_argument("--suspended", action="store_true", help="only suspended bots")
    bots.set_defaults(func=run_bots)
    suspend = commands.add_parser("suspend", help="suspend a bot (no ladder, no Play stream)")
    suspend.add_argument("bot_id", metavar="BOT", help="the bot's id or name (a person: @name)")
    suspend.add_argument("reason", help="why (shown to the bot and on the dashboard)")
    suspend.set_defaults(func=run_suspend)
    reinstate = commands.add_parser("reinstate", help="lift a bot's suspension")
    reinstate.add_argument("bot_id", metavar="BOT", help="the bot's id or name (a person: @name)")
    reinstate.set_defaults(func=run_reinstate)
    rotate = commands.add_parser("rotate-token",
                                 help="give a bot a new token (shown once; the old one stops)")
    rotate.add_argument("bot_id", metavar="BOT", help="the bot's id or name")
    rotate.set_defaults(func=run_rotate)
    abort = commands.add_parser("abort-match", help="abort a running match (not rated)")
    abort.add_argument("match_id", type=int)
    abort.add_argument("reason", help="why (recorded with the match)")
    abort.set_defaults(func=run_abort)
    for parser in (bots, suspend, reinstate, rotate, abort):
        _common(parser)
    prune = commands.add_parser(
        "prune-hosted", help="remove hosted versions' images nothing runs again (this machine)",
        description="On the machine whose podman holds the hosted bots' images (it reads "
                    "DATABASE_URL): remove the images of failed versions and of none, and the "
                    "kit's old base images. Stopped and paused versions keep theirs.")
    prune.set_defaults(func=run_prune_hosted)


def run_prune_hosted(args: argparse.Namespace) -> int:
    from workers.hosted import prune_images

    removed = prune_images()
    for image in removed:
        print(f"removed {image}")
    print(f"{len(removed)} image(s) removed")
    return 0


def _call(args: argparse.Namespace, method: str, request: Any) -> Any:
    from bummerl.v1 import admin_pb2_grpc

    from client.connect import from_args

    metadata = (("authorization", f"Bearer {args.operator_token}"),) if args.operator_token \
        else ()
    with from_args(args) as channel:
        stub = admin_pb2_grpc.AdminServiceStub(channel)
        return getattr(stub, method)(request, metadata=metadata, timeout=30)


def _when(stamp: Any, present: bool) -> str:
    return stamp.ToDatetime().strftime("%Y-%m-%d %H:%M:%S") if present else "-"


def _line(status: Any) -> str:
    bot = status.bot
    kind = {2: "house", 3: "person"}.get(bot.kind, "remote")
    state = "SUSPENDED" if status.suspended else "ok"
    seen = _when(status.last_seen_at, status.HasField("last_seen_at"))
    text = (f"{bot.bot_id:>5}  {bot.name:<24} {kind:<6} {state:<9} "
            f"{'yes' if status.connected else 'no':<9} {seen:<19} {status.running_matches:>7}")
    if status.suspended:
        text += f"\n       suspended {_when(status.suspended_at, True)}: {status.suspended_reason}"
    return text


def run_bots(args: argparse.Namespace) -> int:
    from bummerl.v1 import admin_pb2

    reply = _call(args, "ListBots", admin_pb2.ListBotsRequest(suspended_only=args.suspended))
    print(f"{'id':>5}  {'name':<24} {'kind':<6} {'state':<9} {'connected':<9} "
          f"{'last seen (UTC)':<19} {'running':>7}")
    for status in reply.bots:
        print(_line(status))
    return 0


def _bot_id(args: argparse.Namespace) -> int:
    """The id of the bot `args.bot_id` names (an id, or a name looked up with ListBots)."""
    from bummerl.v1 import admin_pb2

    from client.errors import KitError

    if args.bot_id.isdigit():
        return int(args.bot_id)
    wanted = args.bot_id.lower()  # names are unique whatever their case (db.models.Bot)
    for status in _call(args, "ListBots", admin_pb2.ListBotsRequest()).bots:
        if status.bot.name.lower() == wanted:
            return int(status.bot.bot_id)
    raise KitError(f"no bot or person named {args.bot_id!r}: `bummerl admin bots` lists them")


def _who(bot: Any) -> str:
    """A seat holder as the operator reads it: `bot 7 (MyBot)`, `person 12 (@alice)`."""
    from bummerl.v1 import bot_pb2

    kind = {bot_pb2.BOT_KIND_HOUSE: "house bot", bot_pb2.BOT_KIND_PERSON: "person"}.get(
        bot.kind, "bot")
    return f"{kind} {bot.bot_id} ({bot.name})"


def run_suspend(args: argparse.Namespace) -> int:
    from bummerl.v1 import admin_pb2

    reply = _call(args, "SuspendBot",
                  admin_pb2.SuspendBotRequest(bot_id=_bot_id(args), reason=args.reason))
    print(f"suspended {_who(reply.bot.bot)}: {reply.bot.suspended_reason}")
    return 0


def run_reinstate(args: argparse.Namespace) -> int:
    from bummerl.v1 import admin_pb2

    reply = _call(args, "ReinstateBot", admin_pb2.ReinstateBotRequest(bot_id=_bot_id(args)))
    print(f"reinstated {_who(reply.bot.bot)}")
    return 0


def run_rotate(args: argparse.Namespace) -> int:
    from bummerl.v1 import admin_pb2

    reply = _call(args, "RotateBotToken", admin_pb2.RotateBotTokenRequest(bot_id=_bot_id(args)))
    print(f"bot id {reply.bot.bot.bot_id} ({reply.bot.bot.name})\ntoken {reply.token}\n"
          "(keep the token: it is shown once; the old token no longer works)")
    return 0


def run_abort(args: argparse.Namespace) -> int:
    from bummerl.v1 import admin_pb2

    reply = _call(args, "AbortMatch",
                  admin_pb2.AbortMatchRequest(match_id=args.match_id, reason=args.reason))
    print(f"aborted match {reply.match.match_id}: {reply.match.end_detail}")
    return 0
