"""An author's upload as a tar.gz: `pack` makes one from a file, a folder or an archive of
theirs, and `check_archive` says whether bummerl takes one (pure: no I/O but `pack` reading the
author's files; the service checks every upload with it before it stores anything).

What is taken: a gzip-compressed tar of at most `MAX_COMPRESSED` bytes (900 kB: an upload is
one gRPC request, at most 1 MiB) that holds at most `MAX_MEMBERS` (500) members, only regular
files and folders (no links, devices or fifos), no absolute name and no `..`, at most
`MAX_UNCOMPRESSED` (20 MB) in all once uncompressed (counted while it is uncompressed, so a tar
bomb stops at the limit), and the module of the entry point `module.py:ClassName` among its
files. Anything else is an `ArchiveError` whose message names what is wrong.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

MAX_COMPRESSED = 900 * 1000
MAX_UNCOMPRESSED = 20 * 1000 * 1000
MAX_MEMBERS = 500
# a tar's headers (512 bytes per member, two for a long name) and its end blocks, beyond the
# files' bytes: what the uncompressed tar may hold more than MAX_UNCOMPRESSED
HEADERS = (MAX_MEMBERS + 1) * 3 * 512 + 10240
ENTRY = re.compile(r"^(?P<module>[A-Za-z0-9_][A-Za-z0-9_./-]*\.py):(?P<cls>[A-Za-z_]\w*)$")
SKIPPED = {"__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache"}  # pack leaves out
MAX_REQUIREMENTS = 10_000  # bytes of requirements.txt
# a pinned requirement: NAME[extras]==VERSION, an environment marker after `;` allowed
PINNED = re.compile(r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
                    r"(?:\[[A-Za-z0-9._,\s-]*\])?\s*==\s*(?P<version>[A-Za-z0-9.!+_-]+)"
                    r"\s*(?:;\s*[A-Za-z0-9_.\s<>=!~'\"()-]+)?$")
# An OCI image reference, the grammar of github.com/distribution/reference (no IPv6 host):
# [HOST[:PORT]/]PATH[:TAG][@ALGORITHM:HEX]; PATH lower case, components separated by `/`.
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE = re.compile(rf"(?P<name>(?:{_HOST}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*)"
                   r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
                   r"(?:@(?P<digest>[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}))?")
MAX_IMAGE = 300  # characters of a reference (db.hosted.HostedVersion.image_ref)
MAX_IMAGE_NAME = 255  # of its name, without tag and digest (the grammar's limit)


class ArchiveError(ValueError):
    """An upload bummerl does not take; the message names what is wrong."""


def parse_entry(entry: str) -> tuple[str, str]:
    """`module.py:ClassName` as (the module's file inside the archive, the class's name)."""
    found = ENTRY.match(entry)
    if found is None:
        raise ArchiveError(f"the entry point {entry!r} is not FILE.py:ClassName (e.g. "
                           "mybot.py:MyBot, or src/mybot.py:MyBot inside a folder)")
    module = found.group("module")
    parts = PurePosixPath(module).parts
    if module.startswith("/") or ".." in parts or "." in parts:
        raise ArchiveError(f"the entry point's file {module!r} must be a plain path inside "
                           "the upload (no leading /, no . or ..)")
    return module, found.group("cls")


def check_requirements(text: str) -> list[str]:
    """The requirements of `text` (pip's requirements.txt format), one per line, once each is
    a pinned requirement `NAME==VERSION` (extras and an environment marker allowed); blank
    lines and comments are skipped. No options (`-r`, `--index-url`, `-e` …), paths or URLs:
    pip reaches only its configured index, and the build installs wheels only. Else
    ArchiveError naming the line."""
    if len(text.encode()) > MAX_REQUIREMENTS:
        raise ArchiveError(f"the requirements are {len(text.encode()):,} bytes; at most "
                           f"{MAX_REQUIREMENTS:,} are taken")
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if PINNED.match(line) is None:
            raise ArchiveError(f"requirements line {number}: {line[:100]!r} is not a pinned "
                               "requirement NAME==VERSION (no options, paths or URLs)")
        found.append(line)
    return found


def check_image(ref: str) -> str:
    """`ref` if it is an image reference a node can pull (`registry.example/me/mybot:2.0`,
    `ghcr.io/me/mybot@sha256:...`; without a registry the runtime's default, usually
    docker.io), else ArchiveError saying what an image reference is."""
    found = IMAGE.fullmatch(ref) if len(ref) <= MAX_IMAGE else None
    if found is None or len(found.group("name")) > MAX_IMAGE_NAME:
        raise ArchiveError(f"{ref[:100]!r} is not an image reference: REGISTRY/NAME:TAG or "
                           "REGISTRY/NAME@sha256:DIGEST, the name in lower case (e.g. "
                           "ghcr.io/me/mybot:2.0)")
    return ref


def member_name(name: str) -> str:
    """A member's name as bummerl keeps it (a leading `./` dropped), or ArchiveError when it is
    absolute, climbs out with `..`, or is empty."""
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or "\\" in name:
        raise ArchiveError(f"the archive's member {name!r} has an absolute path (names must "
                           "be relative, inside the upload)")
    parts = [p for p in PurePosixPath(name).parts if p != "."]
    if ".." in parts:
        raise ArchiveError(f"the archive's member {name!r} climbs out of the upload with '..'")
    if not parts:
        return ""
    return "/".join(parts)


def uncompressed(data: bytes) -> bytes:
    """The tar inside the gzip `data`, read no further than the limit allows."""
    if len(data) > MAX_COMPRESSED:
        raise ArchiveError(f"the upload is {len(data):,} bytes compressed; at most "
                           f"{MAX_COMPRESSED:,} are taken")
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            tar = stream.read(MAX_UNCOMPRESSED + HEADERS + 1)
    except (OSError, EOFError, zlib.error) as e:
        raise ArchiveError(f"the upload is not a gzip-compressed tar archive ({e})") from None
    if len(tar) > MAX_UNCOMPRESSED + HEADERS:
        raise ArchiveError(f"the upload holds more than {MAX_UNCOMPRESSED:,} bytes once "
                           "uncompressed (a tar bomb?); at most that is taken")
    return tar


def members(data: bytes) -> list[tuple[tarfile.TarInfo, str]]:
    """Every member of the tar.gz `data` with its kept name, checked member by member."""
    tar_bytes = uncompressed(data)
    found: list[tuple[tarfile.TarInfo, str]] = []
    total = 0
    seen: set[str] = set()
    try:
        with tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:") as tar:
            while (info := tar.next()) is not None:
                if len(found) == MAX_MEMBERS:
                    raise ArchiveError(f"the archive holds more than {MAX_MEMBERS} members "
                                       "(files and folders); at most that many are taken")
                name = member_name(info.name)
                if info.issparse() or not (info.isreg() or info.isdir()):
                    kind = ("a symbolic link" if info.issym() else "a hard link"
                            if info.islnk() else "a fifo" if info.isfifo() else "a device"
                            if info.isdev() else "a sparse file" if info.issparse()
                            else "not a regular file")
                    raise ArchiveError(f"the archive's member {info.name!r} is {kind}: only "
                                       "regular files and folders are taken")
                if info.isreg():
                    if name in seen:
                        raise ArchiveError(f"the archive holds {info.name!r} twice")
                    seen.add(name)
                    total += info.size
                    if total > MAX_UNCOMPRESSED:
                        raise ArchiveError(
                            f"the archive's files hold more than {MAX_UNCOMPRESSED:,} bytes "
                            "uncompressed; at most that is taken")
                found.append((info, name))
    except tarfile.TarError as e:
        raise ArchiveError(f"the upload is not a readable tar archive ({e})") from None
    return found


def check_archive(data: bytes, entry: str) -> list[str]:
    """The names of the regular files of the upload `data` (a tar.gz), sorted, once it passes
    every check of the module's docstring; else ArchiveError naming what is wrong."""
    module, _ = parse_entry(entry)
    files = sorted(name for info, name in members(data) if info.isreg() and name)
    if not files:
        raise ArchiveError("the archive holds no file")
    if module not in files:
        raise ArchiveError(f"the entry point's file {module!r} is not in the upload (it holds "
                           f"{', '.join(files[:10])}{' …' if len(files) > 10 else ''})")
    return files


def _add(tar: tarfile.TarFile, name: str, content: bytes | None) -> None:
    """Add a file (or, with `content` None, a folder) under `name`, with fixed owner, modes
    and times (the same files make the same bytes)."""
    info = tarfile.TarInfo(name)
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if content is None:
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
    else:
        info.size, info.mode = len(content), 0o644
        tar.addfile(info, io.BytesIO(content))


def _folder_files(folder: Path) -> list[tuple[str, bytes | None]]:
    """The files and folders under `folder` (relative names), without caches; a link or a
    special file is an ArchiveError."""
    found: list[tuple[str, bytes | None]] = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part in SKIPPED for part in relative.parts) or path.suffix == ".pyc":
            continue
        if path.is_symlink():
            raise ArchiveError(f"{path} is a symbolic link: upload the file it points to")
        if path.is_dir():
            found.append((relative.as_posix(), None))
        elif path.is_file():
            found.append((relative.as_posix(), path.read_bytes()))
        else:
            raise ArchiveError(f"{path} is not a regular file")
        if len(found) > MAX_MEMBERS:
            raise ArchiveError(f"{folder} holds more than {MAX_MEMBERS} files and folders")
    return found


