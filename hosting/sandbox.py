"""The sandbox a hosted bot runs in: its limits (`Limits`, defaults overridden by
`BUMMERL_HOSTED_*`) and the `podman run` command line that applies them (`podman_run_args`).

The container has no network (`--network none`): its one way out is the service's unix socket,
whose folder is mounted read-only at /run/bummerl (the kit connects to
`unix:/run/bummerl/service.sock`). It runs as uid 10001 with no capabilities, no new privileges,
podman's default seccomp profile, a read-only root and a small tmpfs on /tmp; its memory
(without swap), processes, CPU and log size are capped. Its only secret is its own token, given
as the environment variable BUMMERL_TOKEN from podman's environment (`--env BUMMERL_TOKEN`
without a value), so the token never appears on a command line.

What is enforced on the development machine (podman 4.3 with runc, cgroups v1 with the
cgroupfs manager, root; tests/hosting/test_sandbox_podman.py shows each): the memory limit
(a process past it is killed: exit 137; podman's OOMKilled flag reads false there, so the
exit code is the evidence), the process limit (fork fails with EAGAIN at `pids`), the CPU
quota (a busy loop gets `cpu` of a core), the read-only root, the /tmp tmpfs's size, no
network, the log's size (conmon cuts the k8s-file log when it reaches `log`, keeping what
follows). Where cgroups are not delegated (rootless podman on cgroups v1) podman drops the
memory, pids and CPU limits with a warning: run hosted bots under a root podman or cgroups v2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

UID = 10001  # the user the bot runs as (the base image's `bot`)
SOCKET_MOUNT = "/run/bummerl"  # where the service's socket folder is mounted
SOCKET_NAME = "service.sock"
SERVER = f"unix:{SOCKET_MOUNT}/{SOCKET_NAME}"  # the kit's --server inside the container
NPROC = 32768  # RLIMIT_NPROC (per uid, host-wide; see podman_run_args)


@dataclass(frozen=True)
class Limits:
    """What one hosted bot's container may use."""

    cpus: float = 0.5  # of one core (CFS quota)
    memory_mb: int = 256  # MiB of memory, and no swap beyond it
    pids: int = 64  # processes and threads
    tmp_mb: int = 16  # MiB of the tmpfs on /tmp
    log_mb: int = 1  # MiB of log kept (older lines are cut)
    nofile: int = 1024  # open files

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, each replaced by its `BUMMERL_HOSTED_*` variable where set:
        _CPU, _MEMORY_MB, _PIDS, _TMP_MB, _LOG_MB, _NOFILE. A value that is not a positive
        number is a ValueError naming the variable."""
        environ = os.environ if environ is None else environ
        values: dict[str, float | int] = {}
        for field, kind in (("cpus", float), ("memory_mb", int), ("pids", int),
                            ("tmp_mb", int), ("log_mb", int), ("nofile", int)):
            name = "BUMMERL_HOSTED_" + ("CPU" if field == "cpus" else field.upper())
            raw = environ.get(name, "").strip()
            if not raw:
                continue
            try:
                value = kind(raw)
            except ValueError:
                value = 0
            if value <= 0:
                raise ValueError(f"{name} must be a positive {kind.__name__}, not {raw!r}")
            values[field] = value
        return cls(**values)  # type: ignore[arg-type]


def podman_run_args(name: str, image: str, socket_dir: str | Path, limits: Limits,
                    labels: Mapping[str, str], extra_kit_args: Sequence[str] = ()) -> list[str]:
    """The command that starts the hosted bot `name` from `image` in the background: `podman
    run --detach ...` with every flag of the sandbox, the labels, and `extra_kit_args` after the
    image (appended to the kit's command: `--matches 1`, `--version V`). The token must be in
    podman's environment as BUMMERL_TOKEN (hosting.podman.start puts it there)."""
    args = ["podman", "run", "--detach", "--name", name, "--pull", "never",
            "--network", "none",
            "--volume", f"{Path(socket_dir).resolve()}:{SOCKET_MOUNT}:ro",
            "--user", f"{UID}:{UID}",
            "--read-only", "--read-only-tmpfs=false",
            "--tmpfs", f"/tmp:rw,size={limits.tmp_mb}m,mode=1777,nosuid,nodev,noexec",
            "--shm-size", "1m",
            "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges",
            "--pids-limit", str(limits.pids),
            "--memory", f"{limits.memory_mb}m", "--memory-swap", f"{limits.memory_mb}m",
            "--cpus", f"{limits.cpus:g}",
            # (given any --ulimit, podman adds its own nofile and nproc, above what this kind of
            # machine allows a container: runc fails to start it. So all three are given.
            # nproc counts every process of uid 10001 on the host: the pids limit is the one
            # that bounds a container; this only has to be low enough to be allowed.)
            "--ulimit", f"nofile={limits.nofile}:{limits.nofile}",
            "--ulimit", f"nproc={NPROC}:{NPROC}",
            "--ulimit", "core=0:0",
            "--log-driver", "k8s-file", "--log-opt", f"max-size={limits.log_mb}m",
            "--env", "BUMMERL_TOKEN", "--env", f"BUMMERL_SERVER={SERVER}"]
    for key, value in sorted(labels.items()):
        args += ["--label", f"{key}={value}"]
    return [*args, image, *extra_kit_args]
