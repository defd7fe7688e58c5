"""Hosted bots on Kubernetes: the objects one live version runs as (a Deployment of one pod and
the Secret holding its token), the NetworkPolicy that seals the hosted namespace, and
`reconcile`, which makes a namespace's hosted Deployments what the database says is live.

The hosted namespace (`bummerl-hosted` in k8s/base/hosted-bots.yaml) holds nothing but hosted
bots and their tokens. Each pod runs as uid 10001 with a read-only root, no capabilities, no
privilege escalation, the runtime's default seccomp profile, no service-account token, no other
Service's environment variables, its own token alone (env BUMMERL_TOKEN, from its Secret), a
memory-backed /tmp, and CPU, memory and ephemeral-storage limits (requests = limits: the pod is
`Guaranteed` and never uses more than it was given). Two limits are the kubelet's, not the
pod's: the process limit (the kubelet's `podPidsLimit`, e.g. 64) and the log's size (its
`containerLogMaxSize`); a pod that writes its log faster than the kubelet rotates it is evicted
at its ephemeral-storage limit. The NetworkPolicy lets a hosted pod reach only the service's
pods on 50051/TCP and the cluster's DNS; it holds only where the cluster's network plugin
enforces NetworkPolicy (docs/hosted-kubernetes.md).

Crashes are the kubelet's to restart (CrashLoopBackOff: 10 s doubling to 5 min); `reconcile`
only creates, replaces and deletes, and `observe` reads each pod's restarts, last exit and
output, for the hosted version's row. Everything here takes the official client's API objects
(`kubernetes.client.AppsV1Api`, `CoreV1Api`, `NetworkingV1Api`) as arguments, so the tests give
it an in-memory stand-in (tests/k8s/test_hosted_kube.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from hosting.archive import IMAGE

HOSTED_NAMESPACE = "bummerl-hosted"  # k8s/base/hosted-bots.yaml
SITE_NAMESPACE = "bummerl"  # where the service runs (k8s/base/kustomization.yaml)
SERVICE_ADDRESS = "bummerl.bummerl.svc:50051"  # the Service `bummerl` (k8s/base/serve.yaml)
SERVICE_PORT = 50051
POLICY_NAME = "bummerl-hosted-bots"
UID = 10001
# The labels of every hosted Deployment and pod; the version's id tells them apart.
PART_OF = {"app.kubernetes.io/name": "bummerl", "app.kubernetes.io/part-of": "bummerl"}
COMPONENT = "hosted-bot"
VERSION_LABEL = "bummerl.hosted/version-id"
BOT_LABEL = "bummerl.hosted/bot-id"
SPEC_HASH = "bummerl.hosted/spec-hash"  # annotation: what the Deployment was made from
SELECTOR = f"app.kubernetes.io/part-of=bummerl,{VERSION_LABEL}"
# The service's pods (k8s/base/serve.yaml, with the base's labels).
SERVE_LABELS = {**PART_OF, "app.kubernetes.io/component": "serve"}
TOKEN_KEY = "token"  # the Secret's key holding the bot's token
_ENTRY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*:[A-Za-z_][A-Za-z0-9_]*")
_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_ADDRESS = re.compile(r"([a-z0-9-]+)\.([a-z0-9-]+)\.svc(\.[a-z0-9.-]+)?:([0-9]{1,5})")


@dataclass(frozen=True)
class HostedSpec:
    """One live hosted version, as it runs on the cluster.

    `entry` is the author's `mod.py:Class` (an upload of files: the image's entrypoint runs
    `bummerl-kit /bot/ENTRY`, given the cluster's server and the version); None for an author's
    own image, which runs its own command with the
    service's address in BUMMERL_SERVER. Limits: `cpu` cores, `memory_mib` (the memory-backed
    /tmp counts in it), `tmpfs_mib` (/tmp), `disk_mib` (ephemeral storage: its logs on the
    node); `pids` and `log_mib` are the kubelet's settings on a cluster (podPidsLimit,
    containerLogMaxSize), kept here so the podman and Kubernetes sandboxes read one spec."""

    bot: str
    bot_id: int
    version_id: int
    version: str
    image: str
    entry: str | None = None
    cpu: float = 0.5
    memory_mib: int = 256
    pids: int = 64
    tmpfs_mib: int = 16
    log_mib: int = 1
    disk_mib: int = 64
    people: str | None = None  # "casual" or "rated": it plays people (the kit's --people)

    def __post_init__(self) -> None:
        wrong = []
        if self.bot_id < 1 or self.version_id < 1:
            wrong.append(f"ids must be positive (bot {self.bot_id}, version {self.version_id})")
        if not self.image or any(c.isspace() for c in self.image) or \
                self.image.startswith("-"):
            wrong.append(f"image {self.image!r} is not an image reference")
        if self.entry is not None and not _ENTRY.fullmatch(self.entry):
            wrong.append(f"entry {self.entry!r} is not FILE.py:Class or module:Class")
        if not 0 < self.cpu <= 16:
            wrong.append(f"cpu {self.cpu} is not in (0, 16] cores")
        if not 0 < self.tmpfs_mib < self.memory_mib:
            wrong.append(f"/tmp of {self.tmpfs_mib} MiB does not fit in {self.memory_mib} MiB")
        if self.pids < 1 or self.log_mib < 1 or self.disk_mib < self.log_mib:
            wrong.append(f"pids {self.pids}, log {self.log_mib} MiB, disk {self.disk_mib} MiB: "
                         "each at least 1, the disk at least the log")
        if wrong:
            raise ValueError(f"hosted version {self.version_id} of {self.bot!r}: "
                             + "; ".join(wrong))

    @property
    def name(self) -> str:
        """The Deployment's name: `hosted-<bot>-<version id>` (the bot's name cut to 30
        characters of [a-z0-9-])."""
        slug = re.sub(r"[^a-z0-9]+", "-", self.bot.lower()).strip("-")[:30].strip("-")
        return f"hosted-{slug or 'bot'}-{self.version_id}"

    @property
    def secret_name(self) -> str:
        """The Secret holding the version's token."""
        return f"{self.name}-token"

    def labels(self) -> dict[str, str]:
        return {**PART_OF, "app.kubernetes.io/component": COMPONENT,
                VERSION_LABEL: str(self.version_id), BOT_LABEL: str(self.bot_id)}


