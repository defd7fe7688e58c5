"""Every relative link of README.md and docs/*.md leads somewhere: the file exists and, when the
link names a heading (`file.md#anchor`), the file has a heading with that anchor (GitHub's:
lower case, punctuation dropped, spaces as hyphens). Docs get split and headings renamed;
this keeps the links from the README and between the docs working."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            found.add(anchor(line.lstrip("#")))
    return found


def test_every_relative_link_of_the_docs_leads_somewhere():
    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in LINK.findall(doc.read_text()):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            name, _, fragment = target.partition("#")
            path = (doc.parent / name).resolve() if name else doc
            if not path.exists():
                broken.append(f"{doc.name}: {target} (no such file)")
            elif fragment and path.suffix == ".md" and fragment not in anchors(path):
                broken.append(f"{doc.name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
