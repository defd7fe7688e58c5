"""The operator token `bummerl up` keeps across restarts, so the token a person noted goes on
working.

Unless one is given (`--operator-token`, $BUMMERL_OPERATOR_TOKEN), `bummerl up` reads it from
a file beside its database (`FILE.operator-token` beside an SQLite FILE; `var/operator-token`
for a database server), or makes one and writes it there, readable and writable by its owner
only (0600). A token file others may read is refused (like ssh refuses such a key), naming the
file and the fix; so is an empty one.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from client.errors import KitError

SUFFIX = ".operator-token"


def path_for(database_url: str, var: Path) -> Path:
    """Where the token of the database at `database_url` is kept (`var`: the site's var folder,
    `db.base.var_dir`)."""
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
        raise KitError(f"cannot read the operator token in {path}: {e.strerror}") from None
    with os.fdopen(fd, encoding="utf-8") as f:
        mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
        if mode & 0o077:
            raise KitError(f"{path} holds the operator token but others may read it (mode "
                           f"{mode:04o}): run `chmod 600 {path}`, or give a token with "
                           "--operator-token or $BUMMERL_OPERATOR_TOKEN")
        token = f.read().strip()
    if not token:
        raise KitError(f"{path} is empty: remove it (a new operator token is made) or give "
                       "one with --operator-token or $BUMMERL_OPERATOR_TOKEN")
    return token


def keep(path: Path) -> tuple[str, bool]:
    """The token kept at `path`, made and written (mode 0600) if there is none; and whether
    it was made now."""
    token = read(path)
    if token is not None:
        return token, False
    token = secrets.token_urlsafe(24)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another `bummerl up` on this database made it just now
        return keep(path)
    except OSError as e:
        raise KitError(f"cannot write the operator token to {path}: {e.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(token + "\n")
    return token, True
