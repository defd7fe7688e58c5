"""`bummerl tournament ...`: events over a running service (TournamentService).

    bummerl tournament create --format swiss|round-robin|double-round-robin|gauntlet
        --bots a,b,c,... [--rounds N] [--name TEXT] [--profile soft|sharp]
        [--time-control MOVE[+BANK]] [--rated] [--concurrency N] [--grace S] [--seed N]
    bummerl tournament list [--state running|finished|cancelled]
    bummerl tournament show ID
    bummerl tournament withdraw ID BOT [--reason TEXT]
    bummerl tournament cancel ID [--reason TEXT]
    bummerl tournament export ID [--format csv|json]    (json: docs/tournament-export.schema.json)

`create`, `withdraw` and `cancel` need the operator token (`--operator-token` or
$BUMMERL_OPERATOR_TOKEN); `list`, `show` and `export` are public. `--server`, `--tls` and
`--ca` say where and how to connect. A gauntlet's first bot meets each of the others; `--rounds`
is for Swiss events (1 to bots - 1). `--time-control` is the move time and the bank, each in
milliseconds or with an `s` for seconds: `2000+10000`, `2s+10s` (cli/timecontrol.py).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from typing import Any

from cli import timecontrol
from client.errors import KitError

FORMATS = ("swiss", "round-robin", "double-round-robin", "gauntlet")
STATES = ("running", "finished", "cancelled")


def _common(parser: argparse.ArgumentParser, operator: bool) -> None:
    from client.connect import add_arguments

    parser.add_argument("--server", default=os.environ.get("BUMMERL_SERVER", "127.0.0.1:50051"),
                        help="host:port of the service (default: $BUMMERL_SERVER or %(default)s)")
    if operator:
        parser.add_argument("--operator-token",
                            default=os.environ.get("BUMMERL_OPERATOR_TOKEN", ""),
                            help="the operator token (default: $BUMMERL_OPERATOR_TOKEN)")
        parser.set_defaults(token_kind="operator")
    add_arguments(parser)


def register(subparsers: Any) -> None:
    group = subparsers.add_parser(
        "tournament", help="events: create, list, show, withdraw a bot, cancel, export",
        description="Tournaments of bots on duplicate deals (round-robin, double round-robin, "
                    "Swiss, gauntlet) over a running service.")
    commands = group.add_subparsers(dest="tournament_command", metavar="COMMAND", required=True)
    create = commands.add_parser("create", help="create an event (operator)")
    create.add_argument("--format", required=True, choices=FORMATS)
    create.add_argument("--bots", required=True, metavar="A,B,...",
                        help="the field by bot name, in order (the gauntlet's first bot meets "
                             "the others)")
    create.add_argument("--rounds", type=int, default=0, help="Swiss: the number of rounds")
    create.add_argument("--name", default="", help="a name for people")
    create.add_argument("--profile", choices=("soft", "sharp"), default="soft")
    create.add_argument("--time-control", default="", metavar=timecontrol.METAVAR,
                        help=timecontrol.HELP)
    create.add_argument("--rated", action="store_true",
                        help="the matches count for the ladder's ratings")
    create.add_argument("--concurrency", type=int, default=0,
                        help="matches at once, at most (default: one per two bots)")
    create.add_argument("--grace", type=int, default=0, metavar="S",
                        help="seconds an absent bot is waited for before it forfeits a pair "
                             "(default 60)")
    create.add_argument("--seed", type=int, default=0, help="the event's seed (default: random)")
    create.set_defaults(func=run_create)
    listing = commands.add_parser("list", help="list the events, newest first")
    listing.add_argument("--state", choices=STATES)
    listing.set_defaults(func=run_list)
    show = commands.add_parser("show", help="an event's standings and pairs")
    show.add_argument("tournament_id", type=int)
    show.set_defaults(func=run_show)
    withdraw = commands.add_parser("withdraw", help="withdraw a bot: it forfeits its open pairs "
                                   "(operator)")
    withdraw.add_argument("tournament_id", type=int)
    withdraw.add_argument("bot", help="the bot's name or id")
    withdraw.add_argument("--reason", default="withdrawn by the operator")
    withdraw.set_defaults(func=run_withdraw)
    cancel = commands.add_parser("cancel", help="cancel a running event (operator)")
    cancel.add_argument("tournament_id", type=int)
    cancel.add_argument("--reason", default="cancelled by the operator")
    cancel.set_defaults(func=run_cancel)
    export = commands.add_parser("export", help="the crosstable and every game's id")
    export.add_argument("tournament_id", type=int)
    export.add_argument("--format", choices=("csv", "json"), default="csv")
    export.set_defaults(func=run_export)
    for parser, operator in ((create, True), (listing, False), (show, False),
                             (withdraw, True), (cancel, True), (export, False)):
        _common(parser, operator)


def _call(args: argparse.Namespace, method: str, request: Any) -> Any:
    from bummerl.v1 import tournament_pb2_grpc

    from client.connect import from_args

    token = getattr(args, "operator_token", "")
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with from_args(args) as channel:
        stub = tournament_pb2_grpc.TournamentServiceStub(channel)
        return getattr(stub, method)(request, metadata=metadata, timeout=30)


def _format_name(value: int) -> str:
    from bummerl.v1 import tournament_pb2

    name = tournament_pb2.TournamentFormat.Name(value)
    return name.removeprefix("TOURNAMENT_FORMAT_").lower().replace("_", "-")


def _state_name(value: int) -> str:
    from bummerl.v1 import tournament_pb2

    return tournament_pb2.TournamentState.Name(value).removeprefix("TOURNAMENT_STATE_").lower()


def _pair_state(value: int) -> str:
    from bummerl.v1 import tournament_pb2

    return tournament_pb2.PairState.Name(value).removeprefix("PAIR_STATE_").lower()


def run_create(args: argparse.Namespace) -> int:
    from bummerl.v1 import common_pb2, match_pb2, tournament_pb2

    fmt = {"swiss": tournament_pb2.TOURNAMENT_FORMAT_SWISS,
           "round-robin": tournament_pb2.TOURNAMENT_FORMAT_ROUND_ROBIN,
           "double-round-robin": tournament_pb2.TOURNAMENT_FORMAT_DOUBLE_ROUND_ROBIN,
           "gauntlet": tournament_pb2.TOURNAMENT_FORMAT_GAUNTLET}[args.format]
    names = [n.strip() for n in args.bots.split(",") if n.strip()]
    request = tournament_pb2.CreateTournamentRequest(
        name=args.name, format=fmt, bot_names=names, rounds=args.rounds,
        profile=common_pb2.PROFILE_SHARP if args.profile == "sharp" else common_pb2.PROFILE_SOFT,
        rated=args.rated, concurrency=args.concurrency, grace_s=args.grace, seed=args.seed)
    if args.time_control:
        move_ms, bank_ms = timecontrol.parse(args.time_control)
        request.time_control.CopyFrom(match_pb2.TimeControl(move_ms=move_ms,
                                                            bank_ms=bank_ms or 0))
    reply = _call(args, "CreateTournament", request)
    t = reply.tournament
    print(f"tournament {t.tournament_id} created: {t.name} ({_format_name(t.format)}, "
          f"{t.bot_count} bots, {t.rounds} rounds, seed {t.seed})")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from bummerl.v1 import tournament_pb2

    state = f"TOURNAMENT_STATE_{(args.state or 'unspecified').upper()}"
    reply = _call(args, "ListTournaments", tournament_pb2.ListTournamentsRequest(state=state))
    print(f"{'id':>5}  {'name':<32} {'format':<19} {'state':<10} {'bots':>4} {'rounds':>7}")
    for t in reply.tournaments:
        print(f"{t.tournament_id:>5}  {t.name[:32]:<32} {_format_name(t.format):<19} "
              f"{_state_name(t.state):<10} {t.bot_count:>4} {t.paired_rounds:>3}/{t.rounds:<3}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from bummerl.v1 import tournament_pb2

    reply = _call(args, "GetTournament",
                  tournament_pb2.GetTournamentRequest(tournament_id=args.tournament_id))
    t = reply.tournament
    names = {e.bot_id: e.name for e in reply.entries}
    print(f"tournament {t.tournament_id}: {t.name} ({_format_name(t.format)}, "
          f"{_state_name(t.state)}; round {t.paired_rounds} of {t.rounds} paired)")
    if t.cancelled_reason:
        print(f"cancelled: {t.cancelled_reason}")
    print(f"\n{'rank':>4}  {'bot':<24} {'points':>6} {'diff':>5} {'tiebreak':>8} "
          f"{'pairs':>5} {'+/=/-':>8} {'forfeits':>8}")
    for row in reply.standings:
        diff = row.game_points_scored - row.game_points_conceded
        mark = " (withdrawn)" if row.withdrawn else ""
        print(f"{row.rank:>4}  {row.name[:24]:<24} {row.points:>6} {diff:>5} "
              f"{row.tiebreak:>8.1f} {row.pairs:>5} "
              f"{f'{row.won}/{row.split}/{row.lost}':>8} {row.forfeits:>8}{mark}")
    print(f"\n{'round':>5} {'board':>5}  {'bot a':<20} {'bot b':<20} {'state':<9} "
          f"{'score':>5}  matches")
    for p in reply.pairs:
        decided = _pair_state(p.state) in ("done", "forfeited")
        score = f"{p.points_a}-{p.points_b}" if decided else ""
        games = " ".join(f"#{m}" for m in (p.match_a_id, p.match_b_id) if m)
        print(f"{p.round:>5} {p.board:>5}  {names.get(p.bot_a_id, p.bot_a_id)!s:<20.20} "
              f"{names.get(p.bot_b_id, p.bot_b_id)!s:<20.20} {_pair_state(p.state):<9} "
              f"{score:>5}  {games}")
    for bye in reply.byes:
        print(f"{bye.round:>5}   bye  {names.get(bye.bot_id, bye.bot_id)}")
    return 0


def _bot_id(args: argparse.Namespace, bot: str) -> int:
    """A bot's id from its name or id, as the event's field has it."""
    from bummerl.v1 import tournament_pb2

    if bot.isdigit():
        return int(bot)
    reply = _call(args, "GetTournament",
                  tournament_pb2.GetTournamentRequest(tournament_id=args.tournament_id))
    for entry in reply.entries:
        if entry.name.lower() == bot.lower():  # names are unique whatever their case
            return int(entry.bot_id)
    raise KitError(f"no bot named {bot!r} in tournament {args.tournament_id}'s field "
                     f"(`bummerl tournament show {args.tournament_id}`)")


def run_withdraw(args: argparse.Namespace) -> int:
    from bummerl.v1 import tournament_pb2

    bot_id = _bot_id(args, args.bot)
    reply = _call(args, "WithdrawBot", tournament_pb2.WithdrawBotRequest(
        tournament_id=args.tournament_id, bot_id=bot_id, reason=args.reason))
    print(f"bot {bot_id} withdrawn from tournament {reply.tournament.tournament_id}; it "
          f"forfeited {len(reply.forfeited_pair_ids)} pairs")
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    from bummerl.v1 import tournament_pb2

    reply = _call(args, "CancelTournament", tournament_pb2.CancelTournamentRequest(
        tournament_id=args.tournament_id, reason=args.reason))
    print(f"tournament {reply.tournament.tournament_id} cancelled; "
          f"{len(reply.voided_pair_ids)} pairs void")
    return 0


CSV_COLUMNS = ("rank", "bot", "opponent", "points", "game_points_scored",
               "game_points_conceded", "pair_ids", "match_ids")


def run_export(args: argparse.Namespace) -> int:
    from bummerl.v1 import tournament_pb2

    from cli.plainjson import plain

    reply = _call(args, "ExportTournament",
                  tournament_pb2.ExportTournamentRequest(tournament_id=args.tournament_id))
    if args.format == "json":  # plain JSON: docs/tournament-export.schema.json
        json.dump(plain(reply), sys.stdout, indent=1)
        print()
        return 0
    names = {e.bot_id: e.name for e in reply.entries}
    rank = {row.bot_id: row.rank for row in reply.standings}
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(CSV_COLUMNS)
    for cell in reply.crosstable:
        out.writerow([rank.get(cell.bot_id, ""), names.get(cell.bot_id, cell.bot_id),
                      names.get(cell.opponent_id, cell.opponent_id), cell.points,
                      cell.game_points_scored, cell.game_points_conceded,
                      " ".join(map(str, cell.pair_ids)), " ".join(map(str, cell.match_ids))])
    return 0
