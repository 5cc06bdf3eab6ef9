"""The gateway behind a reverse proxy (``--trust-proxy``), over loopback.

The test client plays the proxy: it connects from 127.0.0.1 (or, as a stranger,
from 127.0.0.2) and writes ``X-Forwarded-For`` as nginx would. Trusted, each
forwarded address has its own limits; untrusted, the header changes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trio
from test_gateway import MAX_LINE, TOKEN, WAIT, auth, refused
from trio_websocket import (
    ConnectionRejected,
    WebSocketConnection,
    wrap_client_stream,
)

from arena.engine.gateway import Gateway, Knocks
from arena.protocol.remote import GATEWAY_PATH, REFUSED, decode_welcome
from arena.web.app import Site
from arena.web.proxy import parse_proxies
from arena.web.server import Listen, base_url, parse_listen, serve, url_for

PROXY = "127.0.0.1"
STRANGER = "127.0.0.2"
FLOODER, AUTHOR = "198.51.100.1", "203.0.113.7"
WRONG = auth(token="wrong-token-0123456789")


async def start(nursery: trio.Nursery, trust: list[str]) -> tuple[Gateway, str]:
    gateway = Gateway(
        {"far": TOKEN.encode()},
        max_line=MAX_LINE,
        leeway=0.05,
        auth_timeout=WAIT,
        max_waiting=8,
        knocks=Knocks(per_address=2, free=2, first=60.0),
        hold=0.0,
    )
    listen = Listen("127.0.0.1", 0, None, parse_proxies(trust))
    url = await nursery.start(
        lambda task_status: serve(Site({}), listen, gateway=gateway, task_status=task_status)
    )
    return gateway, url.replace("http://", "ws://") + GATEWAY_PATH


@pytest.fixture
async def trusted(nursery: trio.Nursery) -> AsyncIterator[tuple[Gateway, str]]:
    yield await start(nursery, [PROXY])


@pytest.fixture
async def untrusted(nursery: trio.Nursery) -> AsyncIterator[tuple[Gateway, str]]:
    yield await start(nursery, ["10.9.9.9/32"])


async def forwarded(
    nursery: trio.Nursery, url: str, header: str | None, source: str = PROXY
) -> WebSocketConnection:
    """A WebSocket connection to ``url`` from ``source``, saying ``X-Forwarded-For: header``."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    sock = trio.socket.socket()
    await sock.bind((source, 0))
    await sock.connect((parts.hostname, parts.port))
    extra = [] if header is None else [(b"X-Forwarded-For", header.encode("latin-1"))]
    return await wrap_client_stream(
        nursery, trio.SocketStream(sock), parts.hostname, parts.path, extra_headers=extra
    )


async def rejected(url: str, header: str | None, source: str = PROXY) -> tuple[int, str]:
    """The HTTP status and line a connection is turned away with before the handshake."""
    with trio.fail_after(WAIT), pytest.raises(BaseExceptionGroup) as info:
        async with trio.open_nursery() as own:
            await forwarded(own, url, header, source)
    match, _ = info.value.split(ConnectionRejected)
    assert match is not None
    while isinstance(match, BaseExceptionGroup):
        match = match.exceptions[0]
    assert isinstance(match, ConnectionRejected)
    return match.status_code, (match.body or b"").decode()


async def welcomed(url: str, header: str) -> None:
    """An author forwarded as ``header`` gets in at its first try."""
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as own:
            ws = await forwarded(own, url, header)
            await ws.send_message(auth())
            assert decode_welcome(await ws.get_message()).name == "far"
            await ws.aclose()


async def wrong_tokens(nursery: trio.Nursery, url: str, header: str, source: str = PROXY) -> None:
    """The free wrong tokens and the one that bars, each refused in a close frame."""
    for _ in range(3):
        ws = await forwarded(nursery, url, header, source)
        await ws.send_message(WRONG)
        assert (await refused(ws))[0] == REFUSED


