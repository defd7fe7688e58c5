"""The markers of what a test needs (tests/needs.py) hold: they are registered, a test that
reaches a server without its marker fails there, and every collected test that uses a server's
fixture, or has a tool's marker, also carries `services` (so `pytest -m "not services"` runs
none of them: there this file checks the tests it selected)."""

from __future__ import annotations

from pathlib import Path

import needs
import pytest


def test_the_markers_are_registered(pytestconfig):
    registered = {line.split(":", 1)[0] for line in pytestconfig.getini("markers")}
    assert {"services", *needs.TOOLS} <= registered


def test_a_test_that_reaches_a_server_without_its_marker_fails_there():
    with pytest.raises(pytest.fail.Exception, match="is not marked `redis`"):
        needs.check("redis", "Redis")
    with pytest.raises(pytest.fail.Exception, match="is not marked `postgres`"):
        needs.check("postgres", "PostgreSQL")


def test_a_test_with_the_marker_passes_the_check(monkeypatch):
    class Marked:  # a test marked `postgres` (this one must stay unmarked: it needs nothing)
        nodeid = "tests/x.py::test_x"

        def get_closest_marker(self, name: str) -> pytest.Mark | None:
            return pytest.mark.postgres.mark if name == "postgres" else None

    monkeypatch.setattr(needs, "running", Marked())
    needs.check("postgres", "PostgreSQL")
    with pytest.raises(pytest.fail.Exception, match="tests/x.py::test_x reaches Redis"):
        needs.check("redis", "Redis")


def test_every_collected_test_that_needs_something_is_marked(request):
    unmarked = []
    for item in request.session.items:
        wanted = {marker for fixture, marker in needs.FIXTURES.items()
                  if fixture in getattr(item, "fixturenames", ())}
        if wanted or any(item.get_closest_marker(m) for m in needs.TOOLS):
            wanted.add("services")
        unmarked += [f"{item.nodeid}: {m}" for m in sorted(wanted)
                     if item.get_closest_marker(m) is None]
    assert unmarked == []


def test_the_suite_doc_lists_every_marker_and_what_it_needs():
    """docs/testing.md's table of what the suite needs has a row for each marker of
    tests/needs.py (it once left out `podman`)."""
    readme = (Path(__file__).resolve().parent.parent / "docs" / "testing.md").read_text()
    rows = {line.split("|")[1].strip().strip("`") for line in readme.splitlines()
            if line.startswith("| `")}
    missing = [name for name in needs.TOOLS if name not in rows]
    assert not missing, f"docs/testing.md's table of what the suite needs lacks {missing}"
