"""Client certificates (mutual TLS) from the config's tls keys, against tls_server.py
asking for a certificate signed by a CA made here with the openssl tool."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, Tuple

import pytest

import netlayer

TLS_SERVER = Path(__file__).resolve().parents[3] / "Tests" / "server" / "tls_server.py"
PASSWORD = "py-s3same"


def _openssl(directory: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)


@pytest.fixture(scope="module")
def mutual(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[str, Path]]:
    """(https base URL of a server that asks for a client certificate, folder of the files)."""
    d = tmp_path_factory.mktemp("mtls")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    _openssl(d, "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Py CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    (d / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, cn in (("server", "localhost"), ("client", "py-client")):
        _openssl(d, "req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
        extra = ["-extfile", "server.ext"] if name == "server" else []
        _openssl(d, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                 "-days", "2", "-out", f"{name}.pem", *extra)
    _openssl(d, "pkey", "-in", "client.key", "-aes256", "-passout", f"pass:{PASSWORD}", "-out", "client-enc.key")
    port_file = d / "port"
    process = subprocess.Popen(
        [sys.executable, str(TLS_SERVER), "--cert", str(d / "server.pem"), "--key", str(d / "server.key"),
         "--client-ca", str(d / "ca.pem"), "--port-file", str(port_file), "--exit-on-stdin-eof"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not port_file.exists():
            assert process.poll() is None and time.monotonic() < deadline, "tls_server.py did not start"
            time.sleep(0.02)
        yield f"https://127.0.0.1:{int(port_file.read_text())}/", d
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=5)


def test_a_client_certificate_opens_the_server(mutual: Tuple[str, Path]) -> None:
    url, d = mutual
    tls = {"caFile": str(d / "ca.pem"), "certFile": str(d / "client.pem"), "keyFile": str(d / "client-enc.key"),
           "keyPassword": PASSWORD}
    with netlayer.Client({"baseURL": url, "tls": tls}, timeout=10) as client:
        assert client.get("json").value["clientCN"] == "py-client"
    with netlayer.Client({"baseURL": url, "tls": {"caFile": str(d / "ca.pem")}}, timeout=10) as client:
        with pytest.raises(netlayer.Error):  # TLSError, or a send error when the server's close wins the race
            client.get("json")


def test_an_unreadable_certificate_is_refused_when_the_client_is_made(mutual: Tuple[str, Path]) -> None:
    url, d = mutual
    with pytest.raises(netlayer.InvalidRequestError, match="certFile"):
        netlayer.Client({"baseURL": url, "tls": {"certFile": str(d / "missing.pem")}})
