"""An upload's files: packed by the author's command, checked by the service (pure).

`check_archive(data, entry)` refuses, with an `ArchiveError` naming what is wrong, anything but
a gzip-compressed tar of regular files and folders, at most `MAX_COMPRESSED` bytes (under the
service's 1 MiB request), `MAX_UNPACKED` unpacked and `MAX_MEMBERS` members, with no absolute
path, no `..`, no link or device, holding the entry's module (`path/module.py:Class`).
"""

from __future__ import annotations

import io
import re
import tarfile
import zlib
from pathlib import Path, PurePosixPath

MAX_COMPRESSED = 900 * 1000
MAX_UNPACKED = 20 * 1000 * 1000
MAX_MEMBERS = 500
ENTRY = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_./-]{0,150}\.py):([A-Za-z_][A-Za-z0-9_]{0,60})")


class ArchiveError(ValueError):
    """What is wrong with an upload's files."""


def split_entry(entry: str) -> tuple[str, str]:
    """(`path/module.py`, `Class`); ArchiveError unless well formed."""
    found = ENTRY.fullmatch(entry)
    if not found or ".." in PurePosixPath(found.group(1)).parts:
        raise ArchiveError(f"entry {entry!r} is not `path/module.py:ClassName`")
    return found.group(1), found.group(2)


def check_archive(data: bytes, entry: str) -> list[str]:
    """The files' names; ArchiveError naming what is wrong."""
    module, _ = split_entry(entry)
    if len(data) > MAX_COMPRESSED:
        raise ArchiveError(f"{len(data)} bytes, at most {MAX_COMPRESSED} compressed")
    names: list[str] = []
    unpacked = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar:
                if len(names) >= MAX_MEMBERS:
                    raise ArchiveError(f"more than {MAX_MEMBERS} files")
                path = PurePosixPath(member.name)
                if path.is_absolute() or ".." in path.parts:
                    raise ArchiveError(f"{member.name!r}: an absolute path or `..`")
                if not (member.isfile() or member.isdir()):
                    raise ArchiveError(f"{member.name!r}: only files and folders (no links "
                                       "or devices)")
                unpacked += member.size
                if unpacked > MAX_UNPACKED:
                    raise ArchiveError(f"more than {MAX_UNPACKED} bytes unpacked")
                if member.isfile():
                    names.append(str(path))
    except (tarfile.TarError, EOFError, zlib.error, OSError) as e:
        raise ArchiveError(f"not a gzip-compressed tar archive ({e})") from None
    if module not in names:
        raise ArchiveError(f"the entry's module {module} is not among the files")
    return names


def pack(path: str | Path) -> bytes:
    """A file, or a folder's files, as a gzip-compressed tar (names relative to the folder)."""
    path = Path(path)
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                    and "__pycache__" not in p.parts)
        for file in files:
            tar.add(file, arcname=file.name if path.is_file() else
                    str(file.relative_to(path)), recursive=False)
    return out.getvalue()
