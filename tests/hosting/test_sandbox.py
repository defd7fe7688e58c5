"""hosting.sandbox: the limits (defaults, BUMMERL_HOSTED_* overrides, bad values named) and the
`podman run` command line that carries every flag of the sandbox (no podman needed: the flags'
effect is tests/hosting/test_sandbox_podman.py's)."""

from __future__ import annotations

import pytest

from hosting.sandbox import SERVER, Limits, podman_run_args


def test_the_defaults_and_their_overrides():
    assert Limits() == Limits.from_env({}) == Limits(0.5, 256, 64, 16, 1, 1024)
    env = {"BUMMERL_HOSTED_CPU": "1.5", "BUMMERL_HOSTED_MEMORY_MB": "512",
           "BUMMERL_HOSTED_PIDS": "32", "BUMMERL_HOSTED_TMP_MB": "8",
           "BUMMERL_HOSTED_LOG_MB": "2", "BUMMERL_HOSTED_NOFILE": " 256 "}
    assert Limits.from_env(env) == Limits(1.5, 512, 32, 8, 2, 256)


@pytest.mark.parametrize("name, value", [("BUMMERL_HOSTED_MEMORY_MB", "lots"),
                                         ("BUMMERL_HOSTED_PIDS", "0"),
                                         ("BUMMERL_HOSTED_CPU", "-1")])
def test_a_bad_limit_is_named(name, value):
    with pytest.raises(ValueError, match=f"{name} must be a positive"):
        Limits.from_env({name: value})


def flags(argv: list[str]) -> list[tuple[str, str]]:
    """The (flag, value) pairs of a `podman run` command line."""
    pairs = []
    for i, arg in enumerate(argv):
        if arg.startswith("--") and "=" not in arg and i + 1 < len(argv):
            pairs.append((arg, argv[i + 1]))
        elif arg.startswith("--"):
            pairs.append(tuple(arg.split("=", 1)))  # type: ignore[arg-type]
    return pairs


def test_the_run_command_carries_the_whole_sandbox(tmp_path):
    argv = podman_run_args("bot-7-1", "localhost/bummerl-hosted/bot-7:2.0", tmp_path,
                           Limits(), {"bummerl.hosted": "site", "bummerl.version": "7"},
                           ["--matches", "1"])
    assert argv[:3] == ["podman", "run", "--detach"]
    assert argv[-3:] == ["localhost/bummerl-hosted/bot-7:2.0", "--matches", "1"]
    given = flags(argv)
    for pair in [("--network", "none"), ("--volume", f"{tmp_path}:/run/bummerl:ro"),
                 ("--user", "10001:10001"), ("--read-only-tmpfs", "false"),
                 ("--tmpfs", "/tmp:rw,size=16m,mode=1777,nosuid,nodev,noexec"),
                 ("--cap-drop", "ALL"), ("--security-opt", "no-new-privileges"),
                 ("--pids-limit", "64"), ("--memory", "256m"), ("--memory-swap", "256m"),
                 ("--cpus", "0.5"), ("--ulimit", "nofile=1024:1024"),
                 ("--log-driver", "k8s-file"), ("--log-opt", "max-size=1m"),
                 ("--env", "BUMMERL_TOKEN"), ("--label", "bummerl.hosted=site"),
                 ("--name", "bot-7-1")]:
        assert pair in given, pair
    assert "--read-only" in argv
    # the default seccomp profile: nothing turns it (or anything else) off
    assert not [a for a in argv if "unconfined" in a or a in ("--privileged", "--cap-add")]
    # the token is never on the command line: podman passes its own BUMMERL_TOKEN on
    assert not [a for a in argv if a.startswith("BUMMERL_TOKEN=")]
    assert SERVER == "unix:/run/bummerl/service.sock"


def test_no_python_starts_after_the_requirements_are_installed():
    """A wheel from the index may carry a `.pth` file, which any later Python start runs: the
    build with requirements has the network, so the install is its last step (the compile runs
    before it, isolated and without site)."""
    from hosting import podman

    recipe = podman.VERSION_RECIPE.format(
        base="b", uid=10001, module="bot.py", cls="Bot", server="unix:/s", label="l", tag="t",
        requirements=podman.REQUIREMENTS, folder="/bot", path="/bot")
    runs = [line for line in recipe.splitlines() if line.startswith("RUN ")]
    assert runs[-1].startswith("RUN pip install") and "--only-binary=:all:" in runs[-1]
    assert runs[:-1] == ["RUN python -I -S -m compileall -q /bot"]
