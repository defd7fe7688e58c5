"""`bummerl bot upload|versions|logs|stop|resume`: the author's commands for hosted bots
(docs/hosted.md), all over gRPC HostingService with the bot's token (or the operator's, naming
the bot with --bot).

`upload SOURCE` takes a bot file with its class (`mybot.py:MyBot`), a folder or a .tar.gz/.zip
archive with `--entry path/module.py:Class` inside it, or `--image REF` alone. The version is
--version, else the class's `version = "..."` attribute (read, not run), else the time of the
upload. `--follow` waits until the version is live (exit 0) or failed (exit 1, with why).
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tarfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from client.errors import KitError

FINAL = ("live", "failed", "paused", "stopped")
FOLLOW_POLL_S = 1.0


def add_commands(commands: Any, server: Any) -> None:
    """The subcommands, on `bummerl bot`'s parser `commands`; `server(parser)` adds --server."""
    from client.__main__ import default_token

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--token", default=default_token(),
                            help="your bot's token (default: $BUMMERL_TOKEN), or the "
                                 "operator's with --bot")
        parser.add_argument("--bot", default="", metavar="NAME",
                            help="the operator only: the bot to act on")
        server(parser)
        parser.set_defaults(token_kind="bot")

    up = commands.add_parser(
        "upload", help="upload a version for bummerl to build, validate and run (hosted)",
        description="Upload a version of your bot: bummerl builds it into an image, plays one "
                    "unrated validation match against a house bot, then runs it in a sandbox "
                    "(docs/hosted.md). SOURCE is file.py:Class, or a folder or .tar.gz/.zip "
                    "with --entry; or give --image instead.")
    up.add_argument("source", nargs="?", default="",
                    help="file.py:Class, or a folder or archive (with --entry)")
    up.add_argument("--entry", default="", help="path/module.py:Class inside a folder or archive")
    up.add_argument("--version", default="", help="the version's name (default: the class's "
                                                  "`version` attribute, else the time)")
    up.add_argument("--requirements", default="", metavar="FILE",
                    help="pinned requirements to install (pip's format, name==version)")
    up.add_argument("--image", default="", help="an OCI image that runs the kit, instead of "
                                                "files")
    up.add_argument("--people", choices=("casual", "rated"), default=None,
                    help="it plays people at the web's table: casual games, or rated ones too")
    up.add_argument("--follow", action="store_true",
                    help="wait until it is live (exit 0) or failed (exit 1)")
    up.add_argument("--follow-timeout", type=float, default=600.0, metavar="S",
                    help="how long --follow waits (default: %(default)s)")
    common(up)
    up.set_defaults(func=run_upload)

    ls = commands.add_parser("versions", help="list your hosted versions and their states")
    common(ls)
    ls.set_defaults(func=run_versions)

    logs = commands.add_parser("logs", help="a hosted version's latest output (or --build log)")
    logs.add_argument("version")
    logs.add_argument("--build", action="store_true", help="the build's log instead")
    common(logs)
    logs.set_defaults(func=run_logs)

    stop = commands.add_parser("stop", help="stop a hosted version")
    stop.add_argument("version")
    stop.add_argument("--reason", default="")
    common(stop)
    stop.set_defaults(func=run_stop)

    resume = commands.add_parser("resume", help="run a stopped or paused hosted version again")
    resume.add_argument("version")
    common(resume)
    resume.set_defaults(func=run_resume)


def _metadata(token: str) -> tuple[tuple[str, str], ...]:
    if not token:
        raise KitError("no token: pass --token TOKEN or set BUMMERL_TOKEN")
    return (("authorization", f"Bearer {token}"),)


def _stub(args: argparse.Namespace) -> Any:
    from bummerl.v1 import hosting_pb2_grpc

    from cli.errors import ready_channel

    channel = ready_channel(args.server, args.wait, tls=args.tls, ca=args.ca)
    return channel, hosting_pb2_grpc.HostingServiceStub(channel)


def class_version(module: bytes, class_name: str) -> str:
    """The `version = "..."` of class `class_name` in the module's source ("" if none)."""
    try:
        tree = ast.parse(module)
    except (SyntaxError, ValueError):
        return ""  # the build says where
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if (isinstance(item, ast.Assign) and len(item.targets) == 1
                        and isinstance(item.targets[0], ast.Name)
                        and item.targets[0].id == "version"
                        and isinstance(item.value, ast.Constant)
                        and isinstance(item.value.value, str)):
                    return item.value.value
    return ""


def files_of(source: str, entry: str) -> tuple[bytes, str]:
    """(the checked tar.gz, the entry) of an upload's SOURCE and --entry
    (hosting.archive.pack)."""
    from hosting.archive import ArchiveError, pack

    path, _, klass = source.rpartition(":")
    if klass.isidentifier() and path.endswith(".py"):  # file.py:Class
        entry = f"{Path(path).name}:{klass}"
    else:
        path = source
        if path.endswith(".py") and not entry:
            raise KitError(f"name the class: {path}:ClassName")
        if not entry:
            raise KitError(f"{path}: a folder or archive needs --entry path/module.py:Class "
                           "(a file: file.py:Class)")
    try:
        return pack(path, entry), entry
    except ArchiveError as e:
        raise KitError(f"{source}: {e}") from None