def _cpu(cores: float) -> str:
    return f"{round(cores * 1000)}m"


def _serialize(obj: Any) -> Any:
    return k8s.ApiClient().sanitize_for_serialization(obj)


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(_serialize(obj), sort_keys=True).encode()).hexdigest()[:16]


def deployment(spec: HostedSpec, namespace: str, service_address: str) -> k8s.V1Deployment:
    """The Deployment of `spec`: one pod (`Recreate`: never two of one version at once)
    running its image against the service at `service_address` (a cluster DNS name and port,
    e.g. `bummerl.bummerl.svc:50051`), sandboxed as the module's docstring says. The process
    limit is the kubelet's podPidsLimit: no field of a pod sets it."""
    labels = spec.labels()
    memory = f"{spec.memory_mib}Mi"
    resources = {"cpu": _cpu(spec.cpu), "memory": memory, "ephemeral-storage": f"{spec.disk_mib}Mi"}
    args = None
    if spec.entry is not None:  # the image's entrypoint runs the kit on the entry (podman.py)
        args = [f"--server={service_address}", f"--version={spec.version}",
                *([f"--people={spec.people}"] if spec.people else [])]
    container = k8s.V1Container(
        name="bot",
        image=spec.image,
        image_pull_policy="IfNotPresent",
        args=args,
        env=[
            k8s.V1EnvVar(name="BUMMERL_TOKEN", value_from=k8s.V1EnvVarSource(
                secret_key_ref=k8s.V1SecretKeySelector(name=spec.secret_name, key=TOKEN_KEY))),
            k8s.V1EnvVar(name="BUMMERL_SERVER", value=service_address),
            k8s.V1EnvVar(name="HOME", value="/tmp"),
            k8s.V1EnvVar(name="PYTHONDONTWRITEBYTECODE", value="1"),
            k8s.V1EnvVar(name="PYTHONUNBUFFERED", value="1"),
        ],
        resources=k8s.V1ResourceRequirements(requests=resources, limits=dict(resources)),
        security_context=k8s.V1SecurityContext(
            read_only_root_filesystem=True,
            allow_privilege_escalation=False,
            privileged=False,
            run_as_non_root=True,
            capabilities=k8s.V1Capabilities(drop=["ALL"]),
        ),
        volume_mounts=[k8s.V1VolumeMount(name="tmp", mount_path="/tmp")],
    )
    pod = k8s.V1PodSpec(
        containers=[container],
        automount_service_account_token=False,
        enable_service_links=False,
        host_network=False,
        host_pid=False,
        host_ipc=False,
        termination_grace_period_seconds=30,
        security_context=k8s.V1PodSecurityContext(
            run_as_non_root=True,
            run_as_user=UID,
            run_as_group=UID,
            seccomp_profile=k8s.V1SeccompProfile(type="RuntimeDefault"),
        ),
        volumes=[k8s.V1Volume(name="tmp", empty_dir=k8s.V1EmptyDirVolumeSource(
            medium="Memory", size_limit=f"{spec.tmpfs_mib}Mi"))],
    )
    body = k8s.V1DeploymentSpec(
        replicas=1,
        revision_history_limit=1,
        strategy=k8s.V1DeploymentStrategy(type="Recreate"),
        selector=k8s.V1LabelSelector(match_labels={
            "app.kubernetes.io/component": COMPONENT, VERSION_LABEL: str(spec.version_id)}),
        template=k8s.V1PodTemplateSpec(metadata=k8s.V1ObjectMeta(labels=labels), spec=pod),
    )
    return k8s.V1Deployment(
        api_version="apps/v1",
        kind="Deployment",
        metadata=k8s.V1ObjectMeta(
            name=spec.name, namespace=namespace, labels=labels,
            annotations={"bummerl.hosted/bot": spec.bot, "bummerl.hosted/version": spec.version,
                         SPEC_HASH: _digest(body)}),
        spec=body,
    )