def _zip_files(path: Path) -> list[tuple[str, bytes | None]]:
    """The members of the zip file `path`, each read no further than the limit allows."""
    found: list[tuple[str, bytes | None]] = []
    total = 0
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if len(found) == MAX_MEMBERS:
                    raise ArchiveError(f"{path} holds more than {MAX_MEMBERS} members")
                name = member_name(info.filename)
                mode = info.external_attr >> 16
                if mode and (mode & 0o170000) not in (0, 0o100000, 0o040000):
                    raise ArchiveError(f"the zip's member {info.filename!r} is a link or a "
                                       "special file: only regular files and folders are taken")
                if info.is_dir():
                    found.append((name, None))
                    continue
                with archive.open(info) as member:
                    content = member.read(MAX_UNCOMPRESSED - total + 1)
                total += len(content)
                if total > MAX_UNCOMPRESSED:
                    raise ArchiveError(f"{path} holds more than {MAX_UNCOMPRESSED:,} bytes "
                                       "uncompressed; at most that is taken")
                found.append((name, content))
    except (zipfile.BadZipFile, zlib.error, NotImplementedError) as e:
        raise ArchiveError(f"{path} is not a readable zip file ({e})") from None
    return found


def pack(path: str | Path, entry: str) -> bytes:
    """The upload of `path` as a checked tar.gz: a file (entry `FILE.py:Class`, the file's own
    name), a folder (entry relative to it), or a .tar.gz/.tgz/.zip (entry inside it; a tar.gz
    is taken as it is, a zip repacked). ArchiveError names what is wrong."""
    path = Path(path)
    parse_entry(entry)
    if path.is_dir():
        files = _folder_files(path)
    elif path.is_file() and path.name.endswith((".tar.gz", ".tgz")):
        data = path.read_bytes()
        check_archive(data, entry)
        return data
    elif path.is_file() and path.suffix == ".zip":
        files = _zip_files(path)
    elif path.is_file():
        files = [(path.name, path.read_bytes())]
    else:
        raise ArchiveError(f"{path}: no such file or folder")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as stream, \
            tarfile.open(fileobj=stream, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in files:
            if name:
                _add(tar, name, content)
    data = buffer.getvalue()
    check_archive(data, entry)
    return data
