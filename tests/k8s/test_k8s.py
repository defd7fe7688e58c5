"""The Kubernetes manifests (k8s/) and the Dockerfile: every overlay renders with `kubectl
kustomize`, every object is valid against the Kubernetes schemas (kubernetes-validate; KEDA's
ScaledObjects against KEDA's own, from its CRDs: tools/validate-keda.mjs), and the wiring holds:
environment variables, Services, probes and ports, and the commands of every role."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from npmkit import npm_ci

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if p.is_dir())
CODE = ["engine", "cli", "services", "workers", "web", "db", "client", "events", "hosting"]
# Kubernetes versions to validate against: the oldest with every field used here (gRPC probes
# are GA in 1.27), and the newest kubernetes-validate knows.
VERSIONS = ["1.29"]
IMAGE = "bummerl"  # the image name in the base (the overlays retag it)
# Set in the manifests for other programs than bummerl: KEDA's redis trigger reads these from
# the worker containers (addressFromEnv / passwordFromEnv); prometheus-client reads the last.
READ_BY_OTHERS = {"REDIS_ADDRESS", "REDIS_PASSWORD", "PROMETHEUS_MULTIPROC_DIR"}
# Read by the code with no default, on purpose: unset means "off" (or comes from elsewhere).
UNSET_MEANS_OFF = {
    "BUMMERL_TLS_CERT": "clear text (TLS ends at the ingress in the manifests)",
    "BUMMERL_TLS_KEY": "clear text",
    "BUMMERL_TLS_CA": "client side: the system's trusted roots",
    "BUMMERL_OPERATOR_TOKEN_SHA256": "the operator token is given as BUMMERL_OPERATOR_TOKEN",
    "BUMMERL_BROKER_URL": "REDIS_URL is the broker",
    "BUMMERL_BROKER_DIR": "only for the embedded broker, not used with Redis",
    "BUMMERL_RDEEP_SAMPLES": "the strategy's own default",
    "BUMMERL_METRICS_PORT": "metrics not served (the manifests set it where there is a server)",
    "PROMETHEUS_MULTIPROC_DIR": "single-process metrics",
    "PYTHONPATH": "workers.procs only extends it for the processes it starts",
}
# Must be set on every bummerl container in a cluster: without them a process would fall back
# to a private SQLite file and the embedded broker, i.e. work alone and silently.
REQUIRED = {"DATABASE_URL", "REDIS_URL"}
pytestmark = pytest.mark.kubectl


def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:
        message = ("kubectl is not installed (Debian: apt-get install kubernetes-client; .ci/run "
                   "installs it): the Kubernetes manifests are not checked")
        if os.environ.get("BUMMERL_REQUIRE_SERVICES") == "1":
            pytest.fail(message + " (BUMMERL_REQUIRE_SERVICES=1: this test must run)")
        pytest.skip(message)
    return found


@cache
def render(overlay: str) -> tuple[dict[str, Any], ...]:
    done = subprocess.run([kubectl(), "kustomize", str(K8S / "overlays" / overlay)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rendering_warns_of_nothing(overlay):
    """No deprecated kustomize field (issue 44: `bases`, `patchesStrategicMerge` and
    `commonLabels` each printed a warning): the render's stderr is empty."""
    done = subprocess.run([kubectl(), "kustomize", str(K8S / "overlays" / overlay)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    for path in [K8S / "base", *(K8S / "overlays").iterdir()]:
        fields = yaml.safe_load((path / "kustomization.yaml").read_text())
        assert not {"bases", "patchesStrategicMerge", "commonLabels"} & set(fields), path


def of_kind(docs, kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def workloads(docs) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] in ("Deployment", "StatefulSet", "Job")]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    return workload["spec"]["template"]["spec"]


def bummerl_containers(docs, init: bool = True) -> list[tuple[dict, dict]]:
    """(workload, container) for every container running the bummerl image."""
    found = []
    for w in workloads(docs):
        spec = pod_spec(w)
        for c in spec["containers"] + (spec.get("initContainers", []) if init else []):
            if c["image"].split("/")[-1].split(":")[0] == IMAGE:
                found.append((w, c))
    return found


def secret_keys(docs, overlay: str, name: str) -> set[str]:
    secrets = [s for s in of_kind(docs, "Secret") if s["metadata"]["name"] == name]
    if secrets:
        return set(secrets[0].get("data", {})) | set(secrets[0].get("stringData", {}))
    example = K8S / "overlays" / overlay / "secret.example.env"
    assert example.exists(), f"{overlay}: Secret {name} is neither rendered nor documented"
    return {line.split("=", 1)[0] for line in example.read_text().splitlines()
            if line.strip() and not line.startswith("#")}


def env_of(docs, overlay: str, container: dict) -> dict[str, str | None]:
    """The environment of a container: its env, and the keys of its envFrom sources."""
    env: dict[str, str | None] = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            name = source["configMapRef"]["name"]
            maps = [m for m in of_kind(docs, "ConfigMap") if m["metadata"]["name"] == name]
            assert maps, f"ConfigMap {name} is not in the {overlay} overlay"
            env.update(maps[0]["data"])
        if "secretRef" in source:
            env.update(dict.fromkeys(secret_keys(docs, overlay, source["secretRef"]["name"])))
    env.update({e["name"]: e.get("value") for e in container.get("env", [])})
    return env


@cache
def code_env() -> tuple[set[str], set[str]]:
    """(every variable the code reads, those it reads with a default)."""
    read, defaulted = set(), set()
    getter = r'(?:environ\.get|getenv|env\.get|_env_float)\(\s*"([A-Z][A-Z0-9_]+)"'
    for folder in CODE:
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            read |= set(re.findall(getter, text))
            read |= set(re.findall(r'(?:environ|env)\[\s*"([A-Z][A-Z0-9_]+)"\s*\]', text))
            defaulted |= set(re.findall(getter + r'\s*,', text))
            defaulted |= set(re.findall(getter + r'\s*\)\s*or\b', text))
    return read, defaulted


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_is_valid(overlay):
    import kubernetes_validate

    docs = render(overlay)
    assert {"Deployment", "Service", "ConfigMap", "Job", "PodDisruptionBudget"} <= \
        {d["kind"] for d in docs}
    for version in [*VERSIONS, kubernetes_validate.latest_version()]:
        for doc in docs:
            if doc["apiVersion"].startswith("keda.sh/"):
                continue  # no schema in kubernetes-validate: test_keda_scaled_objects
            kubernetes_validate.validate(doc, version, strict=True)


def validate_keda(objects: list[dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    """tools/validate-keda.mjs on `objects` (KEDA's schemas, @kubernetes-models/keda)."""
    npm_ci(ROOT / "tools")
    return subprocess.run(["node", str(ROOT / "tools" / "validate-keda.mjs")],
                          input=json.dumps(objects), capture_output=True, text=True,
                          timeout=120, cwd=ROOT / "tools")


@pytest.mark.node
def test_keda_objects_are_valid_against_kedas_schemas():
    objects = [doc for overlay in OVERLAYS for doc in render(overlay)
               if doc["apiVersion"].startswith("keda.sh/")]
    assert objects, "no KEDA object in the overlays"
    done = validate_keda(objects)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok ScaledObject/") == len(objects), done.stdout
    # the check can fail: a count that is not a number, a trigger without its type
    wrong = json.loads(json.dumps(objects[0]))
    wrong["spec"]["minReplicaCount"] = "one"
    del wrong["spec"]["triggers"][0]["type"]
    done = validate_keda([wrong])
    assert done.returncode == 1 and "minReplicaCount must be integer" in done.stdout, \
        done.stdout + done.stderr


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_keda_scaled_objects(overlay):
    docs = render(overlay)
    deployments = {d["metadata"]["name"]: d for d in of_kind(docs, "Deployment")}
    scaled = of_kind(docs, "ScaledObject")
    assert {s["spec"]["scaleTargetRef"]["name"] for s in scaled} == \
        {"bummerl-worker-people", "bummerl-worker-moves", "bummerl-worker-batch"}
    for s in scaled:
        assert s["apiVersion"] == "keda.sh/v1alpha1"
        assert set(s["spec"]) <= {"scaleTargetRef", "minReplicaCount", "maxReplicaCount",
                                  "pollingInterval", "cooldownPeriod", "triggers"}
        target = deployments[s["spec"]["scaleTargetRef"]["name"]]
        assert "replicas" not in target["spec"], "KEDA sets the replicas"
        assert 0 <= s["spec"]["minReplicaCount"] <= s["spec"]["maxReplicaCount"]
        [container] = pod_spec(target)["containers"]
        queue = container["args"][container["args"].index("-Q") + 1]
        [trigger] = s["spec"]["triggers"]
        meta = trigger["metadata"]
        assert trigger["type"] == "redis" and meta["listName"] == queue
        assert int(meta["listLength"]) > 0 and meta["databaseIndex"].isdigit()
        env = env_of(docs, overlay, container)
        for key in ("addressFromEnv", "passwordFromEnv"):
            assert meta[key] in env, f"{meta[key]} is not in the environment of {queue} workers"
        redis_url = env.get("REDIS_URL")
        if redis_url:  # dev: the list is in the database the workers use
            assert redis_url.rsplit("/", 1)[1] == meta["databaseIndex"]
    # latency-bound moves and people's answers never scale to zero
    for name in ("moves", "people"):
        latency = next(s for s in scaled if s["spec"]["scaleTargetRef"]["name"].endswith(name))
        assert latency["spec"]["minReplicaCount"] >= 1


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_selects_pods_on_a_real_port(overlay):
    docs = render(overlay)
    for service in of_kind(docs, "Service"):
        selector = service["spec"]["selector"]
        pods = [w for w in workloads(docs) if selector.items()
                <= w["spec"]["template"]["metadata"]["labels"].items()]
        assert pods, f"Service {service['metadata']['name']} selects no pods"
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            exposed = [(p.get("name"), p["containerPort"]) for w in pods
                       for c in pod_spec(w)["containers"] for p in c.get("ports", [])]
            assert any(target in pair for pair in exposed), \
                f"Service {service['metadata']['name']}: no container port {target}"
    for budget in of_kind(docs, "PodDisruptionBudget"):
        labels = budget["spec"]["selector"]["matchLabels"]
        assert any(labels.items() <= w["spec"]["template"]["metadata"]["labels"].items()
                   for w in of_kind(docs, "Deployment")), budget["metadata"]["name"]


def listens_on(args: list[str], env: dict[str, str | None]) -> dict[str, int]:
    """The ports a bummerl container's process really opens, from its parsed command line."""
    from cli.main import build_parser

    parsed = build_parser().parse_args(args)
    ports = {}
    if parsed.command == "serve":
        host, port = parsed.address.rsplit(":", 1)
        assert host == "0.0.0.0", "the service must listen on every interface in a pod"
        ports["grpc"] = int(port)
    if parsed.command in ("web", "sockets"):
        assert parsed.host == "0.0.0.0", f"{parsed.command} must listen on every interface in a pod"
        ports["http"] = parsed.port
    if env.get("BUMMERL_METRICS_PORT") and parsed.command in ("serve", "web", "worker"):
        ports["metrics"] = int(env["BUMMERL_METRICS_PORT"] or 0)
    return ports


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_probes_ports_and_scrapes_point_at_what_the_process_opens(overlay):
    from services.api.health import LIVENESS

    docs = render(overlay)
    for w, c in bummerl_containers(docs, init=False):
        if "args" not in c:
            continue  # the migration Job: no port
        opened = listens_on(c["args"], env_of(docs, overlay, c))
        declared = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        assert declared == opened, f"{w['metadata']['name']}: ports {declared} vs {opened}"
        for kind in ("readinessProbe", "livenessProbe", "startupProbe"):
            probe = c.get(kind)
            if probe is None:
                continue
            [(how, spec)] = [(k, v) for k, v in probe.items()
                             if k in ("grpc", "httpGet", "tcpSocket", "exec")]
            if how == "exec":  # the worker's liveness check: a real command, its own name
                from cli.main import build_parser

                command = spec["command"]
                assert command[0] == "bummerl", command
                checked = build_parser().parse_args(command[1:])
                assert checked.check and checked.name == c["args"][c["args"].index("-n") + 1]
                continue
            port = spec["port"]
            number = declared.get(port, port)
            assert number in opened.values(), f"{w['metadata']['name']} {kind}: port {port}"
            if how == "grpc":
                assert number == opened["grpc"]
                assert spec.get("service", "") in ("", LIVENESS)
            if how == "httpGet":
                health = "/sockets/health" if c["args"][0] == "sockets" else "/healthz"
                assert number == opened["http"] and spec["path"] == health
        annotations = w["spec"]["template"]["metadata"].get("annotations", {})
        if "metrics" in opened:
            assert annotations.get("prometheus.io/scrape") == "true"
            assert int(annotations["prometheus.io/port"]) == opened["metrics"]
            assert annotations["prometheus.io/path"] == "/metrics"
        else:
            assert "prometheus.io/scrape" not in annotations
    serve = next(d for d in of_kind(docs, "Deployment") if d["metadata"]["name"] == "bummerl-serve")
    probes = pod_spec(serve)["containers"][0]
    assert "grpc" in probes["readinessProbe"] and "grpc" in probes["livenessProbe"]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_role_runs_a_real_command(overlay):
    from cli.main import build_parser
    from db.migrate import build_parser as migrate_parser

    docs = render(overlay)
    roles = set()
    for _w, c in bummerl_containers(docs):
        if "command" in c:
            assert c["command"][:3] == ["python", "-m", "db.migrate"], c["command"]
            migrate_parser().parse_args(c["command"][3:])
            roles.add("migrate-wait" if "--wait" in c["command"] else "migrate")
            continue
        parsed = build_parser().parse_args(c["args"])  # the image's ENTRYPOINT is `bummerl`
        assert parsed.func is not None
        if parsed.command == "worker":
            assert parsed.queues in ("people", "moves", "batch", "hosting")
            roles.add(f"worker {parsed.queues}")
        else:
            roles.add(parsed.command)
    assert roles == {"serve", "worker people", "worker moves", "worker batch", "worker hosting",
                     "beat", "web", "sockets", "migrate",
                     "migrate-wait"}
    # every long-running role waits for the migration Job
    for d in of_kind(docs, "Deployment"):
        init = pod_spec(d).get("initContainers", [])
        assert [c["command"][:4] for c in init] == [["python", "-m", "db.migrate", "--wait"]]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_environment_wiring(overlay):
    read, defaulted = code_env()
    assert {"DATABASE_URL", "REDIS_URL", "BUMMERL_OPERATOR_TOKEN"} <= read  # the scan works
    docs = render(overlay)
    set_anywhere: set[str] = set()
    for w, c in bummerl_containers(docs):
        env = env_of(docs, overlay, c)
        set_anywhere |= set(env)
        missing = REQUIRED - set(env) if "command" not in c or "--wait" not in c["command"] \
            else {"DATABASE_URL"} - set(env)
        assert not missing, f"{w['metadata']['name']}/{c['name']}: {missing} not set"
        if c.get("args", [""])[0] == "serve":
            assert "BUMMERL_OPERATOR_TOKEN" in env
        # the service takes house moves only from who has the house token (without it every
        # house bot forfeits on time)
        if c.get("args", [""])[0] == "serve" or c.get("args", [])[:3] in (
                ["worker", "-Q", "moves"], ["worker", "-Q", "people"]):
            assert "BUMMERL_HOUSE_TOKEN" in env, f"{w['metadata']['name']}: no house token"
    unknown = set_anywhere - read - READ_BY_OTHERS
    assert not unknown, f"set in the manifests but read by nothing (a typo?): {unknown}"
    unset = read - set_anywhere - defaulted - set(UNSET_MEANS_OFF)
    assert not unset, f"read by the code, neither set in {overlay} nor defaulted: {unset}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pods_run_unprivileged_with_limits(overlay):
    docs = render(overlay)
    for w in workloads(docs):
        spec = pod_spec(w)
        name = w["metadata"]["name"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        for c in spec["containers"] + spec.get("initContainers", []):
            security = c["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["allowPrivilegeEscalation"] is False, name
            for key in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(c["resources"][key]), f"{name}: {key}"
        for c in spec["containers"]:
            if c["image"].split("/")[-1].split(":")[0] == IMAGE:  # writable: /tmp, /app/var
                mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
                assert {"/tmp", "/app/var"} <= mounts, name
    deployments = {d["metadata"]["name"]: d for d in of_kind(docs, "Deployment")}
    assert deployments["bummerl-beat"]["spec"]["replicas"] == 1
    assert deployments["bummerl-beat"]["spec"]["strategy"]["type"] == "Recreate"
    assert deployments["bummerl-serve"]["spec"]["replicas"] >= 2
    if overlay == "dev":
        assert {s["metadata"]["name"] for s in of_kind(docs, "StatefulSet")} == \
            {"bummerl-postgres", "bummerl-redis"}
        for s in of_kind(docs, "StatefulSet"):
            assert s["spec"]["volumeClaimTemplates"], s["metadata"]["name"]
    else:
        assert not of_kind(docs, "StatefulSet") and not of_kind(docs, "Secret")


def dockerfile() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1].strip())
            for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_the_dockerfile_builds_one_image_for_every_role():
    from cli.main import build_parser

    lines = dockerfile()
    stages = [args for op, args in lines if op == "FROM"]
    # every stage on the one base, a build argument: python:3.11-slim unless told otherwise
    # (scripts/image builds on a Debian base where that image cannot be pulled)
    assert ("ARG", "BASE=python:3.11-slim") in lines[:lines.index(("FROM", stages[0]))]
    # the build stage starts from the dependencies: its own `deps` stage (on the base) unless
    # scripts/image names the kept image of it (DEPS)
    assert ("ARG", "DEPS=deps") in lines[:lines.index(("FROM", stages[0]))]
    assert "${BASE} AS deps" in stages and "${DEPS} AS build" in stages
    assert len(stages) >= 2 and all(s.startswith(("${BASE} ", "${DEPS} ")) for s in stages)
    final = lines[max(i for i, (op, _) in enumerate(lines) if op == "FROM"):]
    user = [args for op, args in final if op == "USER"]
    assert user and user[-1].split(":")[0] not in ("root", "0")
    entry = yaml.safe_load([args for op, args in final if op == "ENTRYPOINT"][-1])
    cmd = yaml.safe_load([args for op, args in final if op == "CMD"][-1])
    assert entry == ["bummerl"]
    assert build_parser().parse_args(cmd).command == "serve"
    # the protobuf code is generated in the image, and every package of the project is in it
    runs = " ".join(args for op, args in lines if op == "RUN")
    assert "proto/build.py" in runs
    copied = {shlex.split(args)[0] for op, args in lines if op == "COPY" and "--from" not in args}
    for package in [*CODE, "proto"]:
        assert package in copied, f"the Dockerfile does not copy {package}/"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert not set(ignored) & {*CODE, "proto", "pyproject.toml", "README.md"}
    assert ".venv" in ignored and ".git" in ignored and "**/*_pb2.py" in ignored
