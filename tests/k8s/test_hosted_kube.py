"""hosting/kube.py: the Kubernetes objects a hosted bot runs as, and the reconciler.

No cluster runs here. The objects `deployment()`, `network_policy()` and `secret()` make are
serialised as the client sends them (`ApiClient().sanitize_for_serialization`) and validated
against the Kubernetes schema with kubernetes-validate (as tests/k8s/test_k8s.py does the
manifests), then checked for the sandbox: the securityContext, the limits, the token as the
only secret, and a NetworkPolicy whose only egress is the service's pods and DNS; the
manifests' NetworkPolicy and Role (k8s/base/hosted-bots.yaml, rendered) are checked against
the code's.

`reconcile` runs against `Cluster`, an in-memory stand-in of the three API objects it is given
(AppsV1Api, CoreV1Api, NetworkingV1Api): the methods it calls, each call bound against the real
client method's signature (a call the real client would refuse fails here), objects kept by
name, a resourceVersion checked on replace (409 when stale), 404 for a missing object, 409 for
one that exists, label selectors of the forms `k=v` and `k`, and every object written validated
against the Kubernetes schema. `observe` runs against it too, with pods and their logs that a
test puts there as a kubelet would report them (a log read keeps the last lines, cut at a
number of bytes from their start, as the API does). It does not run pods, the kubelet, a
scheduler, admission or a network plugin: that the policy holds is the cluster's
(docs/hosted-kubernetes.md)."""

from __future__ import annotations

import argparse
import copy
import inspect
import re
import shlex
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from hosting import kube

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ["1.29", kubernetes_validate.latest_version()]
NS = kube.HOSTED_NAMESPACE
ADDRESS = kube.SERVICE_ADDRESS


def as_dict(obj: Any) -> dict[str, Any]:
    found: dict[str, Any] = k8s.ApiClient().sanitize_for_serialization(obj)
    return found


def validate(doc: dict[str, Any]) -> None:
    for version in VERSIONS:
        kubernetes_validate.validate(doc, version, strict=True)


def spec(version_id: int = 7, image: str = "registry.example/bummerl-hosted/mybot-7:2.0",
         **more: Any) -> kube.HostedSpec:
    values: dict[str, Any] = {"bot": "My_Bot", "bot_id": 3, "version_id": version_id,
                              "version": "2.0", "image": image, "entry": "mybot.py:MyBot"}
    return kube.HostedSpec(**{**values, **more})


# --- the objects ---------------------------------------------------------------------------


