"""TLS served by the arena itself (``--tls-cert``/``--tls-key``) and trusted by
``arena connect`` (``--cafile``): real connections over loopback, with a CA and a
certificate for 127.0.0.1 made by trustme for each test."""

from __future__ import annotations

import os
import re
import sqlite3
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import trio
import trustme
from test_remote_run import ARENA, TOKEN, TOURNAMENT, WAIT, read_until

from arena.engine.gateway import Gateway
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
    """Its token's cookie is then sent over TLS only (``Secure``)."""
    listen = parse_listen("127.0.0.1:0", "s3cret", cert=str(pki.cert), key=str(pki.key))
    url: str = await nursery.start(serve, Site({}), listen)
    assert url.startswith("https://127.0.0.1:")
    async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=pki.ca)) as web:
        page = await web.get(url + "/?token=s3cret")
    assert page.status_code == 200 and "tournaments" in page.text.lower()
    cookie = page.headers["set-cookie"]
    assert cookie.startswith("arena_token=s3cret;") and "; Secure" in cookie, cookie
    context = ssl.create_default_context(cafile=pki.ca)
    context.set_alpn_protocols(["h2", "http/1.1"])  # as a browser offers
    stream = await trio.open_ssl_over_tcp_stream(
        "127.0.0.1", int(url.rsplit(":", 1)[1]), ssl_context=context
    )
    await stream.do_handshake()
    assert stream.selected_alpn_protocol() == "http/1.1"  # SEND_TIMEOUT bounds its sends
    await stream.aclose()
    async with httpx.AsyncClient() as web:  # the system's store does not know the CA
        with pytest.raises(httpx.ConnectError) as refused:
            await web.get(url + "/")
    cause = refused.value.__cause__
    while cause is not None and not isinstance(cause, ssl.SSLCertVerificationError):
        cause = cause.__cause__ or cause.__context__
    assert cause is not None, refused.value


