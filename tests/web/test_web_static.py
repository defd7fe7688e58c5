"""The pages' scripts (web/static) as the templates load them, read as text: every script a
template loads is there, and a page script that draws with web/static/cards.js (it takes
`window.bummerlCards`) comes after cards.js on every page that loads it and takes from it only
what cards.js gives. No build step: the scripts are plain files loaded in order."""

from __future__ import annotations

import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web"
STATIC, TEMPLATES = WEB / "static", WEB / "templates"
LOADED = re.compile(r"""<script src="\{\{ url_for\('static', filename='([^']+)'\) \}\}">""")


def loads() -> dict[str, list[str]]:
    """Each template's static scripts, in the order it loads them."""
    return {t.name: LOADED.findall(t.read_text()) for t in sorted(TEMPLATES.glob("*.html"))}


def drawing() -> set[str]:
    """The page scripts that draw with cards.js."""
    return {p.name for p in STATIC.glob("*.js")
            if p.name != "cards.js" and "window.bummerlCards" in p.read_text()}


def test_every_script_a_template_loads_is_there():
    missing = {(t, s) for t, scripts in loads().items() for s in scripts
               if not (STATIC / s).is_file()}
    assert not missing


def test_the_table_and_the_exercise_draw_their_cards_with_cards_js():
    assert {"table.js", "exercise.js"} <= drawing()
    pages = loads()
    assert pages["table.html"][:2] == ["cards.js", "table.js"]
    assert pages["exercise.html"] == ["cards.js", "exercise.js"]


def test_cards_js_comes_first_wherever_a_script_uses_it():
    for template, scripts in loads().items():
        for script in set(scripts) & drawing():
            assert "cards.js" in scripts[:scripts.index(script)], (template, script)


def test_a_page_takes_from_cards_js_only_what_it_gives():
    source = (STATIC / "cards.js").read_text()
    given = set(re.findall(r"(\w+): \w+", source.split("window.bummerlCards = {", 1)[1]
                                              .split("};", 1)[0]))
    for script in drawing():
        code = re.sub(r"^\s*//.*$", "", (STATIC / script).read_text(), flags=re.M)
        taken = set(re.findall(r"\bcards\.(\w+)", code))
        assert taken and taken <= given, (script, taken - given)