def secret(spec: HostedSpec, token: str) -> k8s.V1Secret:
    """The Secret holding `spec`'s token (key `token`), labelled as its Deployment is."""
    if not token or any(c.isspace() for c in token):
        raise ValueError(f"the token of hosted version {spec.version_id} is empty or has spaces")
    return k8s.V1Secret(
        api_version="v1",
        kind="Secret",
        metadata=k8s.V1ObjectMeta(name=spec.secret_name, labels=spec.labels()),
        type="Opaque",
        string_data={TOKEN_KEY: token},
    )


def network_policy(namespace: str, service_namespace: str = SITE_NAMESPACE
                   ) -> k8s.V1NetworkPolicy:
    """The NetworkPolicy of the hosted namespace: it selects every pod there (the namespace
    holds only hosted bots), lets nothing in, and lets out only connections to the service's
    pods (in `service_namespace`) on 50051/TCP and DNS queries to kube-dns (53, UDP and TCP).
    The same object is k8s/base/hosted-bots.yaml's."""
    dns = k8s.V1NetworkPolicyPeer(
        namespace_selector=k8s.V1LabelSelector(
            match_labels={"kubernetes.io/metadata.name": "kube-system"}),
        # an expression, not matchLabels: kustomize's labels would be added to matchLabels
        pod_selector=k8s.V1LabelSelector(match_expressions=[k8s.V1LabelSelectorRequirement(
            key="k8s-app", operator="In", values=["kube-dns"])]))
    service = k8s.V1NetworkPolicyPeer(
        namespace_selector=k8s.V1LabelSelector(
            match_labels={"kubernetes.io/metadata.name": service_namespace}),
        pod_selector=k8s.V1LabelSelector(match_labels=dict(SERVE_LABELS)))
    return k8s.V1NetworkPolicy(
        api_version="networking.k8s.io/v1",
        kind="NetworkPolicy",
        metadata=k8s.V1ObjectMeta(name=POLICY_NAME, namespace=namespace),
        spec=k8s.V1NetworkPolicySpec(
            pod_selector=k8s.V1LabelSelector(),
            policy_types=["Ingress", "Egress"],
            egress=[
                k8s.V1NetworkPolicyEgressRule(to=[service], ports=[
                    k8s.V1NetworkPolicyPort(protocol="TCP", port=SERVICE_PORT)]),
                k8s.V1NetworkPolicyEgressRule(to=[dns], ports=[
                    k8s.V1NetworkPolicyPort(protocol="UDP", port=53),
                    k8s.V1NetworkPolicyPort(protocol="TCP", port=53)]),
            ],
        ),
    )


