"""`bummerl replay FILE...`: replay conformance cases and print what `expect` must hold."""

from __future__ import annotations

import argparse
import json
from typing import Any

from engine.replay import InvalidCaseError, replay_case


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="replay conformance case files, one JSON line each",
        description="For each case file, apply its actions with the engine and print one line: "
                    "the JSON object its `expect` should hold, or {\"invalid\": why}. "
                    "Exit status 0 when every file was a valid case, 2 otherwise.")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        line: dict[str, Any]
        try:
            with open(path, encoding="utf-8") as f:
                case = json.load(f)
            line = replay_case(case)
        except OSError as exc:
            line, status = {"invalid": f"cannot read {path}: {exc.strerror}"}, 2
        except json.JSONDecodeError as exc:
            line, status = {"invalid": f"not JSON: {exc}"}, 2
        except InvalidCaseError as exc:
            line, status = {"invalid": str(exc)}, 2
        print(json.dumps(line), flush=True)
    return status
