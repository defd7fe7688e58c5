"""Hosted bots: starting, watching and stopping authors' bots in sandboxes (podman locally,
Kubernetes on a cluster)."""
