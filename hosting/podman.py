"""The podman side of hosted bots: the kit's base image (`ensure_base`), each version's image
(`build_version`), its container (`start`, `stop`, `containers`, `logs`) and the clean-up
(`remove_image`, `prune`). Every call is a `podman` subprocess with a time-out; a failure is a
`PodmanError` naming the command and podman's words. The sandbox's flags: hosting.sandbox.

The base image, `localhost/bummerl-hosted-base:<kit hash>`, is built FROM the project's base
(`$BUMMERL_IMAGE_BASE`, else python:3.11-slim where present, else
`localhost/bummerl-base:bookworm`, which `bash scripts/image base` builds) with a venv at
/opt/kit holding the kit's wheel (tools/kit.py builds it from the tree) and the user `bot`
(uid 10001). The hash covers the kit's sources, so the image is built once per kit and reused
while it is present. A version's image adds the author's files under /bot (root's, read-only
to the bot), their requirements (`pip install --only-binary=:all:`: wheels only, no setup.py of
theirs runs at build time, and the install is the build's last step, so no Python starts after
it to run a wheel's `.pth` file) after a compile of every .py file (a syntax error fails the
build, with its file and line); its command is `bummerl-kit /bot/<module>:<Class> --server
unix:/run/bummerl/service.sock`, run from the entry's folder (on PYTHONPATH, with /bot), to
which `start` appends `--matches`/`--version`.

Podman runs with runc and no default ulimits (the containers.conf of scripts/image, written to
the same place) unless CONTAINERS_CONF names another configuration.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from hosting.archive import check_archive, check_requirements, parse_entry
from hosting.sandbox import SERVER, UID, Limits, podman_run_args

ROOT = Path(__file__).resolve().parent.parent
BASE_NAME = "localhost/bummerl-hosted-base"
PUBLIC_BASE = "docker.io/library/python:3.11-slim"
LOCAL_BASE = "localhost/bummerl-base:bookworm"
VERSION_LABEL = "bummerl.hosted.version"  # on each version's image: its tag
VERSIONS = "localhost/bummerl-hosted/"  # where the versions' images are named (prune)
# The kit's sources (tools/kit.py's PARTS): what the base image's hash covers
KIT_SOURCES = ("bummerl_kit", "engine", "client", "proto/bummerl", "bots", "analysis",
               "events/__init__.py", "events/levels.py", "tools/kit.py")
CALL_S = 60.0  # a podman call's time-out (builds: BUILD_S)
BUILD_S = 600.0
LOG_TAIL = 64 * 1024  # the build log kept


class PodmanError(RuntimeError):
    """A podman command that failed or did not finish in time; the message names the command
    and what podman said."""


@dataclass(frozen=True)
class BuildResult:
    ok: bool  # the image was built and tagged
    log: str  # the build's output, its last LOG_TAIL bytes (the reason when not ok)


@dataclass(frozen=True)
class Container:
    name: str
    state: str  # podman's: created, running, exited, ...
    exit_code: int | None  # once exited (137: killed, e.g. past its memory)
    started_at: int | None  # Unix seconds
    finished_at: int | None
    labels: dict[str, str] = field(default_factory=dict)


def cache_dir() -> Path:
    path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "bummerl-image"
    path.mkdir(parents=True, exist_ok=True)
    return path


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """podman's environment: runc and no default ulimits unless CONTAINERS_CONF is set (as
    scripts/image)."""
    env = {**os.environ, **(extra or {})}
    if not env.get("CONTAINERS_CONF", ""):
        conf = cache_dir() / "containers.conf"
        text = '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n'
        if not conf.exists() or conf.read_text() != text:
            conf.write_text(text)
        env["CONTAINERS_CONF"] = str(conf)
    return env


def podman(*args: str, timeout: float = CALL_S, env: Mapping[str, str] | None = None,
           check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run `podman ARGS...`; PodmanError if it fails (with `check`) or times out. It runs in
    the cache folder: conmon writes a file `oom` into its working folder when a container is
    killed for its memory (podman 4.3 here), which must not land in the caller's."""
    command = ["podman", *args]
    shown = " ".join(command[:4]) + (" …" if len(command) > 4 else "")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=environment(env), errors="replace", cwd=cache_dir())
    except FileNotFoundError:
        raise PodmanError("podman is not installed (Debian: apt-get install podman runc)") \
            from None
    except subprocess.TimeoutExpired:
        raise PodmanError(f"`{shown}` did not finish within {timeout:g} s") from None
    if check and done.returncode != 0:
        raise PodmanError(f"`{shown}` failed (exit {done.returncode}): "
                          f"{done.stderr.strip()[-2000:] or done.stdout.strip()[-2000:]}")
    return done


