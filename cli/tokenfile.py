"""Tokens `bummerl up` keeps across restarts beside its database, so a token noted once goes on
working: the operator token (`OPERATOR`) and the web's token for PeopleService (`WEB`).

Unless one is given, `bummerl up` reads the token from a file beside its database
(`FILE.operator-token` / `FILE.web-token` beside an SQLite FILE; `var/operator-token` /
`var/web-token` for a database server), or makes one and writes it there, readable and writable
by its owner only (0600). A token file others may read is refused (like ssh refuses such a
key), naming the file and the fix; so is an empty one.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from client.errors import KitError


@dataclass(frozen=True)
class TokenFile:
    """One kind of kept token."""

    what: str  # in messages: "operator token"
    suffix: str  # the file's name beside an SQLite file: ".operator-token"
    given_by: str  # how to give one instead: "--operator-token or $BUMMERL_OPERATOR_TOKEN"
    nbytes: int  # random bytes of a new token

    def path_for(self, database_url: str, var: Path) -> Path:
        """Where the token of the database at `database_url` is kept (`var`: the site's var
        folder, `db.base.var_dir`)."""
        from sqlalchemy.engine import make_url

        url = make_url(database_url)
        if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
            database = Path(url.database)
            return database.with_name(database.name + self.suffix)
        return var / self.suffix.lstrip(".")

    def read(self, path: Path) -> str | None:
        """The token kept at `path`, or None if there is none; KitError if others may read it
        or it is empty."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError as e:
            raise KitError(f"cannot read the {self.what} in {path}: {e.strerror}") from None
        with os.fdopen(fd, encoding="utf-8") as f:
            mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
            if mode & 0o077:
                raise KitError(f"{path} holds the {self.what} but others may read it (mode "
                               f"{mode:04o}): run `chmod 600 {path}`, or give a token with "
                               f"{self.given_by}")
            token = f.read().strip()
        if not token:
            raise KitError(f"{path} is empty: remove it (a new {self.what} is made) or give "
                           f"one with {self.given_by}")
        return token

    def keep(self, path: Path) -> tuple[str, bool]:
        """The token kept at `path`, made and written (mode 0600) if there is none; and
        whether it was made now."""
        token = self.read(path)
        if token is not None:
            return token, False
        token = secrets.token_urlsafe(self.nbytes)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another `bummerl up` on this database made it just now
            return self.keep(path)
        except OSError as e:
            raise KitError(f"cannot write the {self.what} to {path}: {e.strerror}") from None
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o600)
            f.write(token + "\n")
        return token, True


OPERATOR = TokenFile("operator token", ".operator-token",
                     "--operator-token or $BUMMERL_OPERATOR_TOKEN", 24)
WEB = TokenFile("web token", ".web-token", "$BUMMERL_WEB_TOKEN", 32)


def ensure_web_token(database_url: str, var: Path) -> Path | None:
    """Set $BUMMERL_WEB_TOKEN (the web's credential for PeopleService) for the service and the
    web this process starts: the one given, else the one kept beside the database (made at the
    first start); the file, or None when one was given."""
    if os.environ.get("BUMMERL_WEB_TOKEN"):
        return None
    path = WEB.path_for(database_url, var)
    os.environ.pop("BUMMERL_WEB_TOKEN_SHA256", None)  # the service checks the token itself
    os.environ["BUMMERL_WEB_TOKEN"], _ = WEB.keep(path)
    return path
