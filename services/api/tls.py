"""TLS for the gRPC server: serve TLS when given a certificate and its key.

| variable | meaning | default |
|---|---|---|
| `BUMMERL_TLS_CERT` | PEM file of the server's certificate (chain) | none: clear text |
| `BUMMERL_TLS_KEY` | PEM file of its private key | none |

Hosted bots (docs/hosted.md) reach the service on a unix socket instead, in clear text: a file
of this machine that only the containers it is mounted into can reach (`add_unix_socket`).

Both or neither: one without the other is an error that names the missing one. Clients connect
with `--tls` (and `--ca FILE` for a private CA or a self-signed certificate), see
`client.connect`. In Kubernetes, TLS is often ended at the ingress instead; then leave these
unset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import grpc


@dataclass(frozen=True)
class TLSFiles:
    """The server's certificate chain and private key (PEM files)."""

    cert: Path
    key: Path

    def credentials(self) -> grpc.ServerCredentials:
        try:
            chain, key = self.cert.read_bytes(), self.key.read_bytes()
        except OSError as e:
            raise ValueError(f"cannot read a TLS file: {e}") from None
        return grpc.ssl_server_credentials([(key, chain)])


def from_env() -> TLSFiles | None:
    """The TLS files named by BUMMERL_TLS_CERT / BUMMERL_TLS_KEY, or None (clear text)."""
    cert = os.environ.get("BUMMERL_TLS_CERT") or None
    key = os.environ.get("BUMMERL_TLS_KEY") or None
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        missing = "BUMMERL_TLS_CERT" if cert is None else "BUMMERL_TLS_KEY"
        raise ValueError(f"TLS needs both BUMMERL_TLS_CERT and BUMMERL_TLS_KEY; {missing} "
                         "is not set")
    return TLSFiles(Path(cert), Path(key))


def add_port(server: grpc.Server | grpc.aio.Server, address: str, files: TLSFiles | None) -> int:
    """Listen on `address`, over TLS if `files` are given; returns the port."""
    if files is None:
        return server.add_insecure_port(address)
    return server.add_secure_port(address, files.credentials())


def add_unix_socket(server: grpc.Server | grpc.aio.Server, path: Path) -> None:
    """Listen on the unix socket `path` too, in clear text (for sandboxed hosted bots): its
    folder is made (mode 0755) if missing, and a socket file left by an earlier run removed.
    ValueError if `path` is something else than a socket."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o755)
    if path.is_socket():
        path.unlink()
    elif path.exists():
        raise ValueError(f"{path} exists and is not a socket: give the hosted socket another "
                         "path")
    server.add_insecure_port(f"unix:{path}")


def open_unix_socket(path: Path) -> None:
    """Let any user connect to the listening socket `path` (mode 0666): the containers' bots
    run as uid 10001, and reach only what the socket serves (a bot's calls need its token)."""
    path.chmod(0o666)