def address_namespace(service_address: str) -> str:
    """The namespace of a cluster address `NAME.NAMESPACE.svc[.DOMAIN]:PORT`."""
    found = _ADDRESS.fullmatch(service_address)
    if found is None:
        raise ValueError(f"the service address {service_address!r} is not NAME.NAMESPACE.svc:PORT"
                         " (a Service's cluster DNS name: hosted pods may reach only that)")
    return found.group(2)


def _meta(obj: Any) -> k8s.V1ObjectMeta:
    """The metadata of an object made here or read from the API (always set on those)."""
    meta: k8s.V1ObjectMeta = obj.metadata
    return meta


def _missing(e: ApiException) -> bool:
    return e.status == 404


def _failed(what: str, e: ApiException) -> str:
    return f"failed to {what}: {e.status} {e.reason}"


def ensure_policy(net: Any, namespace: str, service_namespace: str) -> list[str]:
    """Create the hosted NetworkPolicy in `namespace`, or put it back as it should be if its
    spec was changed."""
    body = network_policy(namespace, service_namespace)
    try:
        current = net.read_namespaced_network_policy(POLICY_NAME, namespace)
    except ApiException as e:
        if not _missing(e):
            raise
        net.create_namespaced_network_policy(namespace, body)
        return [f"created NetworkPolicy {namespace}/{POLICY_NAME}"]
    if _serialize(current.spec) == _serialize(body.spec):
        return []
    _meta(body).resource_version = _meta(current).resource_version
    net.replace_namespaced_network_policy(POLICY_NAME, namespace, body)
    return [f"restored NetworkPolicy {namespace}/{POLICY_NAME} (its spec had been changed)"]


def _write_token(core: Any, namespace: str, spec: HostedSpec, tokens: Callable[[HostedSpec], str],
                 exists: bool) -> None:
    body = secret(spec, tokens(spec))
    if exists:
        core.replace_namespaced_secret(spec.secret_name, namespace, body)
    else:
        core.create_namespaced_secret(namespace, body)


def reconcile(apps: Any, core: Any, net: Any, namespace: str, desired: list[HostedSpec],
              tokens: Callable[[HostedSpec], str],
              service_address: str = SERVICE_ADDRESS) -> list[str]:
    """Make the hosted Deployments of `namespace` those of `desired`, and say what was done,
    one line per action (nothing when all is as it should be).

    First the NetworkPolicy (created, or restored if changed: no hosted pod starts without
    it). Then the Deployments and Secrets labelled as hosted (`SELECTOR`): one not desired is
    deleted with its Secret; a desired one that is missing is created after its Secret, whose
    token `tokens(spec)` mints (a fresh one at each creation; a Secret left from an earlier
    try is overwritten); one made from another spec (another image, limits or address: the
    `bummerl.hosted/spec-hash` annotation) is replaced, its pod restarted by its Deployment;
    a desired one whose Secret is gone gets a new token. An object that is already gone, or
    already made by a concurrent run, is taken as done; any other refusal of one object is a
    line `failed to ...` and the others go on. The policy's or a listing's failure raises
    `ApiException` before any Deployment or Secret is touched."""
    names = [spec.name for spec in desired]
    if len(set(names)) != len(names):
        raise ValueError(f"desired hosted versions twice: {sorted(names)}")
    policy = ensure_policy(net, namespace, address_namespace(service_address))
    deployments = {d.metadata.name: d for d in
                   apps.list_namespaced_deployment(namespace, label_selector=SELECTOR).items}
    secrets = {s.metadata.name for s in
               core.list_namespaced_secret(namespace, label_selector=SELECTOR).items}
    actions = list(policy)
    wanted = {spec.name: spec for spec in desired}
    for name in sorted(set(deployments) - set(wanted)):
        try:
            apps.delete_namespaced_deployment(name, namespace, propagation_policy="Background")
            actions.append(f"deleted Deployment {name} (no longer live)")
        except ApiException as e:
            if not _missing(e):
                actions.append(_failed(f"delete Deployment {name}", e))
    for name in sorted(secrets - {spec.secret_name for spec in desired}):
        try:
            core.delete_namespaced_secret(name, namespace)
            actions.append(f"deleted Secret {name}")
        except ApiException as e:
            if not _missing(e):
                actions.append(_failed(f"delete Secret {name}", e))
    for spec in sorted(desired, key=lambda s: s.version_id):
        body = deployment(spec, namespace, service_address)
        current = deployments.get(spec.name)
        has_secret = spec.secret_name in secrets
        step = f"create {spec.name}"
        try:
            if current is None:
                _write_token(core, namespace, spec, tokens, has_secret)
                apps.create_namespaced_deployment(namespace, body)
                actions.append(f"created Deployment {spec.name} ({spec.image})")
                continue
            if (_meta(current).annotations or {}).get(SPEC_HASH) != \
                    (_meta(body).annotations or {})[SPEC_HASH]:
                step = f"replace {spec.name}"
                _meta(body).resource_version = _meta(current).resource_version
                apps.replace_namespaced_deployment(spec.name, namespace, body)
                actions.append(f"replaced Deployment {spec.name} ({spec.image})")
            if not has_secret:
                step = f"create Secret {spec.secret_name}"
                _write_token(core, namespace, spec, tokens, False)
                actions.append(f"created Secret {spec.secret_name} (it was gone)")
        except ApiException as e:
            if e.status == 409 and current is None:
                actions.append(f"Deployment {spec.name} already made by another run")
            else:
                actions.append(_failed(step, e))
    return actions


