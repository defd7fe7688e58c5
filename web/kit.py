"""The bot authors' kit of the running version (docs/kit.md): `/kit` gives the one-line `pip
install` command with this site's own address, `/kit/bummerl_kit-VERSION-py3-none-any.whl` the
wheel itself (pip needs the wheel's real file name in the URL).

The wheel is a file built beside the site, never by the web: `bash scripts/kit --outdir DIR`
(`bummerl up` builds it at start when it is missing or older than the sources) into the folder
of `KIT_DIR` (config), else `$BUMMERL_KIT_DIR`, else `var/kit`. Only the wheel of the version
the site runs is served; without it both pages say how to build it, the wheel's with a 404.
"""

from __future__ import annotations

import importlib.metadata
import os
import tomllib
from pathlib import Path

from flask import Blueprint, current_app, render_template, request, send_file

from db.base import ROOT, var_dir
from web.queries import Missing

bp = Blueprint("kit", __name__)
CONTENT_TYPE = "application/zip"  # a wheel is a zip archive (PEP 427)


def site_version() -> str:
    """The version the site runs (the installed distribution's, else pyproject.toml's)."""
    try:
        return importlib.metadata.version("bummerl")
    except importlib.metadata.PackageNotFoundError:
        with open(ROOT / "pyproject.toml", "rb") as f:
            return str(tomllib.load(f)["project"]["version"])


def wheel_name(version: str) -> str:
    return f"bummerl_kit-{version}-py3-none-any.whl"


def kit_dir() -> Path:
    return Path(current_app.config.get("KIT_DIR") or os.environ.get("BUMMERL_KIT_DIR")
                or var_dir() / "kit")


def wheel_url(name: str) -> str:
    """The wheel's URL with the address the request came to (behind trusted proxies: theirs)."""
    return f"{request.host_url}kit/{name}"


@bp.get("/kit")
def page() -> str:
    name = wheel_name(site_version())
    path = kit_dir() / name
    built = path.is_file()
    return render_template("kit.html", name=name, version=site_version(), built=built,
                           url=wheel_url(name), size=path.stat().st_size if built else 0,
                           folder=str(kit_dir()))


@bp.get("/kit/<name>")
def wheel(name: str):  # type: ignore[no-untyped-def]
    served = wheel_name(site_version())
    path = kit_dir() / served
    if name != served:
        raise Missing(f"there is no kit {name!r} here: this site runs version "
                      f"{site_version()}, its kit is /kit/{served}")
    if not path.is_file():
        raise Missing(f"no kit wheel was built for version {site_version()}: the site's "
                      f"operator builds it with `bash scripts/kit --outdir DIR` into the "
                      "folder of BUMMERL_KIT_DIR (default var/kit; `bummerl up` builds it "
                      "at start)")
    return send_file(path, mimetype=CONTENT_TYPE, as_attachment=True, download_name=served,
                     max_age=300)
