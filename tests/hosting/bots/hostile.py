"""A hostile hosted bot (tests/hosting/test_sandbox_podman.py): one module, one image, many
attacks. What it tries is the `--version` the kit is started with (`--version fork`), read from
its own command line; it reports what happened on stdout (the container's log) as lines
`RESULT key value`, then exits. `--version good` is a plain random bot that plays its match;
`--version slow` spins the CPU at its first turn, for ever.

- net:PORT,PORT: connect to 127.0.0.1 on each port, to an outside address, and resolve a name
- secrets:WORD,...: its environment, /proc/1/environ, the files it can read that hold its own
  token or one of the words, and its uid, capabilities, no-new-privileges and seccomp mode
- fork: fork until it cannot; alloc: allocate until it dies; write: 1 GB to each place
- print: 100 MB of lines; spin: a busy loop for 2 s (the CPU it got, and its CPU quota)
"""

from __future__ import annotations

import os
import random
import socket
import sys
import time

from bummerl_kit import Bot, engine


def report(key: str, value: object) -> None:
    print(f"RESULT {key} {value}", flush=True)


def attack() -> str:
    return sys.argv[sys.argv.index("--version") + 1] if "--version" in sys.argv else "good"


def net(ports: list[int]) -> None:
    targets = [("127.0.0.1", port) for port in ports] + [("1.1.1.1", 443), ("10.0.2.2", 80)]
    for host, port in targets:
        try:
            with socket.create_connection((host, port), timeout=3):
                report(f"connect:{host}:{port}", "connected")
        except OSError as e:
            report(f"connect:{host}:{port}", f"refused:{type(e).__name__}:{e.errno}")
    try:
        socket.getaddrinfo("example.com", 443)
        report("dns", "resolved")
    except OSError as e:
        report("dns", f"refused:{type(e).__name__}")
    report("interfaces", ",".join(sorted(name for _, name in socket.if_nameindex())))


def secrets(words: list[str]) -> None:
    report("env", ",".join(sorted(os.environ)))
    with open("/proc/1/environ", "rb") as f:
        report("pid1env", ",".join(sorted(
            item.split(b"=", 1)[0].decode() for item in f.read().split(b"\0") if item)))
    own = os.environ.get("BUMMERL_TOKEN", "")
    found = []
    for top in ("/bot", "/etc", "/opt", "/tmp", "/run", "/var", "/home", "/root", "/usr/local"):
        for folder, _, names in os.walk(top):
            for name in names:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        data = f.read(1_000_000)
                except OSError:
                    continue
                for word in [*words, own]:
                    if word and word.encode() in data:
                        found.append(f"{path}:{'own' if word == own else word}")
    report("files", ",".join(sorted(found)) or "none")
    report("own_token", "present" if own else "absent")
    with open("/proc/self/status") as f:  # who it runs as, and what it may do
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Uid", "CapEff", "CapBnd", "NoNewPrivs", "Seccomp"):
                report(key, "/".join(value.split()))


def fork() -> None:
    children = 0
    try:
        while True:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
    except OSError as e:
        report("fork", f"stopped:{children}:{e.errno}")


def alloc() -> None:
    held = []
    while True:
        held.append(bytearray(16 << 20))
        report("allocated_mb", 16 * len(held))


def write() -> None:
    block = b"\0" * (1 << 20)
    for path in ("/bot/big", "/big", "/tmp/big", "/dev/shm/big", "/run/bummerl/big"):
        written = 0
        try:
            with open(path, "wb") as f:
                for _ in range(1024):
                    f.write(block)
                    written += 1
                f.flush()
            report(f"write:{path}", f"wrote:{written}")
        except OSError as e:
            report(f"write:{path}", f"stopped:{written}:{e.errno}")


def spam() -> None:
    line = "x" * 99 + "\n"
    out = sys.stdout
    for _ in range(1_000_000):  # 100 MB
        out.write(line)
    out.flush()
    report("printed_mb", 100)


def spin() -> None:
    wall, cpu = time.monotonic(), time.process_time()
    while time.monotonic() - wall < 2:
        pass
    report("cpu_share", f"{(time.process_time() - cpu) / (time.monotonic() - wall):.2f}")
    for path in ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us",
                 "/sys/fs/cgroup/cpu.max"):  # cgroups v1, v2
        if os.path.exists(path):
            with open(path) as f:
                report(f"cgroup:{os.path.basename(path)}", "/".join(f.read().split()))


def run(what: str) -> None:
    kind, _, arg = what.partition(":")
    if kind in ("good", "slow"):
        return
    if kind == "net":
        net([int(p) for p in arg.split(",") if p])
    elif kind == "secrets":
        secrets([w for w in arg.split(",") if w])
    else:
        {"fork": fork, "alloc": alloc, "write": write, "print": spam, "spin": spin}[kind]()
    report("done", kind)
    sys.exit(3)


run(attack())


class Hostile(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(46)

    def act(self, observation: engine.Observation) -> engine.Action:
        while attack() == "slow":  # spins at its first turn, for ever
            pass
        return self.rng.choice(observation.legal_actions)
