"""hosting.archive: what an upload may hold. Hostile archives (a tar bomb, a gzip bomb, path
traversal, links, devices, too many members, too large) are refused with a message naming what
is wrong; a file, a folder, a tar.gz and a zip pack into the same checked tar.gz; an image
reference follows the OCI reference grammar."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile

import pytest

from hosting.archive import (
    MAX_COMPRESSED,
    MAX_MEMBERS,
    MAX_UNCOMPRESSED,
    ArchiveError,
    check_archive,
    check_image,
    check_requirements,
    pack,
)

BOT = b"from bummerl_kit import Bot\n\nclass MyBot(Bot):\n    def act(self, o):\n        return 0\n"


def targz(*members: tarfile.TarInfo | tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                name, content = member
                info = tarfile.TarInfo(name)
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def special(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def test_a_good_archive_lists_its_files():
    data = targz(("mybot.py", BOT), ("lib/helpers.py", b"X = 1\n"), ("./data.json", b"{}"))
    assert check_archive(data, "mybot.py:MyBot") == ["data.json", "lib/helpers.py", "mybot.py"]
    assert check_archive(data, "lib/helpers.py:X") == ["data.json", "lib/helpers.py", "mybot.py"]


@pytest.mark.parametrize("entry, says", [
    ("mybot:MyBot", "is not FILE.py:ClassName"),
    ("mybot.py", "is not FILE.py:ClassName"),
    ("mybot.py:My-Bot", "is not FILE.py:ClassName"),
    ("../mybot.py:MyBot", "is not FILE.py:ClassName"),
    ("a/../mybot.py:MyBot", "no . or .."),
    ("other.py:MyBot", "'other.py' is not in the upload"),
])
def test_the_entry_point_must_be_well_formed_and_present(entry, says):
    with pytest.raises(ArchiveError, match=says):
        check_archive(targz(("mybot.py", BOT)), entry)


@pytest.mark.parametrize("member, says", [
    (("../evil.py", b"x"), "climbs out of the upload"),
    (("a/../../evil.py", b"x"), "climbs out of the upload"),
    (("/etc/cron.d/evil", b"x"), "absolute path"),
    (special("link.py", tarfile.SYMTYPE, "/etc/passwd"), "is a symbolic link"),
    (special("hard.py", tarfile.LNKTYPE, "mybot.py"), "is a hard link"),
    (special("dev", tarfile.CHRTYPE), "is a device"),
    (special("fifo", tarfile.FIFOTYPE), "is a fifo"),
])
def test_hostile_members_are_refused(member, says):
    with pytest.raises(ArchiveError, match=says):
        check_archive(targz(("mybot.py", BOT), member), "mybot.py:MyBot")


def test_a_tar_bomb_stops_at_the_uncompressed_limit():
    # 200 MB of zeros compress to ~200 KB: under the compressed limit, far over the other
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("zeros.bin")
        info.size = 200 * 1000 * 1000
        tar.addfile(info, io.BytesIO(bytes(info.size)))
        tar.addfile(tarfile.TarInfo("mybot.py"), io.BytesIO(b""))
    data = buffer.getvalue()
    assert len(data) < MAX_COMPRESSED
    with pytest.raises(ArchiveError, match="more than 20,000,000 bytes once uncompressed"):
        check_archive(data, "mybot.py:MyBot")


def test_a_gzip_bomb_that_is_no_tar_stops_too():
    data = gzip.compress(bytes(100 * 1000 * 1000))
    with pytest.raises(ArchiveError, match="once uncompressed"):
        check_archive(data, "mybot.py:MyBot")


def test_files_over_the_limit_in_all_are_refused():
    half = bytes(MAX_UNCOMPRESSED // 2 + 1)
    with pytest.raises(ArchiveError, match="more than 20,000,000 bytes"):
        check_archive(targz(("mybot.py", BOT), ("a", half), ("b", half)), "mybot.py:MyBot")


def test_too_many_members_are_refused():
    many = [(f"f{i}.py", b"") for i in range(MAX_MEMBERS)]
    with pytest.raises(ArchiveError, match="more than 500 members"):
        check_archive(targz(("mybot.py", BOT), *many), "mybot.py:MyBot")


def test_too_large_compressed_and_not_an_archive_are_refused():
    with pytest.raises(ArchiveError, match="compressed; at most 900,000"):
        check_archive(os.urandom(MAX_COMPRESSED + 1), "mybot.py:MyBot")
    with pytest.raises(ArchiveError, match="not a gzip-compressed tar"):
        check_archive(b"PK\x03\x04 not a tar", "mybot.py:MyBot")
    with pytest.raises(ArchiveError, match="not a readable tar|holds no file"):
        check_archive(gzip.compress(b"hello" * 200), "mybot.py:MyBot")


def test_the_same_files_pack_the_same_from_a_file_a_folder_a_zip_and_a_targz(tmp_path):
    folder = tmp_path / "bot"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "mybot.py").write_bytes(BOT)
    (folder / "__pycache__" / "mybot.cpython-311.pyc").write_bytes(b"cache")
    single = pack(folder / "mybot.py", "mybot.py:MyBot")
    from_folder = pack(folder, "mybot.py:MyBot")
    assert single == from_folder == pack(folder, "mybot.py:MyBot")  # reproducible
    assert check_archive(single, "mybot.py:MyBot") == ["mybot.py"]
    zipped = tmp_path / "bot.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("mybot.py", BOT)
    assert pack(zipped, "mybot.py:MyBot") == single
    archive = tmp_path / "bot.tar.gz"
    archive.write_bytes(single)
    assert pack(archive, "mybot.py:MyBot") == single


def test_pack_refuses_links_missing_paths_and_a_missing_entry(tmp_path):
    (tmp_path / "mybot.py").write_bytes(BOT)
    (tmp_path / "secret").symlink_to("/etc/passwd")
    with pytest.raises(ArchiveError, match="is a symbolic link"):
        pack(tmp_path, "mybot.py:MyBot")
    with pytest.raises(ArchiveError, match="no such file or folder"):
        pack(tmp_path / "absent", "mybot.py:MyBot")
    (tmp_path / "secret").unlink()
    with pytest.raises(ArchiveError, match="'other.py' is not in the upload"):
        pack(tmp_path, "other.py:MyBot")
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../mybot.py", BOT)
    with pytest.raises(ArchiveError, match="climbs out"):
        pack(evil, "mybot.py:MyBot")


def test_requirements_must_be_pinned_names_from_the_index():
    text = ("numpy==1.26.4\n# a comment\n\n"
            "requests[socks] == 2.31.0 ; python_version >= \"3.8\"  # why\n")
    assert check_requirements(text) == [
        "numpy==1.26.4", 'requests[socks] == 2.31.0 ; python_version >= "3.8"']
    assert check_requirements("") == []
    for number, line in enumerate(["numpy", "numpy>=1.0", "--index-url http://10.0.0.1/",
                                   "-r other.txt", "-e git+https://host/x.git",
                                   "numpy @ https://host/numpy.whl", "./local/package",
                                   "/abs/wheel.whl"], 2):
        with pytest.raises(ArchiveError, match=f"line {number}: .* is not a pinned"):
            check_requirements("ok==1.0\n" + "\n" * (number - 2) + line)
    with pytest.raises(ArchiveError, match="at most 10,000"):
        check_requirements("a==1\n" * 3000)


@pytest.mark.parametrize("ref", [
    "mybot", "me/mybot:2.0", "ghcr.io/me/mybot:2.0", "registry.example:5000/a/b_c/d-e:latest",
    "docker.io/library/python:3.11-slim", "localhost/x__y:T.1-a",
    "ghcr.io/me/bot@sha256:" + "a" * 64, "ghcr.io/me/bot:2.0@sha256:" + "b" * 64,
    "Registry.Example/me/bot:1"])
def test_image_references_that_a_node_can_pull_are_taken(ref):
    assert check_image(ref) == ref


@pytest.mark.parametrize("ref", [
    "", "Not An Image", "ghcr.io/Me/bot:1", "ghcr.io/me/bot:", "ghcr.io//bot", "/bot", "bot/",
    "-bot", "bot:1 --privileged", "bot@sha256:xyz", "bot:" + "1" * 129, "x" * 256,
    "a/" * 150 + "b", "bot\n:1", "bot;rm -rf /"])
def test_other_image_references_are_refused_saying_what_one_is(ref):
    with pytest.raises(ArchiveError, match="is not an image reference: REGISTRY/NAME:TAG"):
        check_image(ref)
