"""TLS served by the arena itself (``--tls-cert``/``--tls-key``): real
connections over loopback, with a CA and a certificate for 127.0.0.1 made by
trustme for each test."""

from __future__ import annotations

import os
import re
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import trio
import trustme
from test_remote_run import ARENA, TOKEN, TOURNAMENT, WAIT

from arena.web.app import Site
from arena.web.server import load_tls, parse_listen, serve

ENDS = 30.0
"""Seconds an ``arena connect`` that must stop at once is given (a retrying one never ends)."""


@dataclass(frozen=True)
class Pki:
    ca: Path
    """The CA's certificate, which a client is given to trust."""
    cert: Path
    """The server's certificate for 127.0.0.1 and localhost, its chain after it."""
    key: Path


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1", "localhost")
    paths = Pki(tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem")
    ca.cert_pem.write_to_path(str(paths.ca))
    paths.cert.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
    issued.private_key_pem.write_to_path(str(paths.key))
    return paths


def test_bad_certificate_or_key_files_are_one_line_each(pki: Pki, tmp_path: Path) -> None:
    other = tmp_path / "other-key.pem"
    trustme.CA().issue_cert("127.0.0.1").private_key_pem.write_to_path(str(other))
    encrypted = tmp_path / "encrypted.pem"
    subprocess.run(
        ["openssl", "pkey", "-in", pki.key, "-aes256", "-passout", "pass:x", "-out", encrypted],
        check=True,
    )
    cert, key, missing = str(pki.cert), str(pki.key), str(tmp_path / "missing.pem")
    assert load_tls(None, None) is None
    assert load_tls(cert, key) is not None
    cases = {
        (missing, key): f"--tls-cert {missing}: cannot read it (No such file or directory)",
        (cert, missing): f"--tls-key {missing}: cannot read it (No such file or directory)",
        (key, cert): f"--tls-cert {key}: not a PEM certificate",
        (cert, cert): f"--tls-key {cert}: not a PEM private key",
        (cert, str(other)): f"--tls-key {other} is not the key of --tls-cert {cert}",
        (cert, str(encrypted)): f"--tls-key {encrypted}: the key is encrypted; give it decrypted",
        (cert, None): "--tls-cert and --tls-key go together (a certificate and its key)",
    }
    for (c, k), line in cases.items():
        with pytest.raises(ValueError) as raised:
            load_tls(c, k)
        assert str(raised.value) == line


def test_a_bad_key_stops_the_run_in_one_line_before_any_game(pki: Pki, tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    missing = tmp_path / "nope.pem"
    done = subprocess.run(
        [*ARENA, "run", "t.toml", "--web", "127.0.0.1:0", "--quiet", "--tls-cert", pki.cert]
        + ["--tls-key", missing],
        cwd=tmp_path,
        env={**os.environ, "FAR_TOKEN": TOKEN},
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode != 0
    assert done.stderr.splitlines()[-1] == (
        f"arena: error: --tls-key {missing}: cannot read it (No such file or directory)"
    ), done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "results").exists()
    done = subprocess.run(  # arena serve: the same options, the same check
        [*ARENA, "serve", str(tmp_path), "--listen", "127.0.0.1:0", "--tls-cert", pki.cert]
        + ["--tls-key", missing],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode != 0 and done.stderr.splitlines() == [
        f"arena: error: --tls-key {missing}: cannot read it (No such file or directory)"
    ]


def test_check_bot_listen_serves_its_gateway_over_tls(pki: Pki) -> None:
    """``arena check-bot --listen`` takes the same options, and prints the https:// address."""
    done = subprocess.run(
        [*ARENA, "check-bot", "--listen", "127.0.0.1:0", "--name", "far", "--wait", "0.5"]
        + ["--tls-cert", str(pki.cert), "--tls-key", str(pki.key)],
        capture_output=True,
        text=True,
        timeout=WAIT,
        env={**os.environ, "ARENA_TOKEN": TOKEN},
    )
    assert done.returncode == 1
    assert re.search(r"arena connect https://127\.0\.0\.1:\d+ --name far", done.stdout), done.stdout
    assert "nobody connected as far within 0.5 s" in done.stdout


async def test_the_web_view_is_served_over_https(pki: Pki, nursery: trio.Nursery) -> None:
    listen = parse_listen("127.0.0.1:0", cert=str(pki.cert), key=str(pki.key))
    url: str = await nursery.start(serve, Site({}), listen)
    assert url.startswith("https://127.0.0.1:")
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=pki.ca)) as web:
        page = await web.get(url + "/")
    assert page.status_code == 200 and "tournaments" in page.text.lower()
    async with httpx.AsyncClient() as web:  # the system's store does not know the CA
        with pytest.raises(httpx.ConnectError) as refused:
            await web.get(url + "/")
    cause = refused.value.__cause__
    while cause is not None and not isinstance(cause, ssl.SSLCertVerificationError):
        cause = cause.__cause__ or cause.__context__
    assert cause is not None, refused.value