def available() -> bool:
    """Whether podman is installed and answers here."""
    try:
        podman("info", "--format", "{{.Host.OCIRuntime.Name}}", timeout=30)
    except PodmanError:
        return False
    return True


def image_exists(ref: str) -> bool:
    return podman("image", "exists", ref, check=False).returncode == 0


def kit_hash(root: Path = ROOT) -> str:
    """12 hex digits of the sha256 of the kit's sources (KIT_SOURCES; the generated protobuf
    code and caches left out: the .proto files are in), its version and this module's base
    recipe."""
    digest = hashlib.sha256(BASE_RECIPE.encode())
    with open(root / "pyproject.toml", "rb") as f:  # the kit's version is the project's
        digest.update(str(tomllib.load(f)["project"]["version"]).encode())
    for part in KIT_SOURCES:
        path = root / part
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        for file in files:
            name = file.relative_to(root).as_posix()
            if (not file.is_file() or "__pycache__" in name or name.endswith(
                    (".pyc", "_pb2.py", "_pb2_grpc.py", "_pb2.pyi"))):
                continue
            digest.update(name.encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def base_of_bases() -> str:
    """The image the hosted base is built FROM (see the module's docstring)."""
    given = os.environ.get("BUMMERL_IMAGE_BASE", "")
    if given:
        return given
    for ref in (PUBLIC_BASE, LOCAL_BASE):
        if image_exists(ref):
            return ref
    raise PodmanError(f"no base image here: neither {PUBLIC_BASE} nor {LOCAL_BASE} is present "
                      "(`bash scripts/image base` builds the second; BUMMERL_IMAGE_BASE names "
                      "another)")


BASE_RECIPE = """FROM {base}
COPY {wheel} /tmp/{wheel}
RUN python -m venv /opt/kit \\
    && /opt/kit/bin/pip install --no-cache-dir --disable-pip-version-check /tmp/{wheel} \\
    && rm /tmp/{wheel} \\
    && groupadd --gid {uid} bot \\
    && useradd --uid {uid} --gid {uid} --no-create-home --home-dir /bot \\
       --shell /usr/sbin/nologin bot
ENV PATH=/opt/kit/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/bot \\
    HOME=/tmp
LABEL bummerl.hosted.base={hash}
"""


def build_kit_wheel(out: Path) -> Path:
    """The kit's wheel, built from this tree by tools/kit.py into `out` (a checkout: the
    site's image carries no tools/, so there the caller passes ensure_base a wheel)."""
    if not (ROOT / "tools" / "kit.py").is_file():
        raise PodmanError(f"no tools/kit.py under {ROOT} to build the kit's wheel with: pass "
                          "ensure_base the wheel (bash scripts/kit builds one)")
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "kit.py"), "--outdir", str(out)],
                          capture_output=True, text=True, timeout=BUILD_S, cwd=ROOT)
    wheels = sorted(out.glob("bummerl_kit-*.whl"))
    if done.returncode != 0 or not wheels:
        raise PodmanError(f"building the kit's wheel failed: {done.stderr.strip()[-2000:]}")
    return wheels[0]


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    """One process at a time past this point (on this machine)."""
    with open(cache_dir() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def ensure_base(wheel: Path | None = None) -> str:
    """The hosted base image's reference, built first when it is not present (from `wheel`,
    else from a wheel tools/kit.py builds)."""
    ref = f"{BASE_NAME}:{kit_hash()}"
    if image_exists(ref):
        return ref
    with _locked("hosted-base"):
        if image_exists(ref):  # another process built it meanwhile
            return ref
        base = base_of_bases()
        with tempfile.TemporaryDirectory(prefix="bummerl-hosted-base-") as tmp:
            context = Path(tmp)
            if wheel is None:
                wheel = build_kit_wheel(context / "dist")
            (context / wheel.name).write_bytes(Path(wheel).read_bytes())
            (context / "Containerfile").write_text(BASE_RECIPE.format(
                base=base, wheel=wheel.name, uid=UID, hash=ref.rsplit(":", 1)[1]))
            done = podman("build", "--quiet", "--pull=never", "--layers=false",
                          "--network", "host", "-t", ref, "-f",
                          str(context / "Containerfile"), str(context), timeout=BUILD_S,
                          check=False)
            if done.returncode != 0:
                raise PodmanError(f"building {ref} FROM {base} failed: "
                                  f"{(done.stdout + done.stderr).strip()[-3000:]}")
    return ref


VERSION_RECIPE = """FROM {base}
COPY bot/ /bot/
RUN python -I -S -m compileall -q /bot
{requirements}USER {uid}:{uid}
WORKDIR {folder}
ENV PYTHONPATH={path}
ENTRYPOINT ["bummerl-kit", "/bot/{module}:{cls}", "--server", "{server}"]
CMD []
LABEL {label}={tag}
"""
REQUIREMENTS = """COPY requirements.txt /opt/requirements.txt
RUN pip install --no-cache-dir --disable-pip-version-check --only-binary=:all: --retries 1 \\
    --timeout 30 -r /opt/requirements.txt
"""


def _extract(data: bytes, folder: Path) -> None:
    """The checked upload's files and folders under `folder` (files 0644, folders 0755)."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for info in tar.getmembers():
            name = "/".join(p for p in Path(info.name).parts if p != ".")
            if not name:
                continue
            target = folder / name
            if info.isdir():
                target.mkdir(mode=0o755, parents=True, exist_ok=True)
            elif info.isreg():
                target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
                source = tar.extractfile(info)
                assert source is not None
                target.write_bytes(source.read())
                target.chmod(0o644)


def build_version(tag: str, archive_bytes: bytes, entry: str, requirements: str | None = None,
                  *, base: str | None = None, timeout: float = BUILD_S) -> BuildResult:
    """Build the image `tag` of one hosted version: the upload `archive_bytes` (a tar.gz,
    checked again here: ArchiveError if it does not pass) with its entry point `entry`, and
    `requirements` (pinned, hosting.archive.check_requirements: ArchiveError if not) if
    given, FROM `base` (default: `ensure_base()`). A build that fails (a syntax error, a
    requirement pip cannot install, a time-out) is BuildResult(ok=False) with the log's lines
    that say why."""
    check_archive(archive_bytes, entry)
    module, cls = parse_entry(entry)
    pinned = check_requirements(requirements or "")
    base = base or ensure_base()
    with tempfile.TemporaryDirectory(prefix="bummerl-hosted-build-") as tmp:
        context = Path(tmp)
        (context / "bot").mkdir(mode=0o755)
        _extract(archive_bytes, context / "bot")
        if pinned:
            (context / "requirements.txt").write_text("\n".join(pinned) + "\n")
        # the entry's folder is the bot's working folder and first on its path, as when the
        # author runs `bummerl-kit mybot.py:MyBot` there
        folder = str(PurePosixPath("/bot", module).parent)
        recipe = VERSION_RECIPE.format(
            base=base, uid=UID, module=module, cls=cls, server=SERVER, label=VERSION_LABEL,
            tag=tag, requirements=REQUIREMENTS if pinned else "", folder=folder,
            path=folder if folder == "/bot" else f"{folder}:/bot")
        (context / "Containerfile").write_text(recipe)
        # the network only for pip (requirements), the build's last step: no Python starts
        # after it, so no `.pth` file of a wheel runs at build time (compileall runs before,
        # isolated and without site); the author's code does not run here
        network = "host" if pinned else "none"
        try:
            done = podman("build", "--pull=never", "--layers=false", "--network", network,
                          "--memory", "1024m", "-t", tag, "-f", str(context / "Containerfile"),
                          str(context), timeout=timeout, check=False)
        except PodmanError as e:
            return BuildResult(False, str(e))
    log = (done.stdout + done.stderr)[-LOG_TAIL:]
    return BuildResult(done.returncode == 0, log)


LOCAL_PREFIX = "localhost/"  # podman's name for an image built on this machine, in no registry


def pull(ref: str, timeout: float = BUILD_S) -> BuildResult:
    """Pull an author's image `ref` (it runs the kit protocol itself); BuildResult(ok=False)
    with podman's words when it cannot be pulled. A `localhost/` image (built with podman on
    this machine: no registry has it) is not pulled but used as it is, if it is here."""
    if ref.startswith(LOCAL_PREFIX):
        if image_exists(ref):
            return BuildResult(True, f"{ref}: an image of this machine, used as it is (not "
                                     "pulled)\n")
        return BuildResult(False, f"{ref} is not on this machine, and a localhost/ image is "
                                  "not pulled: build it here with podman, or push it to a "
                                  "registry and upload that reference\n")
    try:
        done = podman("pull", ref, timeout=timeout, check=False)
    except PodmanError as e:
        return BuildResult(False, str(e))
    return BuildResult(done.returncode == 0, (done.stdout + done.stderr)[-LOG_TAIL:])


def start(name: str, image: str, token: str, socket_dir: str | Path,
          limits: Limits | None = None, labels: Mapping[str, str] | None = None,
          kit_args: Sequence[str] = ()) -> str:
    """Start the container `name` of `image` in the sandbox (hosting.sandbox), its token in
    BUMMERL_TOKEN, `kit_args` appended to the kit's command; returns its id. A container of
    that name from an earlier start (exited, or still running) is removed first."""
    if not token:
        raise ValueError("a hosted bot needs its token")
    podman("rm", "--force", "--ignore", name)
    argv = podman_run_args(name, image, socket_dir, limits or Limits.from_env(),
                           labels or {}, kit_args)
    done = podman(*argv[1:], env={"BUMMERL_TOKEN": token})
    return done.stdout.strip()


def stop(name: str, grace_s: int = 5) -> None:
    """Stop the container `name` (SIGTERM, then SIGKILL after `grace_s`) and remove it; no
    error if it is not there."""
    podman("rm", "--force", "--ignore", "--time", str(grace_s), name, timeout=grace_s + CALL_S)


def containers(label: str) -> list[Container]:
    """Every container (running or not) carrying `label` (`key` or `key=value`)."""
    done = podman("ps", "--all", "--filter", f"label={label}", "--format", "json")
    found = []
    for row in json.loads(done.stdout or "[]"):
        exited = row.get("Exited") or row.get("State") == "exited"
        found.append(Container(
            name=(row.get("Names") or [""])[0], state=row.get("State", ""),
            exit_code=row.get("ExitCode") if exited else None,
            started_at=row.get("StartedAt") or None,
            finished_at=(row.get("ExitedAt") or None) if exited else None,
            labels=dict(row.get("Labels") or {})))
    return sorted(found, key=lambda c: c.name)


def logs(name: str, limit_bytes: int = LOG_TAIL) -> str:
    """The last `limit_bytes` of what the container `name` printed (stdout and stderr)."""
    command = ["podman", "logs", name]
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=CALL_S, env=environment(), cwd=cache_dir())
    except subprocess.TimeoutExpired:
        raise PodmanError(f"`podman logs {name}` did not finish within {CALL_S:g} s") from None
    if done.returncode != 0:
        raise PodmanError(f"`podman logs {name}` failed (exit {done.returncode}): "
                          f"{done.stdout[-2000:].decode(errors='replace').strip()}")
    return done.stdout[-limit_bytes:].decode(errors="replace")


def remove_image(tag: str) -> bool:
    """Remove the image `tag`; False if it was not there. PodmanError if a container uses it."""
    if not image_exists(tag):
        return False
    podman("rmi", tag)
    return True


def prune(keep: set[str] | frozenset[str] = frozenset(), prefix: str = VERSIONS,
          bases: bool = True) -> list[str]:
    """Remove every hosted version's image (labelled VERSION_LABEL) whose reference starts with
    `prefix` and is not named in `keep`, and (with `bases`) every hosted base image of another
    kit than this tree's, where no container uses it (a base some version's image is built on
    stays until that image goes); returns the references removed."""
    versions = podman("images", "--filter", f"label={VERSION_LABEL}", "--format",
                      "{{.Repository}}:{{.Tag}}").stdout.split()
    found = {ref for ref in versions if ref.startswith(prefix)}
    if bases:
        found |= set(podman("images", "--filter", f"reference={BASE_NAME}", "--format",
                            "{{.Repository}}:{{.Tag}}").stdout.split())
    current = f"{BASE_NAME}:{kit_hash()}"
    used = set(podman("ps", "--all", "--format", "{{.Image}}").stdout.split())
    removed = []
    for ref in sorted(found):
        if ref in keep or ref in used or ref == current or ref.endswith(":<none>"):
            continue
        if podman("rmi", ref, check=False).returncode == 0:
            removed.append(ref)
    return removed