def _module_source(archive: bytes, entry: str) -> bytes:
    module = entry.partition(":")[0]
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            member = tar.extractfile(module)
            return member.read() if member is not None else b""
    except (tarfile.TarError, KeyError, OSError):
        return b""


def run_upload(args: argparse.Namespace) -> int:
    from bummerl.v1 import common_pb2, hosting_pb2

    request = hosting_pb2.UploadVersionRequest(bot_name=args.bot, people={
        "casual": common_pb2.ACCEPTS_PEOPLE_CASUAL, "rated": common_pb2.ACCEPTS_PEOPLE_RATED,
    }.get(args.people or "", common_pb2.ACCEPTS_PEOPLE_UNSPECIFIED))
    if args.image:
        if args.source or args.entry or args.requirements:
            raise KitError("--image runs an image: give no SOURCE, --entry or --requirements")
        request.image = args.image
    else:
        if not args.source:
            raise KitError("give SOURCE (file.py:Class, a folder or an archive) or --image")
        request.archive, request.entry = files_of(args.source, args.entry)
        if args.requirements:
            request.requirements = Path(args.requirements).read_text()
    request.version = args.version or (
        class_version(_module_source(request.archive, request.entry),
                      request.entry.partition(":")[2]) if request.archive else "") \
        or datetime.now(UTC).strftime("upload-%Y%m%dT%H%M%SZ")
    channel, stub = _stub(args)
    with channel:
        reply = stub.UploadVersion(request, metadata=_metadata(args.token), timeout=60)
        v = reply.version
        print(f"uploaded {v.bot_name} version {v.version}: {_state(v.state)}")
        if not args.follow:
            print(f"follow it: bummerl bot versions (or: bummerl bot logs {v.version} --build)")
            return 0
        return _follow(stub, args, v.version)


def _state(state: int) -> str:
    from bummerl.v1 import hosting_pb2

    return hosting_pb2.HostedState.Name(state).removeprefix("HOSTED_STATE_").lower()


def _follow(stub: Any, args: argparse.Namespace, version: str) -> int:
    from bummerl.v1 import hosting_pb2

    seen = "building"
    deadline = time.monotonic() + args.follow_timeout
    while time.monotonic() < deadline:
        reply = stub.GetVersionLogs(hosting_pb2.GetVersionLogsRequest(
            version=version, bot_name=args.bot), metadata=_metadata(args.token), timeout=30)
        state = _state(reply.version.state)
        if state == "validating" and not reply.version.validation_match_id:
            state = seen  # (its match is about to be named)
        if state != seen:
            match = reply.version.validation_match_id
            print(state + (f" (validation match {match})" if state == "validating" and match
                           else ""), flush=True)
            seen = state
        if state in FINAL:
            if state != "live":
                print(f"why: {reply.version.reason}", file=sys.stderr)
                return 1
            return 0
        time.sleep(FOLLOW_POLL_S)
    raise KitError(f"version {version} is still {seen} after {args.follow_timeout:g} s "
                   "(--follow-timeout)")


def run_versions(args: argparse.Namespace) -> int:
    from bummerl.v1 import hosting_pb2

    channel, stub = _stub(args)
    with channel:
        reply = stub.ListVersions(hosting_pb2.ListVersionsRequest(bot_name=args.bot),
                                  metadata=_metadata(args.token), timeout=30)
    if not reply.versions:
        print("no hosted versions")
        return 0
    print(f"{'bot':<20} {'version':<20} {'state':<10} {'restarts':>8}  why")
    for v in reply.versions:
        why = (v.reason or v.last_error).strip().splitlines()
        print(f"{v.bot_name:<20} {v.version:<20} {_state(v.state):<10} {v.restarts:>8}  "
              f"{why[-1] if why else ''}")
    return 0


def run_logs(args: argparse.Namespace) -> int:
    from bummerl.v1 import hosting_pb2

    channel, stub = _stub(args)
    with channel:
        reply = stub.GetVersionLogs(hosting_pb2.GetVersionLogsRequest(
            version=args.version, bot_name=args.bot), metadata=_metadata(args.token), timeout=30)
    v = reply.version
    print(f"# {v.bot_name} {v.version}: {_state(v.state)}"
          + (f" — {v.reason}" if v.reason else ""))
    text = reply.build_log if args.build else reply.run_log
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    return 0


def run_stop(args: argparse.Namespace) -> int:
    from bummerl.v1 import hosting_pb2

    channel, stub = _stub(args)
    with channel:
        reply = stub.StopVersion(hosting_pb2.StopVersionRequest(
            version=args.version, bot_name=args.bot, reason=args.reason),
            metadata=_metadata(args.token), timeout=30)
    print(f"{reply.version.bot_name} {reply.version.version}: {_state(reply.version.state)}")
    return 0


def run_resume(args: argparse.Namespace) -> int:
    from bummerl.v1 import hosting_pb2

    channel, stub = _stub(args)
    with channel:
        reply = stub.ResumeVersion(hosting_pb2.ResumeVersionRequest(
            version=args.version, bot_name=args.bot), metadata=_metadata(args.token), timeout=30)
    print(f"{reply.version.bot_name} {reply.version.version}: {_state(reply.version.state)}")
    return 0
