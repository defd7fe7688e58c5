"""Hosted bots (issue 46): the authors' uploads checked and packed (archive), the sandbox's
limits and `podman run` flags (sandbox), and the podman side: the kit's base image, each
version's image, its containers, their logs (podman). Imports the database, the contracts and
the engine only; the service imports `hosting.archive` alone (docs/hosted.md)."""