LOG_BYTES = 64 * 1024  # what observe() keeps of a pod's output (the run_log's size)
LOG_LINES = 400


@dataclass(frozen=True)
class PodState:
    """What the cluster says of a hosted version's pod: whether its bot runs, its restarts
    (the kubelet's count), why it waits (`CrashLoopBackOff`, `ImagePullBackOff`,
    `CreateContainerConfigError`, ...), how it last ended (`exit 1 (Error)`, `exit 137
    (OOMKilled)`), and the tail of its output (the ended container's while it waits to be
    restarted: the traceback of a crash), at most LOG_BYTES; `image_id`: the image its
    container runs as the runtime resolved it (`REPOSITORY@sha256:...` once pulled, else "")."""

    version_id: int
    pod: str
    running: bool
    restarts: int
    waiting: str | None
    last_exit: str | None
    log: str
    image_id: str = ""


def _ended(status: Any) -> str | None:
    ended = status.last_state.terminated if status.last_state else None
    if ended is None:
        return None
    said = f"exit {ended.exit_code} ({ended.reason or 'no reason given'})"
    return f"{said}: {ended.message.strip()}" if ended.message else said


def _tail(core: Any, pod: str, namespace: str, previous: bool, log_bytes: int) -> str:
    """The last `log_bytes` of a pod's output. The API gives the last N lines, cut at a
    number of bytes from their start: fewer lines are asked while what comes back is cut, so
    that the end is in it (a single line longer than 4 x log_bytes comes back as its start).
    "" when there is no log to read (the container not started yet)."""
    log = ""
    for lines in (LOG_LINES, LOG_LINES // 10, 4, 1):
        try:
            log = core.read_namespaced_pod_log(
                pod, namespace, container="bot", tail_lines=lines, limit_bytes=4 * log_bytes,
                previous=previous) or ""
        except ApiException:
            return ""
        if len(log.encode()) < 4 * log_bytes:
            break
    return log.encode()[-log_bytes:].decode(errors="ignore")


def _born(pod: Any) -> str:
    created = _meta(pod).creation_timestamp
    return created.isoformat() if created else ""


def observe(core: Any, namespace: str, log_bytes: int = LOG_BYTES,
            version_id: int | None = None) -> dict[int, PodState]:
    """The state of each hosted version's pod in `namespace` (of the version `version_id`
    alone, if given), by version id (the newest pod of a version when an old one is still
    going; none for a version whose pod was not made, e.g. refused by the quota). A pod whose
    log cannot be read yet (its image not pulled) has the log ""."""
    selector = SELECTOR if version_id is None else f"{SELECTOR}={version_id}"
    newest: dict[int, Any] = {}
    for pod in core.list_namespaced_pod(namespace, label_selector=selector).items:
        label = (_meta(pod).labels or {}).get(VERSION_LABEL, "")
        if not label.isdigit():
            continue
        version = int(label)
        seen = newest.get(version)
        if seen is None or _born(pod) > _born(seen):
            newest[version] = pod
    states = {}
    for version, pod in sorted(newest.items()):
        name = _meta(pod).name or ""
        status = next((c for c in (pod.status.container_statuses or []) if c.name == "bot"),
                      None) if pod.status else None
        waiting = status.state.waiting if status and status.state else None
        last_exit = _ended(status) if status else None
        log = _tail(core, name, namespace, bool(waiting and last_exit), log_bytes)
        states[version] = PodState(
            version_id=version, pod=name,
            running=bool(status and status.state and status.state.running),
            restarts=status.restart_count if status else 0,
            waiting=(f"{waiting.reason}: {waiting.message}" if waiting.message
                     else waiting.reason) if waiting else None,
            last_exit=last_exit,
            log=log,
            image_id=(status.image_id or "") if status else "")
    return states


_DIGEST = re.compile(r"@(sha256:[0-9a-f]{64})$")


def pinned(image: str, image_id: str) -> str | None:
    """`image` (a reference, hosting.archive.check_image) pinned to the digest its pod ran
    (`image_id`, PodState.image_id: `docker.io/me/bot@sha256:...`, or with the runtime's
    prefix `docker-pullable://`): `NAME@sha256:...`, so that what runs live is the image that
    passed its validation, whatever its tag names later. None without a digest."""
    digest = _DIGEST.search(image_id)
    name = IMAGE.fullmatch(image)
    if digest is None or name is None:
        return None
    return f"{name.group('name')}@{digest.group(1)}"


# Why a container waits that it will not get over by itself (its image, its configuration,
# its command): a version validating fails at once with it.
STUCK = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
         "CreateContainerConfigError", "CreateContainerError", "RunContainerError",
         "CrashLoopBackOff")