def test_the_objects_are_valid_kubernetes_objects():
    validate(as_dict(kube.deployment(spec(), NS, ADDRESS)))
    validate(as_dict(kube.deployment(spec(entry=None), NS, ADDRESS)))
    validate(as_dict(kube.network_policy(NS)))
    secret = as_dict(kube.secret(spec(), "tok-123"))
    validate(secret)
    # the check can fail: a field that is not in the schema, a count that is a string
    wrong = as_dict(kube.deployment(spec(), NS, ADDRESS))
    wrong["spec"]["replicas"] = "one"
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(wrong)
    wrong = as_dict(kube.network_policy(NS))
    wrong["spec"]["egress"][0]["allowEverything"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(wrong)


def test_the_pod_is_sandboxed_with_limits():
    d = as_dict(kube.deployment(spec(), NS, ADDRESS))
    assert d["metadata"]["name"] == "hosted-my-bot-7" and d["metadata"]["namespace"] == NS
    labels = d["metadata"]["labels"]
    assert labels["app.kubernetes.io/part-of"] == "bummerl"
    assert labels[kube.VERSION_LABEL] == "7" and labels[kube.BOT_LABEL] == "3"
    assert d["spec"]["replicas"] == 1 and d["spec"]["strategy"]["type"] == "Recreate"
    assert d["spec"]["selector"]["matchLabels"].items() <= \
        d["spec"]["template"]["metadata"]["labels"].items()
    pod = d["spec"]["template"]["spec"]
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": 10001,
                                      "runAsGroup": 10001,
                                      "seccompProfile": {"type": "RuntimeDefault"}}
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False  # no other Service's address in the environment
    assert not (pod["hostNetwork"] or pod["hostPID"] or pod["hostIPC"])
    assert "serviceAccountName" not in pod and "initContainers" not in pod
    [c] = pod["containers"]
    assert c["securityContext"] == {"readOnlyRootFilesystem": True,
                                    "allowPrivilegeEscalation": False, "privileged": False,
                                    "runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}}
    wanted = {"cpu": "500m", "memory": "256Mi", "ephemeral-storage": "64Mi"}
    assert c["resources"] == {"requests": wanted, "limits": wanted}  # Guaranteed
    # /tmp: 16 MiB of memory; the only writable place
    [volume] = pod["volumes"]
    assert volume == {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}}
    assert c["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    # its own token is the one secret it gets; the service's cluster address is the server
    assert "envFrom" not in c
    secrets = [e for e in c["env"] if "valueFrom" in e]
    assert secrets == [{"name": "BUMMERL_TOKEN", "valueFrom": {"secretKeyRef": {
        "name": "hosted-my-bot-7-token", "key": "token"}}}]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["BUMMERL_SERVER"] == ADDRESS
    # the image's entrypoint (`bummerl-kit /bot/mybot.py:MyBot`, hosting.podman) is told the
    # cluster's server and the version; the kit's own command line takes them
    assert "command" not in c
    assert c["args"] == [f"--server={ADDRESS}", "--version=2.0"]
    from bummerl_kit.__main__ import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    parsed = parser.parse_args(["/bot/mybot.py:MyBot", "--server", "unix:/run/x.sock",
                                *c["args"]])
    assert (parsed.bot, parsed.server, parsed.version) == ("/bot/mybot.py:MyBot", ADDRESS, "2.0")
    # an author's image runs its own command, told the server by BUMMERL_SERVER
    image = as_dict(kube.deployment(spec(entry=None), NS, ADDRESS))
    assert "command" not in image["spec"]["template"]["spec"]["containers"][0]
    assert "args" not in image["spec"]["template"]["spec"]["containers"][0]
    # other limits are other figures
    bigger = as_dict(kube.deployment(spec(cpu=1.25, memory_mib=512, tmpfs_mib=32), NS, ADDRESS))
    bigger_pod = bigger["spec"]["template"]["spec"]
    assert bigger_pod["containers"][0]["resources"]["limits"]["cpu"] == "1250m"
    assert bigger_pod["containers"][0]["resources"]["limits"]["memory"] == "512Mi"
    assert bigger_pod["volumes"][0]["emptyDir"]["sizeLimit"] == "32Mi"
    assert "podPidsLimit" in kube.deployment.__doc__  # where the process limit is set


def test_the_secret_holds_the_token_alone():
    s = as_dict(kube.secret(spec(), "tok-123"))
    assert s["metadata"]["name"] == "hosted-my-bot-7-token"
    assert s["metadata"]["labels"][kube.VERSION_LABEL] == "7"
    assert s["stringData"] == {"token": "tok-123"} and "data" not in s
    for bad in ("", "two words"):
        with pytest.raises(ValueError, match="token of hosted version 7"):
            kube.secret(spec(), bad)


def test_the_network_policy_lets_out_only_the_service_and_dns():
    p = as_dict(kube.network_policy(NS))
    assert p["metadata"] == {"name": kube.POLICY_NAME, "namespace": NS}
    assert p["spec"]["podSelector"] == {}  # every pod of the hosted namespace
    assert p["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert "ingress" not in p["spec"]  # nothing may connect to a hosted bot
    service, dns = p["spec"]["egress"]
    assert service == {"to": [{
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "bummerl"}},
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "bummerl",
                                        "app.kubernetes.io/part-of": "bummerl",
                                        "app.kubernetes.io/component": "serve"}}}],
        "ports": [{"protocol": "TCP", "port": 50051}]}
    assert dns == {"to": [{
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
        "podSelector": {"matchExpressions": [
            {"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]}}],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}
    # no rule without a peer or a port (either would let out everything)
    for rule in p["spec"]["egress"]:
        assert rule["to"] and rule["ports"]
        for peer in rule["to"]:
            assert "ipBlock" not in peer and peer["namespaceSelector"] and peer["podSelector"]
    other = as_dict(kube.network_policy(NS, service_namespace="site"))
    assert other["spec"]["egress"][0]["to"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "site"}


def test_a_wrong_spec_is_refused_naming_what_is_wrong():
    cases = {"image": ("image 'two words' is not an image reference", {"image": "two words"}),
             "entry": ("entry '--server=x:1' is not", {"entry": "--server=x:1"}),
             "cpu": ("cpu 0 is not in", {"cpu": 0}),
             "tmpfs": ("/tmp of 300 MiB does not fit in 256 MiB", {"tmpfs_mib": 300}),
             "ids": ("ids must be positive", {"bot_id": 0})}
    for what, (message, values) in cases.items():
        with pytest.raises(ValueError, match=message.replace("(", r"\(")) as e:
            spec(**values)
        assert "hosted version" in str(e.value), what
    assert spec(bot="!!!").name == "hosted-bot-7"
    assert len(spec(bot="x" * 200, version_id=123456789).name) <= 50


def test_cluster_settings_from_the_environment():
    assert kube.cluster_from_env({}) is None
    assert kube.cluster_from_env({"BUMMERL_HOSTING": "podman"}) is None
    assert kube.cluster_from_env({"BUMMERL_HOSTING": "kubernetes"}) == kube.Cluster(
        "bummerl-hosted", "bummerl.bummerl.svc:50051")
    assert kube.cluster_from_env({
        "BUMMERL_HOSTING": "kubernetes", "BUMMERL_HOSTED_NAMESPACE": "bots",
        "BUMMERL_HOSTED_SERVICE_ADDRESS": "grpc.site.svc.cluster.local:50051"}) == \
        kube.Cluster("bots", "grpc.site.svc.cluster.local:50051")
    for env, message in [
            ({"BUMMERL_HOSTED_NAMESPACE": "bummerl"}, "is the service's namespace"),
            ({"BUMMERL_HOSTED_NAMESPACE": "Bad_Name"}, "is not a namespace's name"),
            ({"BUMMERL_HOSTED_SERVICE_ADDRESS": "10.0.0.1:50051"}, "is not NAME.NAMESPACE.svc")]:
        with pytest.raises(ValueError, match=message):
            kube.cluster_from_env({"BUMMERL_HOSTING": "kubernetes", **env})


def test_clients_come_from_the_kubeconfig_outside_a_cluster(tmp_path, monkeypatch):
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:6443"}}],
              "users": [{"name": "u", "user": {"token": "t"}}],
              "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}]}
    (tmp_path / "config").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "config"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    apps, core, net = kube.clients()
    for api in (apps, core, net):
        assert api.api_client.configuration.host == "https://127.0.0.1:6443"
    assert isinstance(net, k8s.NetworkingV1Api)


# --- the reconciler against a stand-in of the API ------------------------------------------


# The kinds the stand-in keeps, by the noun of their methods (`list_namespaced_<noun>`).
NOUNS = {"deployment": "Deployment", "secret": "Secret", "network_policy": "NetworkPolicy",
         "pod": "Pod", "pod_log": "PodLog"}
LISTS = {"Deployment": k8s.V1DeploymentList, "Secret": k8s.V1SecretList, "Pod": k8s.V1PodList}


class Cluster:
    """The objects of one namespace, and each call made to them, as (method, name)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], Any] = {}
        self.logs: dict[tuple[str, bool], str] = {}  # (pod, previous) -> its output
        self.calls: list[tuple[str, str]] = []
        self.version = 0
        self.refuse: dict[tuple[str, str], int] = {}  # (method, name) -> HTTP status
        # called before each listing of pods: what a test's kubelet does meanwhile
        self.kubelet: Any = None
        self.apps, self.core, self.net = (API(self, k8s.AppsV1Api), API(self, k8s.CoreV1Api),
                                          API(self, k8s.NetworkingV1Api))

    def of(self, kind: str) -> dict[str, Any]:
        return {name: obj for (k, name), obj in self.objects.items() if k == kind}

    def put(self, kind: str, obj: Any) -> Any:
        doc = as_dict(obj)
        doc.setdefault("apiVersion", {"Deployment": "apps/v1",
                                      "NetworkPolicy": "networking.k8s.io/v1"}.get(kind, "v1"))
        doc.setdefault("kind", kind)
        validate(doc)  # what an API server would refuse, refused here
        stored = copy.deepcopy(obj)
        self.version += 1
        stored.metadata.resource_version = str(self.version)
        self.objects[kind, stored.metadata.name] = stored
        return copy.deepcopy(stored)


def selected(labels: dict[str, str] | None, selector: str | None) -> bool:
    for term in (selector or "").split(","):
        if not term:
            continue
        key, _, value = term.partition("=")
        if key not in (labels or {}) or (value and (labels or {})[key] != value):
            return False
    return True


class API:
    """One of the client's API objects (`real`): its methods `<verb>_namespaced_<noun>` that
    the code calls, each call bound against the real method's signature first (TypeError if
    the real client would not take it; AttributeError for a method `real` does not have)."""

    def __init__(self, cluster: Cluster, real: type) -> None:
        self.cluster, self.real = cluster, real

    def __getattr__(self, method: str) -> Any:
        verb, _, noun = method.partition("_namespaced_")
        if noun not in NOUNS or not hasattr(self.real, method):
            raise AttributeError(method)
        handler = getattr(self, f"_{verb}")

        def invoke(*args: Any, **kwargs: Any) -> Any:
            bound = inspect.signature(getattr(self.real, method)).bind(self, *args, **kwargs)
            found = bound.arguments
            name = found.get("name") or getattr(
                getattr(found.get("body"), "metadata", None), "name", "")
            self.cluster.calls.append((method, name))
            assert found["namespace"] == NS
            status = self.cluster.refuse.get((method, name))
            if status:
                raise ApiException(status=status, reason="refused by the test")
            return handler(NOUNS[noun], found)
        return invoke

    def _list(self, kind: str, found: dict[str, Any]) -> Any:
        if kind == "Pod" and self.cluster.kubelet is not None:
            self.cluster.kubelet(self.cluster)
        items = [copy.deepcopy(o) for o in self.cluster.of(kind).values()
                 if selected(o.metadata.labels, found.get("label_selector"))]
        return LISTS[kind](items=items)

    def _read(self, kind: str, found: dict[str, Any]) -> Any:
        if kind == "PodLog":
            log = self.cluster.logs.get((found["name"], bool(found.get("previous"))))
            if log is None:  # as the API answers for a container not started yet
                raise ApiException(status=400, reason="Bad Request")
            lines = log.splitlines(keepends=True)[-found.get("tail_lines", 10**9):]
            return "".join(lines)[:found.get("limit_bytes")]
        if found["name"] not in self.cluster.of(kind):
            raise ApiException(status=404, reason="Not Found")
        return copy.deepcopy(self.cluster.objects[kind, found["name"]])

    def _create(self, kind: str, found: dict[str, Any]) -> Any:
        if found["body"].metadata.name in self.cluster.of(kind):
            raise ApiException(status=409, reason="AlreadyExists")
        return self.cluster.put(kind, found["body"])

    def _replace(self, kind: str, found: dict[str, Any]) -> Any:
        current = self.cluster.of(kind).get(found["name"])
        if current is None:
            raise ApiException(status=404, reason="Not Found")
        given = found["body"].metadata.resource_version
        if given is not None and given != current.metadata.resource_version:
            raise ApiException(status=409, reason="Conflict")
        return self.cluster.put(kind, found["body"])

    def _delete(self, kind: str, found: dict[str, Any]) -> Any:
        if self.cluster.objects.pop((kind, found["name"]), None) is None:
            raise ApiException(status=404, reason="Not Found")
        return None


class Mint:
    """The tokens callback: a fresh token each call, remembered per version."""

    def __init__(self) -> None:
        self.minted: list[tuple[int, str]] = []

    def __call__(self, s: kube.HostedSpec) -> str:
        token = f"tok-{s.version_id}-{len(self.minted)}"
        self.minted.append((s.version_id, token))
        return token


def run(cluster: Cluster, desired: list[kube.HostedSpec], mint: Mint) -> list[str]:
    return kube.reconcile(cluster.apps, cluster.core, cluster.net, NS, desired, mint)


def token_of(cluster: Cluster, s: kube.HostedSpec) -> str:
    token: str = cluster.objects["Secret", s.secret_name].string_data["token"]
    return token


def test_reconcile_creates_leaves_alone_replaces_and_deletes():
    cluster, mint = Cluster(), Mint()
    a, b = spec(7), spec(8, bot="other", bot_id=4)
    # an empty namespace: the policy first, then each version's Secret and Deployment
    done = run(cluster, [a, b], mint)
    assert done == [f"created NetworkPolicy {NS}/{kube.POLICY_NAME}",
                    f"created Deployment {a.name} ({a.image})",
                    f"created Deployment {b.name} ({b.image})"]
    assert [c for c in cluster.calls if c[0].startswith("create")] == [
        ("create_namespaced_network_policy", kube.POLICY_NAME),
        ("create_namespaced_secret", a.secret_name), ("create_namespaced_deployment", a.name),
        ("create_namespaced_secret", b.secret_name), ("create_namespaced_deployment", b.name)]
    assert set(cluster.of("Deployment")) == {a.name, b.name}
    assert token_of(cluster, a) == "tok-7-0" and token_of(cluster, b) == "tok-8-1"
    # twice: nothing to do, nothing written, no token minted
    cluster.calls.clear()
    assert run(cluster, [a, b], mint) == []
    assert {method for method, _ in cluster.calls} == {
        "read_namespaced_network_policy", "list_namespaced_deployment",
        "list_namespaced_secret"}
    assert len(mint.minted) == 2
    # a new image of version 7: replaced (the same token), 8 left alone
    rebuilt = spec(7, image="registry.example/bummerl-hosted/mybot-7:2.0-rebuilt")
    assert run(cluster, [rebuilt, b], mint) == [
        f"replaced Deployment {a.name} ({rebuilt.image})"]
    stored = cluster.objects["Deployment", a.name]
    assert stored.spec.template.spec.containers[0].image == rebuilt.image
    assert token_of(cluster, a) == "tok-7-0" and len(mint.minted) == 2
    assert run(cluster, [rebuilt, b], mint) == []
    # other limits are another spec too
    assert run(cluster, [rebuilt, spec(8, bot="other", bot_id=4, memory_mib=512)], mint) == [
        f"replaced Deployment {b.name} ({b.image})"]
    # version 8 no longer live: its Deployment and its Secret go; 7 stays
    assert run(cluster, [rebuilt], mint) == [f"deleted Deployment {b.name} (no longer live)",
                                             f"deleted Secret {b.secret_name}"]
    assert set(cluster.of("Deployment")) == {a.name}
    assert set(cluster.of("Secret")) == {a.secret_name}
    # nothing live: nothing hosted left, the policy stays
    assert run(cluster, [], mint) == [f"deleted Deployment {a.name} (no longer live)",
                                      f"deleted Secret {a.secret_name}"]
    assert not cluster.of("Deployment") and not cluster.of("Secret")
    assert set(cluster.of("NetworkPolicy")) == {kube.POLICY_NAME}


def test_reconcile_leaves_what_is_not_hosted_and_mends_what_is_half_made():
    cluster, mint = Cluster(), Mint()
    a = spec(7)
    # an object of the namespace without the hosted labels is not the reconciler's
    cluster.put("Secret", k8s.V1Secret(metadata=k8s.V1ObjectMeta(name="pull-secret"),
                                       string_data={"x": "y"}))
    # a Secret left by an earlier try whose Deployment was never made: a fresh token
    cluster.put("Secret", kube.secret(a, "stale-token"))
    assert run(cluster, [a], mint) == [f"created NetworkPolicy {NS}/{kube.POLICY_NAME}",
                                       f"created Deployment {a.name} ({a.image})"]
    assert ("replace_namespaced_secret", a.secret_name) in cluster.calls
    assert token_of(cluster, a) == "tok-7-0"
    assert "pull-secret" in cluster.of("Secret")
    # the Secret deleted by hand: a new token, the Deployment left as it is
    del cluster.objects["Secret", a.secret_name]
    assert run(cluster, [a], mint) == [f"created Secret {a.secret_name} (it was gone)"]
    assert token_of(cluster, a) == "tok-7-1"
    # the policy loosened by hand (every egress allowed): put back
    loose = cluster.objects["NetworkPolicy", kube.POLICY_NAME]
    loose.spec.egress = [k8s.V1NetworkPolicyEgressRule()]
    assert run(cluster, [a], mint) == [
        f"restored NetworkPolicy {NS}/{kube.POLICY_NAME} (its spec had been changed)"]
    assert as_dict(cluster.objects["NetworkPolicy", kube.POLICY_NAME].spec) == \
        as_dict(kube.network_policy(NS).spec)
    assert run(cluster, [a], mint) == []


def test_reconcile_goes_on_past_one_refusal_and_takes_gone_or_made_as_done():
    cluster, mint = Cluster(), Mint()
    a, b, c = spec(7), spec(8), spec(9)
    run(cluster, [a], mint)
    # 8 is refused (e.g. over the namespace's quota); 9 is still made
    cluster.refuse["create_namespaced_deployment", b.name] = 403
    done = run(cluster, [a, b, c], mint)
    assert done == [f"failed to create {b.name}: 403 refused by the test",
                    f"created Deployment {c.name} ({c.image})"]
    # the next run makes 8 with a fresh token over the Secret it left
    del cluster.refuse["create_namespaced_deployment", b.name]
    assert run(cluster, [a, b, c], mint) == [f"created Deployment {b.name} ({b.image})"]
    assert token_of(cluster, b) == "tok-8-3"
    # made meanwhile by another run (409), deleted meanwhile (404): done, no failure
    cluster.refuse["create_namespaced_deployment", "hosted-my-bot-10"] = 409
    cluster.refuse["delete_namespaced_deployment", a.name] = 404
    done = run(cluster, [b, c, spec(10)], mint)
    assert done == [f"deleted Secret {a.secret_name}",
                    "Deployment hosted-my-bot-10 already made by another run"]
    # a replace refused (changed meanwhile): said, and tried again at the next run
    cluster.refuse.clear()
    cluster.refuse["replace_namespaced_deployment", c.name] = 409
    newer = spec(9, image="registry.example/bummerl-hosted/mybot-9:2.1")
    assert run(cluster, [b, newer, spec(10)], mint) == [
        f"deleted Deployment {a.name} (no longer live)",
        f"failed to replace {c.name}: 409 refused by the test",
        f"created Deployment hosted-my-bot-10 ({spec(10).image})"]
    cluster.refuse.clear()
    assert run(cluster, [b, newer, spec(10)], mint) == [
        f"replaced Deployment {c.name} ({newer.image})"]
    # a listing refused: an error, and nothing changed
    cluster.refuse["list_namespaced_deployment", ""] = 500
    before = dict(cluster.objects)
    with pytest.raises(ApiException):
        run(cluster, [], mint)
    assert cluster.objects == before
    with pytest.raises(ValueError, match="desired hosted versions twice"):
        run(cluster, [b, b], mint)
    with pytest.raises(ValueError, match="is not NAME.NAMESPACE.svc"):
        kube.reconcile(cluster.apps, cluster.core, cluster.net, NS, [b], mint,
                       service_address="203.0.113.5:50051")


def test_the_stand_in_refuses_a_call_the_real_client_would():
    cluster = Cluster()
    cluster.apps.list_namespaced_deployment(NS, label_selector="a=b")
    with pytest.raises(TypeError):
        cluster.apps.list_namespaced_deployment(NS, selector="x")  # no such parameter
    with pytest.raises(TypeError):
        cluster.core.create_namespaced_secret(body=kube.secret(spec(), "t"))  # no namespace
    # as an API server: 409 for an object made twice or replaced from a stale read
    body = kube.deployment(spec(), NS, ADDRESS)
    made = cluster.apps.create_namespaced_deployment(NS, body)
    with pytest.raises(ApiException) as e:
        cluster.apps.create_namespaced_deployment(NS, body)
    assert e.value.status == 409
    cluster.apps.replace_namespaced_deployment(body.metadata.name, NS, made)
    with pytest.raises(ApiException) as e:
        cluster.apps.replace_namespaced_deployment(body.metadata.name, NS, made)
    assert e.value.status == 409
    with pytest.raises(ApiException) as e:
        cluster.apps.delete_namespaced_deployment("nothing", NS)
    assert e.value.status == 404


def pod(s: kube.HostedSpec, name: str, created: str, state: k8s.V1ContainerState,
        restarts: int = 0, last: k8s.V1ContainerState | None = None) -> k8s.V1Pod:
    """A pod of `s`'s Deployment as the kubelet reports it."""
    template = kube.deployment(s, NS, ADDRESS).spec.template  # type: ignore[union-attr]
    return k8s.V1Pod(
        api_version="v1", kind="Pod",
        metadata=k8s.V1ObjectMeta(name=name, labels=template.metadata.labels,
                                  creation_timestamp=datetime.fromisoformat(created)),
        spec=template.spec,
        status=k8s.V1PodStatus(container_statuses=[k8s.V1ContainerStatus(
            name="bot", image=s.image, image_id="", ready=state.running is not None,
            restart_count=restarts, state=state, last_state=last)]))


def test_observe_reads_restarts_last_exits_and_output():
    cluster = Cluster()
    crashed, running, oom, unpulled = spec(7), spec(8), spec(9), spec(10)
    traceback = "Traceback (most recent call last):\n  ...\nZeroDivisionError: division by zero\n"
    cluster.put("Pod", pod(crashed, "c-1", "2026-12-07T05:00:00+00:00", k8s.V1ContainerState(
        waiting=k8s.V1ContainerStateWaiting(
            reason="CrashLoopBackOff", message="back-off 40s restarting failed container")),
        restarts=3, last=k8s.V1ContainerState(terminated=k8s.V1ContainerStateTerminated(
            exit_code=1, reason="Error"))))
    cluster.logs["c-1", True] = "starting\n" + traceback
    up = k8s.V1ContainerState(running=k8s.V1ContainerStateRunning())
    # version 8: an old pod still going away, and the new one
    cluster.put("Pod", pod(running, "r-old", "2026-12-07T04:00:00+00:00", up))
    cluster.put("Pod", pod(running, "r-new", "2026-12-07T05:10:00+00:00", up))
    cluster.logs["r-new", False] = "".join(f"turn {i}\n" for i in range(1000))
    cluster.put("Pod", pod(oom, "o-1", "2026-12-07T05:00:00+00:00", up, restarts=1,
                           last=k8s.V1ContainerState(terminated=k8s.V1ContainerStateTerminated(
                               exit_code=137, reason="OOMKilled"))))
    cluster.logs["o-1", False] = "again\n"
    cluster.put("Pod", pod(unpulled, "u-1", "2026-12-07T05:00:00+00:00", k8s.V1ContainerState(
        waiting=k8s.V1ContainerStateWaiting(reason="ImagePullBackOff",
                                            message="Back-off pulling image"))))
    # not the reconciler's: no hosted label, or a label that is not a version id
    stray = pod(spec(11), "x-1", "2026-12-07T05:00:00+00:00", up)
    stray.metadata.labels = {"app": "other"}  # type: ignore[union-attr]
    cluster.put("Pod", stray)
    garbled = pod(spec(12), "g-1", "2026-12-07T05:00:00+00:00", up)
    garbled.metadata.labels[kube.VERSION_LABEL] = "twelve"  # type: ignore[union-attr,index]
    cluster.put("Pod", garbled)
    states = kube.observe(cluster.core, NS, log_bytes=100)
    assert sorted(states) == [7, 8, 9, 10]
    assert states[7] == kube.PodState(
        version_id=7, pod="c-1", running=False, restarts=3,
        waiting="CrashLoopBackOff: back-off 40s restarting failed container",
        last_exit="exit 1 (Error)", log=("starting\n" + traceback)[-100:])
    assert "ZeroDivisionError" in states[7].log  # the ended container's output
    assert states[8].pod == "r-new" and states[8].running and states[8].restarts == 0
    assert states[8].log.endswith("turn 999\n") and len(states[8].log) <= 100
    assert states[9].last_exit == "exit 137 (OOMKilled)" and states[9].running
    assert states[10].waiting == "ImagePullBackOff: Back-off pulling image"
    assert states[10].log == "" and not states[10].running
    assert ("read_namespaced_pod_log", "c-1") in cluster.calls
    # one line longer than the reads: its start (what the API gives), at most log_bytes
    cluster.logs["r-new", False] = "x" * 1000 + "\n"
    assert kube.observe(cluster.core, NS, log_bytes=100)[8].log == "x" * 100


# --- the manifests agree with the code -----------------------------------------------------


VERBS = {"list": "list", "read": "get", "create": "create", "replace": "update",
         "delete": "delete"}
RESOURCES = {"deployment": ("apps", "deployments"), "secret": ("", "secrets"),
             "network_policy": ("networking.k8s.io", "networkpolicies"), "pod": ("", "pods"),
             "pod_log": ("", "pods/log")}


def used_permissions() -> set[tuple[str, str, str]]:
    """(apiGroup, resource, verb) of every call reconcile and observe make in the tests'
    scenarios."""
    cluster, mint = Cluster(), Mint()
    a = spec(7)
    run(cluster, [a, spec(8)], mint)
    run(cluster, [spec(7, image="other:1")], mint)
    del cluster.objects["Secret", a.secret_name]
    cluster.objects["NetworkPolicy", kube.POLICY_NAME].spec.egress = []
    cluster.put("Secret", kube.secret(spec(9), "left-from-an-earlier-try"))
    run(cluster, [a, spec(9)], mint)
    cluster.put("Pod", pod(a, "a-1", "2026-12-07T05:00:00+00:00", k8s.V1ContainerState(
        running=k8s.V1ContainerStateRunning())))
    kube.observe(cluster.core, NS)
    used = set()
    for method, _ in cluster.calls:
        verb, _, noun = method.partition("_namespaced_")
        used.add((*RESOURCES[noun], VERBS[verb]))
    return used


@pytest.mark.kubectl
@pytest.mark.parametrize("overlay", ["dev", "prod"])
def test_the_manifests_hold_the_codes_policy_role_and_settings(overlay):
    from test_k8s import of_kind, pod_spec, render

    docs = render(overlay)
    hosted = [d for d in docs if d["metadata"].get("namespace") == NS]
    assert {d["kind"] for d in hosted} == {"NetworkPolicy", "ResourceQuota", "Role",
                                           "RoleBinding"}
    [namespace] = [d for d in of_kind(docs, "Namespace") if d["metadata"]["name"] == NS]
    # the API server itself refuses any pod there that breaks the `restricted` standard
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    [policy] = of_kind(docs, "NetworkPolicy")
    assert policy["spec"] == as_dict(kube.network_policy(NS).spec)
    assert policy["metadata"]["name"] == kube.POLICY_NAME
    # the policy's service peer selects the serve pods, in the namespace of the address
    serve = next(d for d in of_kind(docs, "Deployment")
                 if d["metadata"]["name"] == "bummerl-serve")
    assert serve["metadata"]["namespace"] == kube.address_namespace(ADDRESS) == \
        kube.SITE_NAMESPACE
    assert kube.SERVE_LABELS.items() <= serve["spec"]["template"]["metadata"]["labels"].items()
    service = next(s for s in of_kind(docs, "Service") if s["metadata"]["name"] == "bummerl")
    assert f"bummerl.{service['metadata']['namespace']}.svc:" \
        f"{service['spec']['ports'][0]['port']}" == ADDRESS
    # the hosting worker: its ServiceAccount, its settings as the code reads them
    worker = next(d for d in of_kind(docs, "Deployment")
                  if d["metadata"]["name"] == "bummerl-worker-hosting")
    pod = pod_spec(worker)
    assert pod["serviceAccountName"] == "bummerl-hosting"
    [container] = pod["containers"]
    assert container["args"][:3] == ["worker", "-Q", "hosting"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert kube.cluster_from_env(env) == kube.Cluster(NS, ADDRESS)
    # the service takes uploads of images (services/ops/hosting.py), beat sends the rounds
    from test_k8s import env_of

    for name in ("bummerl-serve", "bummerl-beat", "bummerl-worker-hosting"):
        [role] = [d for d in of_kind(docs, "Deployment") if d["metadata"]["name"] == name]
        [main] = pod_spec(role)["containers"]
        assert env_of(docs, overlay, main)["BUMMERL_HOSTING"] == "kubernetes", name
    [binding] = of_kind(docs, "RoleBinding")
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "bummerl-hosting",
                                    "namespace": worker["metadata"]["namespace"]}]
    # the Role allows the calls reconcile makes, and nothing more
    [role] = of_kind(docs, "Role")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    allowed = {(group, resource, verb) for rule in role["rules"]
               for group in rule["apiGroups"] for resource in rule["resources"]
               for verb in rule["verbs"]}
    assert allowed == used_permissions()
    assert not of_kind(docs, "ClusterRole") and not of_kind(docs, "ClusterRoleBinding")
    # one hosted pod fits the quota, and the quota bounds what the pods are limited by
    [quota] = of_kind(docs, "ResourceQuota")
    limits = kube.deployment(spec(), NS, ADDRESS).spec.template.spec.containers[0].resources
    assert {f"limits.{k}" for k in limits.limits} | {"pods"} == set(quota["spec"]["hard"])


def doc_block(language: str, after: str) -> str:
    text = (ROOT / "docs" / "hosted-kubernetes.md").read_text()
    found = re.search(rf"```{language}\n(.*?)```", text.split(after, 1)[1], re.S)
    assert found, f"no {language} block after {after!r}"
    return found.group(1)


@pytest.mark.kubectl
def test_the_docs_commands_render_the_hosted_objects():
    """docs/hosted-kubernetes.md's commands, as written, from the repository's root."""
    from test_k8s import kubectl

    kubectl()  # skips (or fails under BUMMERL_REQUIRE_SERVICES=1) without it
    lines = [line for line in doc_block("sh", "## Check the manifests").splitlines() if line]
    assert len(lines) == 2
    for line in lines:
        done = subprocess.run(shlex.split(line), cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        docs = [d for d in yaml.safe_load_all(done.stdout) if d]
        assert {(d["kind"], d["metadata"].get("namespace")) for d in docs} >= {
            ("NetworkPolicy", NS), ("Role", NS), ("Deployment", "bummerl")}


def test_the_docs_kubelet_settings_are_the_specs_limits():
    settings = yaml.safe_load(doc_block("yaml", "kubelet's process and log limits"))
    assert settings["kind"] == "KubeletConfiguration"
    assert settings["podPidsLimit"] == spec().pids == 64
    assert settings["containerLogMaxSize"] == f"{spec().log_mib}Mi"
    # what the kubelet keeps of a log fits the pod's ephemeral storage
    assert settings["containerLogMaxFiles"] * spec().log_mib < spec().disk_mib


def test_the_workers_round_on_a_cluster_runs_the_live_versions_with_tokens_of_theirs(tmp_path):
    """workers.hosted.reconcile_cluster over the stand-in: the database's live versions become
    Deployments whose Secret holds a token the service takes (its hash on the row), a second
    round changes nothing, a pod that keeps crashing pauses its version, which the next round
    removes."""
    from servicekit import Database
    from sqlalchemy import select

    from db import hosted
    from db.hosted import HostedVersion
    from services.ops import bots as bot_ops
    from workers import hosted as supervisor

    database = Database(f"sqlite:///{tmp_path / 'k.sqlite3'}")
    database.create_tables()
    sessions = database.sessions()
    bot, _ = bot_ops.register_bot("mybot", sessions=sessions)
    with sessions() as s:
        s.add(HostedVersion(bot_id=bot.id, version="2.0", kind=hosted.FILES,
                            entry="mybot.py:MyBot", state=hosted.LIVE, restarts=0,
                            image="registry.example/bummerl-hosted/mybot-1:2.0"))
        s.add(HostedVersion(bot_id=bot.id, version="1.0", kind=hosted.FILES,
                            entry="mybot.py:MyBot", state=hosted.STOPPED, restarts=0,
                            image="registry.example/bummerl-hosted/mybot-2:1.0"))
        s.commit()
        live = s.scalar(select(HostedVersion).where(HostedVersion.version == "2.0"))
    cluster = Cluster()
    where = kube.Cluster(namespace=NS, service_address=ADDRESS)

    def round_() -> list[str]:
        return supervisor.reconcile_cluster(where, cluster.apps, cluster.core, cluster.net,
                                            sessions=sessions)
    round_()
    [deployment] = cluster.of("Deployment").values()
    assert deployment.metadata.labels["bummerl.hosted/version-id"] == str(live.id)
    [secret] = cluster.of("Secret").values()
    with sessions() as s:
        row = s.get(HostedVersion, live.id)
        assert row.token_hash == hosted.sha256(secret.string_data["token"])
        found = bot_ops.bot_for_token(secret.string_data["token"], sessions=sessions)
        assert found.hosted_version == "2.0"
    calls = len(cluster.calls)
    round_()
    assert [c for c in cluster.calls[calls:] if not c[0].startswith(("list", "read"))] == []
    # its pod keeps crashing: paused, then removed
    spec_ = supervisor.spec_of(row, "mybot", supervisor.Limits.from_env())
    cluster.put("Pod", pod(spec_, "p-1", "2026-12-07T05:00:00+00:00", k8s.V1ContainerState(
        waiting=k8s.V1ContainerStateWaiting(reason="CrashLoopBackOff")),
        restarts=supervisor.CRASHES, last=k8s.V1ContainerState(
            terminated=k8s.V1ContainerStateTerminated(exit_code=1, reason="Error"))))
    cluster.logs["p-1", True] = "Traceback (most recent call last):\nKeyError: 'x'\n"
    assert f"paused version {live.id} after {supervisor.CRASHES} restarts" in round_()
    with sessions() as s:
        row = s.get(HostedVersion, live.id)
        assert row.state == hosted.PAUSED and "KeyError" in row.reason
        assert row.token_hash is None
    round_()
    assert cluster.of("Deployment") == {} and cluster.of("Secret") == {}
    sessions.kw["bind"].dispose()


# --- an image uploaded to a site on Kubernetes: validated by the reconciler's pod ----------


class Site:
    """A database with the bot `mybot` and the validation opponent, the stand-in cluster, and
    `workers.hosted` pointed at both: the validation match is a row the test's kubelet ends
    (the service and the house bot are not here: their parts are tests/hosting's)."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from servicekit import Database

        from services.ops import bots as bot_ops
        from workers import hosted as supervisor

        self.supervisor = supervisor
        monkeypatch.setenv("BUMMERL_VAR", str(tmp_path))  # reconcile_once's lock file
        monkeypatch.setattr(supervisor, "VALIDATION_POLL_S", 0.01)
        monkeypatch.setattr(supervisor.time, "sleep", lambda _s: None)
        self.database = Database(f"sqlite:///{tmp_path / 'v.sqlite3'}")
        self.database.create_tables()
        self.sessions = self.database.sessions()
        self.bot, _ = bot_ops.register_bot("mybot", sessions=self.sessions)
        self.house, _ = bot_ops.register_bot("house-random", sessions=self.sessions)
        self.cluster = Cluster()
        self.where = supervisor.Kube(kube.Cluster(NS, ADDRESS), self.cluster.apps,
                                     self.cluster.core, self.cluster.net)
        self.challenged: list[str] = []
        monkeypatch.setattr(supervisor, "_challenge", self.challenge)

    def challenge(self, token: str) -> int:
        """As the service: the version's token is its bot's, the match is made."""
        from db.models import Match
        from services.ops import bots as bot_ops

        found = bot_ops.bot_for_token(token, sessions=self.sessions)
        assert found.id == self.bot.id and found.hosted_version
        self.challenged.append(token)
        with self.sessions() as s:
            match = Match(bot0_id=self.bot.id, bot1_id=self.house.id, seed=1, move_ms=5000,
                          bank_ms=30000, max_illegal=3, bank0_ms=30000, bank1_ms=30000)
            s.add(match)
            s.commit()
            return match.id

    def upload(self, image: str = "registry.example/me/mybot:2.0", kind: str = "image",
               version: str = "2.0") -> int:
        from db import hosted
        from db.hosted import HostedVersion

        with self.sessions() as s:
            row = HostedVersion(bot_id=self.bot.id, version=version, kind=kind,
                                entry="mybot.py:MyBot" if kind == hosted.FILES else "",
                                source=b"x" if kind == hosted.FILES else None,
                                image_ref=image if kind == hosted.IMAGE else None,
                                state=hosted.BUILDING, restarts=0)
            s.add(row)
            s.commit()
            return row.id

    def row(self, version_id: int) -> Any:
        from db.hosted import HostedVersion

        with self.sessions() as s:
            found = s.get(HostedVersion, version_id)
            s.expunge(found)
            return found

    def end_match(self, version_id: int, forfeit: int | None = None,
                  reason: str = "points") -> None:
        from db.models import FINISHED, Match

        with self.sessions() as s:
            match = s.get(Match, self.row(version_id).validation_match_id)
            match.state, match.forfeit_seat, match.end_reason = FINISHED, forfeit, reason
            s.commit()

    def build(self, version_id: int) -> str | None:
        state: str | None = self.supervisor.build(version_id, sessions=self.sessions,
                                                  where=self.where)
        return state

    def round(self) -> list[str]:
        done: list[str] = self.supervisor.reconcile(sessions=self.sessions, where=self.where)
        return done

    def close(self) -> None:
        self.sessions.kw["bind"].dispose()


@pytest.fixture
def site(tmp_path, monkeypatch):
    made = Site(tmp_path, monkeypatch)
    yield made
    made.close()


def kubelet(site: Site, version_id: int, state: k8s.V1ContainerState, log: str = "",
            restarts: int = 0, last: k8s.V1ContainerState | None = None,
            previous: str = "", ends: tuple[int | None, str] | None = None,
            image_id: str = "") -> Any:
    """A kubelet that starts the version's pod once its Deployment is there, as `state`,
    (and `ends` its validation match: the forfeited seat and why, as the service would)."""

    def act(cluster: Cluster) -> None:
        deployments = [d for d in cluster.of("Deployment").values()
                       if d.metadata.labels[kube.VERSION_LABEL] == str(version_id)]
        if not deployments or cluster.of("Pod"):
            return
        [d] = deployments
        assert (("Secret", d.metadata.name + "-token")) in cluster.objects
        made = pod(spec(version_id), f"{d.metadata.name}-abc", "2026-12-07T05:00:00+00:00",
                   state, restarts=restarts, last=last)
        made.spec = d.spec.template.spec  # the Deployment's own pod
        made.metadata.labels = d.spec.template.metadata.labels
        made.status.container_statuses[0].image_id = image_id
        cluster.put("Pod", made)
        cluster.logs[made.metadata.name, False] = log
        if previous:
            cluster.logs[made.metadata.name, True] = previous
        if ends is not None:
            site.end_match(version_id, *ends)
    return act


RUNNING = k8s.V1ContainerState(running=k8s.V1ContainerStateRunning())


DIGEST = "sha256:" + "4f" * 32


def test_an_image_on_kubernetes_is_validated_by_the_reconcilers_pod_then_plays_on_live(site):
    """building → validating (nothing built: the node pulls the image) → the version's
    Deployment, Secret and NetworkPolicy made by the reconciler while it validates, its pod
    playing the validation match against the house bot → live, pinned to the digest its pod
    ran, with the token of its Secret; the next round replaces the Deployment with the pinned
    image (the same Secret), and the rounds after change nothing."""
    from db import hosted

    version_id = site.upload()
    running = kubelet(site, version_id, RUNNING, log="connected\nmatch 1 won\n",
                      ends=(None, "points"), image_id=f"registry.example/me/mybot@{DIGEST}")
    looks: list[int] = []

    def once_refused(cluster: Cluster) -> None:  # the API refuses one look: looked again
        looks.append(1)
        if len(looks) == 1:
            raise ApiException(status=500, reason="etcd timed out")
        running(cluster)
    site.cluster.kubelet = once_refused
    assert site.build(version_id) == hosted.LIVE
    assert len(looks) >= 2
    row = site.row(version_id)
    assert row.state == hosted.LIVE and row.reason is None
    assert row.image_ref == "registry.example/me/mybot:2.0"
    assert row.image == f"registry.example/me/mybot@{DIGEST}"
    assert "nothing to build" in row.build_log and "match 1 won" in row.run_log
    # the pod that played it: the sandbox of every hosted pod, the author's image
    [d] = site.cluster.of("Deployment").values()
    validating = site.supervisor.spec_of(row, "mybot", site.supervisor.Limits.from_env())
    validating = kube.HostedSpec(**{**validating.__dict__, "image": row.image_ref})
    assert as_dict(d) == {**as_dict(kube.deployment(validating, NS, ADDRESS)),
                          "metadata": as_dict(d)["metadata"]}
    assert d.spec.template.spec.containers[0].image == "registry.example/me/mybot:2.0"
    assert d.spec.template.spec.containers[0].args is None  # its own command
    assert set(site.cluster.of("NetworkPolicy")) == {kube.POLICY_NAME}
    # the challenge was made with the build's token; the pod has one of its own, which plays
    [secret] = site.cluster.of("Secret").values()
    token = secret.string_data["token"]
    assert site.challenged and site.challenged[0] != token
    assert row.token_hash == hosted.sha256(token)
    from services.ops import bots as bot_ops

    assert bot_ops.bot_for_token(token, sessions=site.sessions).hosted_version == "2.0"
    # live: the next round runs the pinned image (its pod restarted, the token the same) ...
    name = f"hosted-mybot-{version_id}"
    assert site.round() == [f"replaced Deployment {name} (registry.example/me/mybot@{DIGEST})"]
    [d] = site.cluster.of("Deployment").values()
    assert d.spec.template.spec.containers[0].image == row.image
    assert site.cluster.objects["Secret", f"{name}-token"].string_data["token"] == token
    # ... and the rounds after leave its Deployment and Secret as they are
    calls = len(site.cluster.calls)
    site.round()
    site.round()
    assert [c for c in site.cluster.calls[calls:] if not c[0].startswith(("list", "read"))] == []
    assert site.row(version_id).token_hash == hosted.sha256(token)


def test_the_validated_image_is_pinned_to_the_digest_its_pod_ran():
    digest = "sha256:" + "0a" * 32
    assert kube.pinned("ghcr.io/me/bot:2.0", f"ghcr.io/me/bot@{digest}") == \
        f"ghcr.io/me/bot@{digest}"
    # the runtime's own names: a prefix, docker.io spelt out; the reference's name is kept
    assert kube.pinned("me/bot", f"docker-pullable://docker.io/me/bot@{digest}") == \
        f"me/bot@{digest}"
    assert kube.pinned("localhost:5000/bot:1@sha256:" + "1" * 64,
                       f"localhost:5000/bot@{digest}") == f"localhost:5000/bot@{digest}"
    # no digest (not pulled yet; an image id alone): not pinned
    assert kube.pinned("me/bot:1", "") is None
    assert kube.pinned("me/bot:1", "sha256:" + "0a" * 32) is None


def test_an_image_that_cannot_be_pulled_fails_at_once_with_the_pods_state(site):
    from db import hosted

    version_id = site.upload(image="registry.example/me/nothing:1")
    site.cluster.kubelet = kubelet(site, version_id, k8s.V1ContainerState(
        waiting=k8s.V1ContainerStateWaiting(
            reason="ImagePullBackOff",
            message='Back-off pulling image "registry.example/me/nothing:1"')))
    assert site.build(version_id) == hosted.FAILED
    row = site.row(version_id)
    assert row.reason.startswith("its pod cannot run: ImagePullBackOff: Back-off pulling image")
    assert f"before its validation match {row.validation_match_id} was over" in row.reason
    assert row.token_hash is None
    # the next round removes what ran it
    assert site.round() == [
        f"deleted Deployment hosted-mybot-{version_id} (no longer live)",
        f"deleted Secret hosted-mybot-{version_id}-token"]


def test_a_pod_that_crashes_fails_its_validation_with_its_traceback(site):
    from db import hosted

    version_id = site.upload()
    traceback = "Traceback (most recent call last):\nZeroDivisionError: division by zero\n"
    site.cluster.kubelet = kubelet(
        site, version_id, k8s.V1ContainerState(waiting=k8s.V1ContainerStateWaiting(
            reason="CrashLoopBackOff")), restarts=1,
        last=k8s.V1ContainerState(terminated=k8s.V1ContainerStateTerminated(
            exit_code=1, reason="Error")), previous=traceback)
    assert site.build(version_id) == hosted.FAILED
    row = site.row(version_id)
    assert row.reason.startswith("its pod's container ended (exit 1 (Error))")
    assert row.reason.endswith("ZeroDivisionError: division by zero")
    assert "ZeroDivisionError" in row.run_log


def test_a_validation_forfeited_or_raised_in_fails_and_a_silent_pod_times_out(site, monkeypatch):
    from db import hosted

    # the match forfeited on time, while the pod runs: failed, with its output
    first = site.upload(version="a")
    site.cluster.kubelet = kubelet(site, first, RUNNING, log="thinking...\n",
                                   ends=(0, "forfeit_timeout"))
    assert site.build(first) == hosted.FAILED
    assert "no answer in time" in site.row(first).reason
    assert site.row(first).reason.endswith("thinking...")
    site.round()
    # won, but the kit caught the bot's exception and played for it: still failed
    second = site.upload(version="b")
    site.cluster.objects = {k: v for k, v in site.cluster.objects.items() if k[0] != "Pod"}
    site.cluster.kubelet = kubelet(site, second, RUNNING,
                                   log=f"{site.supervisor.RAISED} 3\nKeyError: 'x'\n",
                                   ends=(None, "points"))
    assert site.build(second) == hosted.FAILED
    assert "raised an exception" in site.row(second).reason
    site.round()
    # no pod at all (e.g. the namespace's quota): failed at the time-out, saying so
    monkeypatch.setattr(site.supervisor, "VALIDATION_TIMEOUT_S", 0.2)
    third = site.upload(version="c")
    site.cluster.objects = {k: v for k, v in site.cluster.objects.items() if k[0] != "Pod"}
    site.cluster.kubelet = None
    assert site.build(third) == hosted.FAILED
    assert site.row(third).reason == (
        f"its validation match {site.row(third).validation_match_id} was not over within "
        "0.2 s; its pod: none made (the hosted namespace's quota?)")


def test_files_and_a_bad_reference_fail_on_kubernetes_touching_no_cluster(site):
    """Files are refused at upload there (tests/services/test_hosting_service.py); a row of
    files that is building all the same (uploaded before the site moved) fails with the line
    why; so does a reference that is not one (stored before the grammar was checked)."""
    from db import hosted

    files = site.upload(kind=hosted.FILES, version="f")
    assert site.build(files) == hosted.FAILED
    assert "nothing builds uploaded files on this site's Kubernetes cluster" in \
        site.row(files).reason
    bad = site.upload(image="Registry.example/Me/Bot", version="g")
    assert site.build(bad) == hosted.FAILED
    assert "is not an image reference" in site.row(bad).reason
    assert site.cluster.calls == [] and site.challenged == []
