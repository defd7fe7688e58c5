"""TLS: the service serves TLS when given a certificate and key; the kit and the CLI connect with
--tls / --ca. A throw-away self-signed certificate is made per test run. Tokens are never
logged."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest
from bummerl.v1 import match_pb2
from servicekit import CONFIG, OPERATOR, auth, fresh_database
from test_client_cli import free_port

from client import Runner
from client.connect import channel as open_channel
from examples.random_bot import RandomBot
from services.api import tls
from services.api.server import create_server
from services.core import matches as plain_matches

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for localhost / 127.0.0.1 and its key (PEM files)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "server.crt", folder / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


def test_tls_settings_come_in_pairs(monkeypatch, certificate):
    cert, key = certificate
    monkeypatch.delenv("BUMMERL_TLS_CERT", raising=False)
    monkeypatch.delenv("BUMMERL_TLS_KEY", raising=False)
    assert tls.from_env() is None
    monkeypatch.setenv("BUMMERL_TLS_CERT", str(cert))
    with pytest.raises(ValueError, match="BUMMERL_TLS_KEY is not set"):
        tls.from_env()
    monkeypatch.setenv("BUMMERL_TLS_KEY", str(key))
    assert tls.from_env() == tls.TLSFiles(cert, key)
    with pytest.raises(ValueError, match="cannot read a TLS file"):
        tls.TLSFiles(cert, key.parent / "missing.key").credentials()


def test_a_match_over_tls_and_no_token_in_the_logs(request, tmp_path, certificate, caplog):
    cert, key = certificate
    caplog.set_level(logging.DEBUG)
    with fresh_database("sqlite", request, tmp_path) as database:
        database.create_tables()
        sessions = database.sessions()
        server = create_server("127.0.0.1:0", sessions=sessions, config=CONFIG,
                               tls_files=tls.TLSFiles(cert, key)).start()
        try:
            from services.ops import bots

            players = [bots.register_bot(name, sessions=sessions) for name in ("t0", "t1")]
            tokens = [token for _, token in players]
            assert all(tokens)
            m = plain_matches.create_match([players[0][0].id, players[1][0].id],
                                           sessions=sessions, config=CONFIG)
            runners = [Runner(RandomBot(), server.address, token, max_matches=1, tls=True,
                              ca=str(cert)) for token in tokens]
            threads = [threading.Thread(target=r.run, daemon=True) for r in runners]
            for t in threads:
                t.start()
            for t in threads:
                t.join(90)
            assert not any(t.is_alive() for t in threads), "the match over TLS did not end"
            assert sum(r.stats.matches_won for r in runners) == 1
            assert all(r.stats.turns > 0 for r in runners)
            with open_channel(server.address, ca=cert) as channel:
                got = match_pb2.GetMatchRequest(match_id=m.id)
                from bummerl.v1 import match_pb2_grpc

                reply = match_pb2_grpc.MatchServiceStub(channel).GetMatch(got, timeout=10)
                assert reply.match.state == match_pb2.MATCH_STATE_FINISHED
                # a wrong token is refused without being echoed or logged
                with pytest.raises(grpc.RpcError) as info:
                    match_pb2_grpc.MatchServiceStub(channel).GetObservation(
                        match_pb2.GetObservationRequest(match_id=m.id, seat=0),
                        metadata=auth("wrong-secret-token"), timeout=10)
                assert "wrong-secret-token" not in info.value.details()
            # clear text to a TLS port does not get through
            with grpc.insecure_channel(server.address) as channel:
                with pytest.raises(grpc.RpcError) as info:
                    match_pb2_grpc.MatchServiceStub(channel).GetMatch(got, timeout=5)
                assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            server.stop(grace=0)
            sessions.kw["bind"].dispose()
    logged = caplog.text
    assert "t0" in logged or "playing as" in logged  # the logs were captured at all
    for secret in [*tokens, "wrong-secret-token", OPERATOR]:
        assert secret not in logged


def test_serve_and_the_cli_over_tls(tmp_path, certificate):
    """`bummerl serve` with BUMMERL_TLS_CERT/KEY; `bummerl bot register` and `bummerl admin`
    with --tls --ca; neither the operator token nor a bot token shows in the server's output."""
    cert, key = certificate
    address = f"127.0.0.1:{free_port()}"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'tls.sqlite3'}",
           "BUMMERL_OPERATOR_TOKEN": "op-secret-xyz", "BUMMERL_HOOKS": "",
           "BUMMERL_TLS_CERT": str(cert), "BUMMERL_TLS_KEY": str(key),
           "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen([sys.executable, "-m", "cli.main", "serve", "--address", address],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    def bummerl(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "cli.main", *args, "--server", address],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)

    try:
        with open_channel(address, ca=cert) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
        done = bummerl("bot", "register", "tls-bot", "--tls", "--ca", str(cert))
        assert done.returncode == 0, done.stderr
        token = re.search(r"token (\S+)", done.stdout).group(1)
        done = bummerl("admin", "bots", "--ca", str(cert))
        assert done.returncode == 0, done.stderr
        assert "tls-bot" in done.stdout
        done = bummerl("admin", "bots")  # clear text to a TLS server fails, clearly
        assert done.returncode == 1 and "is unavailable" in done.stderr, done.stderr
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert "TLS" in output
    assert "op-secret-xyz" not in output and token not in output
