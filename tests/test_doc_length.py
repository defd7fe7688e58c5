"""Docs are references (the brief; issue 44): README.md and every docs/*.md is at most 300 lines,
the rulebook (docs/rules.md) aside. A doc that grows past that is split into focused references
named for what they hold, and the history of how a figure came to be goes in commit messages."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 300
EXEMPT = {"docs/rules.md"}  # the rulebook, cited rule by rule


def test_no_doc_is_over_300_lines():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(docs) > 10, docs  # the glob found the docs
    long = {}
    for doc in docs:
        name = doc.relative_to(ROOT).as_posix()
        lines = len(doc.read_text().splitlines())
        if name not in EXEMPT and lines > MAX_LINES:
            long[name] = lines
    assert not long, f"docs over {MAX_LINES} lines (split them into focused references): {long}"
