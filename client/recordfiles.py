"""Files of match records (docs/match-record.md) for the commands that read them offline
(`bummerl analyse FILE`, the kit's `bummerl-kit analyse`): reading them, writing them with
their analysis, and the line for a person that sums up an analysed record.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from client.errors import KitError


def records_of(path: str) -> Iterator[dict[str, Any]]:
    """The match records of the file `path` (one document, or one per line)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise KitError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise KitError(f"cannot read {path}: it is not UTF-8 text") from None
    try:
        documents = [json.loads(text)]
    except json.JSONDecodeError:
        documents = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    documents.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise KitError(f"{path}, line {number}: not JSON: {e}") from None
    for number, document in enumerate(documents, 1):
        if not (isinstance(document, dict) and "record_version" in document):
            raise KitError(f"{path}: document {number} is not a match record (no "
                           "record_version; see docs/match-record.md)")
        yield document


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def line_of(record: dict[str, Any]) -> str:
    """What each seat lost, in one line for a person: exact and estimated apart, and how many
    decisions were mistakes (an estimated one only when its loss is beyond its noise,
    `analysis.is_mistake`)."""
    parts = []
    for seat, tally in enumerate(record["analysis"]["seats"]):
        name = (record.get("bots") or [{}, {}])[seat].get("name") or f"seat {seat}"
        exact, estimate = tally["exact"], tally["estimate"]
        parts.append(
            f"{name} lost {exact['loss']:.2f} game points to "
            f"{_count(exact['mistakes'], 'mistake')} in "
            f"{_count(exact['decisions'], 'exact decision')}, "
            f"and an estimated {estimate['loss']:.2f} in "
            f"{_count(estimate['decisions'], 'estimated decision')}, "
            f"{estimate['mistakes']} of them beyond the estimate's noise")
    return f"match {record.get('match_id')}: " + "; ".join(parts)


def write_analysed(records: Iterable[dict[str, Any]], output: str,
                   analyse: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Each record with its `analysis` (what `analyse` gives; its ValueError is a KitError), one
    JSON line each to the file `output` ("-": stdout), and its `line_of` on stderr."""
    out: IO[str] = sys.stdout
    if output != "-":
        try:
            out = open(output, "w", encoding="utf-8")  # noqa: SIM115  (closed below)
        except OSError as e:
            raise KitError(f"cannot write {output}: {e.strerror}") from None
    try:
        for record in records:
            try:
                found = analyse(record)
            except ValueError as e:
                raise KitError(str(e)) from None
            record = {**record, "analysis": found}
            out.write(json.dumps(record) + "\n")
            out.flush()
            print(line_of(record), file=sys.stderr)
    finally:
        if out is not sys.stdout:
            out.close()
