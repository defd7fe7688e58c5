"""Replaying files of conformance cases and match records (docs/match-record.md): one output
line per document, as `bummerl replay` and the kit's `bummerl-kit replay` print them.

A conformance case gets the JSON its `expect` must hold (/work/shared/conformance/README.md's
contract). A match record is checked against the engine: `{"match_id", "verified", "problems",
"match"}`. A file may hold one document (a case or a record, pretty-printed or not) or many as
JSON lines (what `bummerl games export` writes).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from engine.matchrecord import InvalidRecordError, is_record, verify_record
from engine.replay import InvalidCaseError, replay_case

INVALID = 2  # a file that cannot be read, or a document that is no valid case or record
UNVERIFIED = 1  # a record that does not replay to what it states


def replay_files(paths: list[str]) -> int:
    """Print the line of every document of the files `paths`; the exit status: 0 when every
    file was read and every record verified, 1 when a record did not verify, 2 when a file
    or document was invalid."""
    status = 0
    for path in paths:
        for line, code in lines_of(path):
            status = max(status, code)
            print(json.dumps(line), flush=True)
    return status


def lines_of(path: str) -> Iterator[tuple[dict[str, Any], int]]:
    """The output line of each document of the file `path`, with its exit status."""
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline()
            try:
                document = json.loads(first)
            except json.JSONDecodeError:  # one document over several lines (or not JSON)
                document = None
            if document is None:
                text = first + f.read()
                try:
                    yield answer(json.loads(text))
                except json.JSONDecodeError as exc:
                    yield {"invalid": f"not JSON: {exc}"}, INVALID
                return
            yield answer(document)  # JSON lines: a document per line
            for number, text in enumerate(f, 2):
                if not text.strip():
                    continue
                try:
                    document = json.loads(text)
                except json.JSONDecodeError as exc:
                    yield {"invalid": f"line {number}: not JSON: {exc}"}, INVALID
                    continue
                yield answer(document)
    except OSError as exc:
        yield {"invalid": f"cannot read {path}: {exc.strerror}"}, INVALID
    except UnicodeDecodeError:
        yield {"invalid": f"cannot read {path}: it is not UTF-8 text"}, INVALID


def answer(document: Any) -> tuple[dict[str, Any], int]:
    """The output line for one case or record, and its exit status."""
    try:
        if is_record(document):
            checked = verify_record(document)
            return checked, 0 if checked["verified"] else UNVERIFIED
        return replay_case(document), 0
    except (InvalidCaseError, InvalidRecordError) as exc:
        return {"invalid": str(exc)}, INVALID