async def test_a_tournament_over_tls_stores_every_game_and_serves_its_view(
    tmp_path: Path, pki: Pki
) -> None:
    """``arena run --web --tls-cert --tls-key`` prints https:// addresses; a real
    ``arena connect https://... --cafile`` plays the remote entrant's games, and the
    live view answers over HTTPS to a client trusting the CA."""
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    env = {**os.environ, "FAR_TOKEN": TOKEN}
    run = await trio.lowlevel.open_process(
        [*ARENA, "run", "t.toml", "--web", "127.0.0.1:0", "--quiet", "--workers", "1"]
        + ["--tls-cert", str(pki.cert), "--tls-key", str(pki.key)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    connect = None
    try:
        seen = bytearray()
        with trio.fail_after(WAIT):
            match = await read_until(
                run.stderr,
                r"web view: (https://127\.0\.0\.1:\d+)/live \(remote entrants: "
                r"arena connect (https://127\.0\.0\.1:\d+) --name NAME\)",
                seen,
            )
        assert match[1] == match[2]
        async with httpx.AsyncClient(verify=ssl.create_default_context(cafile=pki.ca)) as web:
            page = await web.get(match[1] + "/live")
        assert page.status_code == 200 and "mixed" in page.text
        connect = await trio.lowlevel.open_process(
            [*ARENA, "connect", match[2], "--name", "far", "--cafile", str(pki.ca)]
            + ["--", "random", "--seed", "3"],
            env=env | {"ARENA_TOKEN": TOKEN},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        with trio.fail_after(WAIT):
            assert await run.wait() == 0, seen.decode()
            assert await connect.wait() == 0
            said = bytearray()
            await read_until(connect.stdout, r"the arena ended the run", said)
    finally:
        for process in (run, connect):
            if process is not None and process.returncode is None:
                process.kill()
    assert f"connected to wss://127.0.0.1:{match[2].rsplit(':', 1)[1]}/bots/connect as far" in (
        said.decode()
    )
    with sqlite3.connect(tmp_path / "results" / "mixed" / "games.sqlite") as db:
        rows = db.execute("SELECT key, reason FROM games").fetchall()
    assert len(rows) == 12 and sum("far" in key for key, _ in rows) == 6
    assert all(
        reason not in ("crash", "time", "protocol", "disconnect", "start") for _, reason in rows
    )


@pytest.fixture
async def tls_arena(nursery: trio.Nursery, pki: Pki) -> str:
    """A gateway for ``far`` served over HTTPS with ``pki``'s certificate: its address."""
    gateway = Gateway({"far": TOKEN.encode()}, max_line=1 << 20, leeway=0.05)
    listen = parse_listen("127.0.0.1:0", cert=str(pki.cert), key=str(pki.key))
    url: str = await nursery.start(
        lambda task_status: serve(Site({}), listen, gateway=gateway, task_status=task_status)
    )
    return url


async def connect_output(url: str, *options: str, env: dict[str, str] | None = None) -> str:
    """``arena connect URL --name far ...`` until it ends (it must, non-zero): its output."""
    done = await trio.run_process(
        [*ARENA, "connect", url, "--name", "far", "--token", TOKEN, *options]
        + ["--sandbox", "none", "--max-backoff", "1", "--", "random"],
        capture_stdout=True,
        stderr=subprocess.STDOUT,
        check=False,
        env=env,
    )
    assert done.returncode == 1, done.stdout
    return str(done.stdout.decode())


async def test_a_client_not_trusting_the_certificate_stops_in_one_line(
    tls_arena: str, tmp_path: Path
) -> None:
    """Not a drop another try could cure: no reconnecting, one line, status 1 (and
    the same for a CA given that did not sign it)."""
    assert tls_arena.startswith("https://127.0.0.1:")
    with trio.fail_after(ENDS):
        out = await connect_output(tls_arena)
    assert out.splitlines() == [
        "arena: error: the arena's certificate is not trusted here (unable to get local "
        "issuer certificate); --cafile FILE trusts the CA that signed it, or a self-signed one"
    ]
    other = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(other))
    with trio.fail_after(ENDS):
        out = await connect_output(tls_arena, "--cafile", str(other))
    assert out.splitlines()[-1].startswith("arena: error: the arena's certificate is not trusted")


async def test_ssl_cert_file_is_trusted_as_the_system_store(
    tls_arena: str, pki: Pki, nursery: trio.Nursery
) -> None:
    """Without ``--cafile``, the system's store, which ``SSL_CERT_FILE`` replaces."""
    process: trio.Process = await nursery.start(
        lambda task_status: trio.run_process(
            [*ARENA, "connect", tls_arena, "--name", "far", "--token", TOKEN]
            + ["--sandbox", "none", "--", "random"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
            env={**os.environ, "SSL_CERT_FILE": str(pki.ca)},
            task_status=task_status,
        )
    )
    assert process.stdout is not None
    with trio.fail_after(WAIT):
        await read_until(process.stdout, r"connected to wss://127\.0\.0\.1:\d+/", bytearray())
    process.kill()


async def test_https_to_a_plain_arena_and_a_bad_cafile_are_one_line(
    nursery: trio.Nursery, tmp_path: Path
) -> None:
    gateway = Gateway({"far": TOKEN.encode()}, max_line=1 << 20, leeway=0.05)
    listen = parse_listen("127.0.0.1:0")
    url: str = await nursery.start(
        lambda task_status: serve(Site({}), listen, gateway=gateway, task_status=task_status)
    )
    https = url.replace("http://", "https://")
    with trio.fail_after(ENDS):
        out = await connect_output(https)
    port = https.rsplit(":", 1)[1]
    assert out.splitlines() == [
        f"arena: error: no TLS at 127.0.0.1:{port} (wrong version number); is the address http://?"
    ]
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    with trio.fail_after(ENDS):
        out = await connect_output(https, "--cafile", str(junk))
    assert out.splitlines() == [f"arena: error: --cafile {junk}: no PEM certificate in it"]
    with trio.fail_after(ENDS):
        out = await connect_output(url, "--cafile", str(junk))
    assert out.splitlines() == ["arena: error: --cafile is for an https:// address"]
