"""Turn the rendered dev overlay (`kubectl kustomize k8s/overlays/dev`, on stdin) into what
`podman kube play` (podman 4.3) can run here (used by `bash scripts/image kube`; what it drops
and why is in docs/deploy.md): the Deployments only, each container's `envFrom` (the ConfigMap,
the Secret) written out as `env` (podman 4.3 reads a Secret it was given as a podman secret and
fails on it), DATABASE_URL and REDIS_URL pointed at the servers given as arguments (and the
service's address at 127.0.0.1:50051) (the
StatefulSets of PostgreSQL and Redis do not run under podman), the image `localhost/bummerl:dev`
(the one `scripts/image build` makes), BUMMERL_METRICS_PORT dropped (on the host's network
every pod's 9100 would be one port), and the init containers dropped (podman 4.3 fails to
bring up a pod with one: "failed to remove once init container ... as it is running"; the
migration they wait for is run before), the containers' `ports` dropped (on the host's network
podman refuses port mappings). Prints the kinds it dropped on stderr."""

from __future__ import annotations

import base64
import sys
from collections import Counter

import yaml


def main() -> int:
    database_url, redis_url, image = sys.argv[1:4]
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    config = {d["metadata"]["name"]: dict(d.get("data") or {})
              for d in docs if d["kind"] == "ConfigMap"}
    secrets = {d["metadata"]["name"]: {k: base64.b64decode(v).decode()
                                       for k, v in (d.get("data") or {}).items()}
               | dict(d.get("stringData") or {}) for d in docs if d["kind"] == "Secret"}
    for s in secrets.values():
        s.update(DATABASE_URL=database_url, REDIS_URL=redis_url)
    for c in config.values():  # no Service names on the host's network
        if "BUMMERL_SERVICE_ADDRESS" in c:
            c["BUMMERL_SERVICE_ADDRESS"] = "127.0.0.1:50051"
    out, dropped = [], Counter()
    for d in docs:
        if d["kind"] != "Deployment":
            dropped[d["kind"]] += 1
            continue
        d["metadata"].pop("namespace", None)
        d["spec"]["replicas"] = 1
        pod = d["spec"]["template"]["spec"]
        pod.pop("initContainers", None)
        for c in pod["containers"]:
            c.pop("ports", None)
            if c.get("image", "").startswith("bummerl"):
                c["image"] = image
            env = {}
            for ref in c.pop("envFrom", []):
                if "configMapRef" in ref:
                    env.update(config[ref["configMapRef"]["name"]])
                if "secretRef" in ref:
                    env.update(secrets[ref["secretRef"]["name"]])
            env.update({e["name"]: e["value"] for e in c.get("env", []) if "value" in e})
            env.pop("BUMMERL_METRICS_PORT", None)
            c["env"] = [{"name": k, "value": str(v)} for k, v in env.items()]
        out.append(d)
    print("dropped: " + ", ".join(f"{n} {k}" for k, n in sorted(dropped.items())),
          file=sys.stderr)
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
