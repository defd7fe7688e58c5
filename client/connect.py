"""Opening a gRPC channel to a bummerl server, in clear text or over TLS.

`channel(server, tls=True)` verifies the server's certificate against the system's trusted
roots, or against the PEM file `ca` (e.g. a private or self-signed certificate). The command
line tools take `--tls` and `--ca FILE` (`add_arguments`), also as `BUMMERL_TLS=1` and
`BUMMERL_TLS_CA`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import grpc


def channel(server: str, *, tls: bool = False, ca: str | Path | None = None) -> grpc.Channel:
    """A channel to `server` (host:port); with `tls` (implied by `ca`), a TLS one."""
    if not tls and not ca:
        return grpc.insecure_channel(server)
    roots = Path(ca).read_bytes() if ca else None
    return grpc.secure_channel(server, grpc.ssl_channel_credentials(root_certificates=roots))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`--tls` and `--ca FILE` (defaults from BUMMERL_TLS / BUMMERL_TLS_CA)."""
    parser.add_argument("--tls", action="store_true",
                        default=os.environ.get("BUMMERL_TLS", "0") == "1",
                        help="connect over TLS (default: $BUMMERL_TLS=1)")
    parser.add_argument("--ca", metavar="FILE", default=os.environ.get("BUMMERL_TLS_CA") or None,
                        help="PEM file of the certificate authority to trust (implies --tls; "
                             "default: $BUMMERL_TLS_CA, else the system's roots)")


def from_args(args: argparse.Namespace, server: str | None = None) -> grpc.Channel:
    """The channel the parsed `--server`, `--tls` and `--ca` name."""
    return channel(server or args.server, tls=getattr(args, "tls", False),
                   ca=getattr(args, "ca", None))