async def test_an_ipv6_flooder_cannot_rotate_through_its_64(
    trusted: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    """Wrong tokens from one address of a /64 bar the whole /64 (a flooder there owns
    2^64 addresses), not the next /64."""
    gateway, url = trusted
    await wrong_tokens(nursery, url, "2001:db8:1:2::1")
    status, line = await rejected(url, "2001:db8:1:2:ffff:ffff:ffff:ffff")
    assert status == 429 and line.startswith("arena: a wrong token from your address")
    await welcomed(url, "2001:db8:1:3::1")


async def test_behind_a_trusted_proxy_a_barred_author_does_not_bar_the_others(
    trusted: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    gateway, url = trusted
    await wrong_tokens(nursery, url, FLOODER)
    now = trio.current_time()
    assert gateway.knocks.barred(FLOODER, now) > 0 and gateway.knocks.barred(PROXY, now) == 0
    status, line = await rejected(url, FLOODER)
    assert status == 429 and line.startswith("arena: a wrong token from your address")
    # nginx: what the flooder wrote itself, then the address nginx saw
    assert (await rejected(url, f"{AUTHOR}, {FLOODER}"))[0] == 429
    await welcomed(url, AUTHOR)  # through the same proxy, at its first try


async def test_behind_a_trusted_proxy_authors_authenticating_at_once_are_counted_apart(
    trusted: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    gateway, url = trusted
    silent = [await forwarded(nursery, url, FLOODER) for _ in range(2)]
    assert gateway.knocks.waiting == {FLOODER: 2}
    status, line = await rejected(url, FLOODER)
    assert (status, line) == (
        429,
        "arena: too many connections from your address are authenticating",
    )
    waiting = [await forwarded(nursery, url, f"[2001:db8:0:{i}::1]:4711") for i in (1, 2)]
    assert gateway.knocks.waiting == {
        FLOODER: 2,
        "2001:db8:0:1::/64": 1,
        "2001:db8:0:2::/64": 1,
    }
    await welcomed(url, AUTHOR)
    for ws in silent + waiting:
        await ws.aclose()


async def test_from_an_untrusted_peer_the_header_does_not_lift_its_bar(
    untrusted: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    """A stranger naming a new address in each knock is still one address, barred."""
    gateway, url = untrusted
    for i in range(3):
        ws = await forwarded(nursery, url, f"192.0.2.{i}", STRANGER)
        await ws.send_message(WRONG)
        assert (await refused(ws))[0] == REFUSED
    assert gateway.knocks.barred(STRANGER, trio.current_time()) > 0
    for header in ("192.0.2.99", AUTHOR, PROXY, None):
        assert (await rejected(url, header, STRANGER))[0] == 429
    silent = [await forwarded(nursery, url, f"192.0.2.{i}", PROXY) for i in (1, 2)]
    assert gateway.knocks.waiting == {PROXY: 2}  # the header from 127.0.0.1 is ignored too
    for ws in silent:
        await ws.aclose()


@pytest.mark.parametrize("header", ["garbage", "203.0.113.7, unknown", ""])
async def test_a_malformed_header_from_the_trusted_proxy_counts_as_the_proxy(
    trusted: tuple[Gateway, str], nursery: trio.Nursery, header: str
) -> None:
    gateway, url = trusted
    silent = [await forwarded(nursery, url, header) for _ in range(2)]
    assert gateway.knocks.waiting == {PROXY: 2}
    assert (await rejected(url, header))[0] == 429  # crowded as the proxy: still served
    await welcomed(url, AUTHOR)
    for ws in silent:
        await ws.aclose()


# What the arena prints behind a proxy.


def test_behind_a_proxy_the_view_wants_a_token_and_the_public_address_is_printed() -> None:
    assert parse_listen("127.0.0.1:0").token is None
    assert parse_listen("127.0.0.1:0", trust=["127.0.0.1"]).token  # reached from afar
    listen = parse_listen("127.0.0.1:0", "s3cret", public="https://arena.example/cup/")
    bound = "http://127.0.0.1:8080"
    assert url_for(bound, listen, "/live") == "https://arena.example/cup/live?token=s3cret"
    assert base_url(bound, listen) == "https://arena.example/cup"
    assert base_url(bound, parse_listen("127.0.0.1:0")) == bound
    for bad in ("arena.example", "ftp://arena.example", "https://x/?a=1", "https://u@x/"):
        with pytest.raises(ValueError, match="--public-url") as info:
            parse_listen("127.0.0.1:0", public=bad)
        assert "\n" not in str(info.value)


TOURNAMENT = """
name = "cup"
game = "kamisado"
variant = "single"

[remote]
connect_timeout = 1

[[bots]]
name = "near"
command = "builtin:random"

[[bots]]
name = "far"
remote = true
token_env = "FAR_TOKEN"
"""


def test_arena_run_prints_the_public_address_and_checks_the_options(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    env = {**os.environ, "FAR_TOKEN": TOKEN}
    arena = [sys.executable, "-m", "arena.cli", "run", "t.toml", "--quiet", "--no-report"]

    def run(*options: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*arena, *options], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
        )

    done = run(
        "--web",
        "127.0.0.1:0",
        "--trust-proxy",
        "127.0.0.1",
        "--public-url",
        "https://a.example/cup/",
    )
    first = done.stderr.splitlines()[0]
    assert first.startswith("web view: https://a.example/cup/live?token="), done.stderr
    assert first.endswith("(remote entrants: arena connect https://a.example/cup --name NAME)")
    done = run("--trust-proxy", "127.0.0.1")
    assert done.returncode != 0
    assert done.stderr.strip() == "arena: error: --trust-proxy is for --web"
    done = run("--web", "127.0.0.1:0", "--trust-proxy", "proxy.example")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "arena: error: --trust-proxy 'proxy.example': not an IP address or network "
        "('proxy.example' does not appear to be an IPv4 or IPv6 network)"
    ]