def broken(pod: PodState) -> str | None:
    """Why `pod` does not run its bot and will not by itself (it ended once, or it waits for
    one of `STUCK`), in a line; None while it runs or is on its way (pulled, created)."""
    if pod.restarts or pod.last_exit:
        return f"its pod's container ended ({pod.last_exit or 'no exit code given'})"
    if pod.waiting and pod.waiting.split(":", 1)[0] in STUCK:
        return f"its pod cannot run: {pod.waiting}"
    return None


@dataclass(frozen=True)
class Cluster:
    """Where hosted bots run on Kubernetes: the hosted namespace and the service's address."""

    namespace: str
    service_address: str


def cluster_from_env(env: Mapping[str, str] = os.environ) -> Cluster | None:
    """The cluster's settings when BUMMERL_HOSTING is `kubernetes` (else None):
    BUMMERL_HOSTED_NAMESPACE (default bummerl-hosted) and BUMMERL_HOSTED_SERVICE_ADDRESS
    (default bummerl.bummerl.svc:50051). The hosted namespace may not be the service's: its
    NetworkPolicy seals every pod in it."""
    if env.get("BUMMERL_HOSTING", "") != "kubernetes":
        return None
    namespace = env.get("BUMMERL_HOSTED_NAMESPACE", HOSTED_NAMESPACE)
    address = env.get("BUMMERL_HOSTED_SERVICE_ADDRESS", SERVICE_ADDRESS)
    if not _NAMESPACE.fullmatch(namespace):
        raise ValueError(f"BUMMERL_HOSTED_NAMESPACE {namespace!r} is not a namespace's name")
    if address_namespace(address) == namespace:
        raise ValueError(f"BUMMERL_HOSTED_NAMESPACE {namespace!r} is the service's namespace "
                         f"(of {address}): hosted bots need a namespace of their own")
    return Cluster(namespace, address)


def clients() -> tuple[k8s.AppsV1Api, k8s.CoreV1Api, k8s.NetworkingV1Api]:
    """The API objects `reconcile` takes: from the pod's service account inside a cluster,
    else from the kubeconfig ($KUBECONFIG or ~/.kube/config)."""
    from kubernetes import config

    try:
        config.load_incluster_config()
    except config.ConfigException:
        # read now: the client reads $KUBECONFIG once, when it is imported
        config.load_kube_config(config_file=os.environ.get("KUBECONFIG", "~/.kube/config"))
    return k8s.AppsV1Api(), k8s.CoreV1Api(), k8s.NetworkingV1Api()
