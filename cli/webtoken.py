"""The web token `bummerl up` keeps across restarts (issue 30): the web's credential for the
engine service's PeopleService (`BUMMERL_WEB_TOKEN`), so the web it starts, and one started
again later, can act for people.

Unless $BUMMERL_WEB_TOKEN is given, `bummerl up` reads it from a file beside its database
(`FILE.web-token` beside an SQLite FILE; `var/web-token` for a database server), or makes one
and writes it there, readable and writable by its owner only (0600). A token file others may
read is refused, naming the file and the fix; so is an empty one. (The same rules as the
operator token's file.)
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from client.errors import KitError

SUFFIX = ".web-token"
FIX = "give one with $BUMMERL_WEB_TOKEN"


def path_for(database_url: str, var: Path) -> Path:
    """Where the web token of the database at `database_url` is kept (`var`: the checkout's
    var/)."""
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        database = Path(url.database)
        return database.with_name(database.name + SUFFIX)
    return var / SUFFIX.lstrip(".")


def read(path: Path) -> str | None:
    """The token kept at `path`, or None if there is none; KitError if others may read it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise KitError(f"cannot read the web token in {path}: {e.strerror}") from None
    with os.fdopen(fd, encoding="utf-8") as f:
        mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
        if mode & 0o077:
            raise KitError(f"{path} holds the web token but others may read it (mode "
                           f"{mode:04o}): run `chmod 600 {path}`, or {FIX}")
        token = f.read().strip()
    if not token:
        raise KitError(f"{path} is empty: remove it (a new web token is made) or {FIX}")
    return token


def keep(path: Path) -> tuple[str, bool]:
    """The token kept at `path`, made and written (mode 0600) if there is none; and whether it
    was made now."""
    token = read(path)
    if token is not None:
        return token, False
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another `bummerl up` on this database made it just now
        return keep(path)
    except OSError as e:
        raise KitError(f"cannot write the web token to {path}: {e.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(token + "\n")
    return token, True


def ensure(database_url: str, var: Path) -> Path | None:
    """Set $BUMMERL_WEB_TOKEN for the service and the web this process starts: the one given,
    else the one kept beside the database (made at the first start); the file, or None when
    one was given."""
    if os.environ.get("BUMMERL_WEB_TOKEN"):
        return None
    path = path_for(database_url, var)
    os.environ.pop("BUMMERL_WEB_TOKEN_SHA256", None)  # the service checks the token itself
    os.environ["BUMMERL_WEB_TOKEN"], _ = keep(path)
    return path
