"""No package registry's host is named anywhere in the repository (the brief; issue 44): not in
the docs, scripts, comments, tests or the Dockerfile. Tools reach their registries through
their own configuration (pip's index, npm's registry, the host's apt sources), never through a
host written here. The hosts are matched by pattern, built from parts, so that this file does
not name them either."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dotted(*labels: str) -> str:
    """A host's pattern from its labels: any subdomain before them, a word boundary after."""
    return r"(?<![\w-])(?:[\w-]+\.)*" + r"\.".join(labels) + r"(?![\w-])"


REGISTRY_HOSTS = re.compile("|".join([
    dotted("py" + "pi", "org"),  # the Python package index (and its test instance)
    dotted("python" + "hosted", "org"),  # its files
    dotted("npm" + "js", "(?:org|com)"),  # npm's registry
    dotted("yarn" + "pkg", "com"),
    dotted("deb", "deb" + "ian", "org"),  # Debian's mirrors and archives
    dotted("ftp\\d*", "[a-z]{2}", "deb" + "ian", "org"),
    dotted("security", "deb" + "ian", "org"),
    dotted("archive", "ubu" + "ntu", "com"),
    dotted("security", "ubu" + "ntu", "com"),
    dotted("deb", "node" + "source", "com"),
    dotted("crates", "io"),
    dotted("proxy", "go" + "lang", "org"),
    dotted("ruby" + "gems", "org"),
    dotted("repo1?", "maven", "(?:org|apache\\.org)"),
    dotted("(?:conda|repo)", "ana" + "conda", "(?:org|com)"),
]), re.I)


def tracked_files() -> list[Path]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if done.returncode == 0:
        return [ROOT / name for name in done.stdout.decode().split("\0") if name]
    skip = {".git", ".venv", "node_modules", "__pycache__", "var"}
    return [p for p in ROOT.rglob("*") if p.is_file() and not skip & set(p.parts)]


def test_the_pattern_knows_the_hosts():
    """The pattern catches each registry's host (built from parts) and leaves other text be."""
    for host in ["py" + "pi.org", "files." + "python" + "hosted.org", "registry." + "npm" +
                 "js.org", "deb." + "deb" + "ian.org", "http://deb." + "deb" + "ian.org/debian",
                 "ftp.at." + "deb" + "ian.org", "crates" + ".io", "proxy." + "go" + "lang.org"]:
        assert REGISTRY_HOSTS.search(f"see {host}/simple"), host
    for text in ["PyPI", "the npm registry", "a Debian mirror", "py" + "pi_org", "example.org"]:
        assert not REGISTRY_HOSTS.search(text), text


def test_no_file_of_the_repository_names_a_package_registry_host():
    found = []
    for path in tracked_files():
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            match = REGISTRY_HOSTS.search(line)
            if match:
                found.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    assert not found, "package registry hosts named in the repository:\n" + "\n".join(found)
