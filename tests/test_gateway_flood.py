"""The gateway under a flood: per-address limits over loopback, the back-off's
arithmetic on a clock the test sets.

Two loopback addresses stand for two peers: the stranger knocks from
127.0.0.2, the honest entrant from 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest
import trio
from test_gateway import MAX_LINE, TOKEN, WAIT, auth, refused
from trio_websocket import (
    ConnectionRejected,
    WebSocketConnection,
    open_websocket_url,
    wrap_client_stream,
)

from arena.engine.gateway import Gateway, Knocks, peer_key
from arena.protocol.remote import GATEWAY_PATH, REFUSED, decode_welcome
from arena.web.app import Site
from arena.web.server import Listen, serve

STRANGER = "127.0.0.2"
WRONG = auth(token="wrong-token-0123456789")


# The back-off's arithmetic (times are whatever the caller says they are).


def test_two_wrong_tokens_are_free_then_the_bar_doubles_up_to_its_most() -> None:
    knocks = Knocks(free=2, first=0.5, most=4.0, memory=60.0)
    assert [knocks.wrong("a", 0.0), knocks.wrong("a", 1.0)] == [0.0, 0.0]
    assert knocks.barred("a", 1.0) == 0.0
    bars = []
    now = 2.0
    for _ in range(6):
        bars.append(knocks.wrong("a", now))
        assert knocks.barred("a", now) == bars[-1]
        now += bars[-1]  # it knocks again as soon as the bar ends
        assert knocks.barred("a", now) == 0.0
    assert bars == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert knocks.barred("b", now) == 0.0  # another address is not barred


def test_an_address_quiet_for_the_memory_starts_afresh() -> None:
    knocks = Knocks(free=1, first=0.5, most=8.0, memory=60.0)
    assert [knocks.wrong("a", t) for t in (0.0, 1.0, 2.0)] == [0.0, 0.5, 1.0]
    assert knocks.wrong("a", 3.0 + 60.0) == 0.0  # forgiven: a free strike again
    assert knocks.wrong("a", 64.0) == 0.5


def test_the_addresses_remembered_are_bounded() -> None:
    knocks = Knocks(free=0, first=1.0, memory=10.0, addresses=3)
    for i in range(10):
        knocks.wrong(f"10.0.0.{i}", 0.0)
    assert [knocks.barred(f"10.0.0.{i}", 0.5) for i in range(10)] == [0.0] * 7 + [0.5] * 3
    assert knocks.wrong("late", 100.0) == 1.0  # the old ones expired: they go first
    assert [knocks.barred(f"10.0.0.{i}", 100.0) for i in range(10)] == [0.0] * 10
    assert knocks.barred("late", 100.0) == 1.0


# Over loopback.


@pytest.fixture
async def served(nursery: trio.Nursery) -> AsyncIterator[tuple[Gateway, str]]:
    gateway = Gateway(
        {"far": TOKEN.encode()},
        max_line=MAX_LINE,
        leeway=0.05,
        auth_timeout=WAIT,
        max_waiting=3,
        knocks=Knocks(per_address=2, free=2, first=60.0),
        hold=0.0,
    )
    url = await nursery.start(
        lambda task_status: serve(
            Site({}), Listen("127.0.0.1", 0, None), gateway=gateway, task_status=task_status
        )
    )
    yield gateway, url.replace("http://", "ws://") + GATEWAY_PATH


async def from_stranger(nursery: trio.Nursery, url: str) -> WebSocketConnection:
    """A WebSocket connection to ``url`` from 127.0.0.2."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    sock = trio.socket.socket()
    await sock.bind((STRANGER, 0))
    await sock.connect((parts.hostname, parts.port))
    stream = trio.SocketStream(sock)
    return await wrap_client_stream(nursery, stream, parts.hostname, parts.path)


async def rejected(nursery: trio.Nursery, url: str) -> tuple[int, str]:
    """The HTTP status and body line a stranger's connection is turned away with."""
    with trio.fail_after(WAIT), pytest.raises(BaseExceptionGroup) as info:
        async with trio.open_nursery() as own:  # the handshake's task raises it there too
            await from_stranger(own, url)
    match, _ = info.value.split(ConnectionRejected)
    assert match is not None
    while isinstance(match, BaseExceptionGroup):
        match = match.exceptions[0]
    assert isinstance(match, ConnectionRejected)
    body = (match.body or b"").decode()
    assert "\n" not in body
    return match.status_code, body


async def welcomed(url: str) -> None:
    """The honest entrant, from 127.0.0.1, is let in (one try)."""
    with trio.fail_after(WAIT):
        async with open_websocket_url(url) as ws:
            await ws.send_message(auth())
            assert decode_welcome(await ws.get_message()).name == "far"


async def test_an_address_with_too_many_authenticating_is_turned_away_before_the_handshake(
    served: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    gateway, url = served
    silent = [await from_stranger(nursery, url) for _ in range(2)]
    assert gateway.knocks.waiting == {STRANGER: 2}
    status, line = await rejected(nursery, url)
    assert (status, line) == (
        429,
        "arena: too many connections from your address are authenticating",
    )
    await welcomed(url)  # another address still has the global cap's last place
    for ws in silent:
        await ws.aclose()


async def test_an_address_past_its_free_wrong_tokens_is_barred_before_the_handshake(
    served: tuple[Gateway, str], nursery: trio.Nursery
) -> None:
    gateway, url = served
    for _ in range(3):  # the first ones are told why, in a close frame
        ws = await from_stranger(nursery, url)
        await ws.send_message(WRONG)
        code, reason = await refused(ws)
        assert (code, reason) == (REFUSED, "arena: no remote entrant of that name with that token")
    status, line = await rejected(nursery, url)
    assert status == 429
    assert line.startswith("arena: a wrong token from your address; try again in ")
    await welcomed(url)  # only that address is barred


async def test_an_honest_entrant_gets_in_under_a_flood_from_another_address(
    served: tuple[Gateway, str],
) -> None:
    """Strangers keep the global cap's places (silent sockets) and knock with wrong
    tokens from one address; the entrant still gets in, at its first try."""
    gateway, url = served
    knocked = 0
    under_way = trio.Event()

    async def knock(message: str | None) -> None:
        nonlocal knocked
        while True:
            try:
                async with trio.open_nursery() as own:
                    ws = await from_stranger(own, url)
                    if message is None:
                        await trio.sleep_forever()
                    await ws.send_message(message)
                    await ws.get_message()
                    own.cancel_scope.cancel()
            except* Exception:  # turned away, closed, broken: knock again
                pass
            knocked += 1
            if knocked >= 50:
                under_way.set()
            await trio.lowlevel.checkpoint()

    async with trio.open_nursery() as flood:
        for i in range(20):
            flood.start_soon(knock, None if i < 4 else WRONG)
        with trio.fail_after(WAIT):
            await under_way.wait()
        assert gateway.waiting <= 2  # all the strangers' address may hold
        await welcomed(url)
        flood.cancel_scope.cancel()


async def test_a_refused_or_turned_away_connection_waits_for_its_answer(
    nursery: trio.Nursery,
) -> None:
    """A flooder waiting for its answers knocks no more than once a ``hold``."""
    hold = 0.3
    gateway = Gateway(
        {"far": TOKEN.encode()},
        max_line=MAX_LINE,
        leeway=0.05,
        knocks=Knocks(free=0, first=60.0),
        hold=hold,
    )
    url = await nursery.start(
        lambda task_status: serve(
            Site({}), Listen("127.0.0.1", 0, None), gateway=gateway, task_status=task_status
        )
    )
    url = url.replace("http://", "ws://") + GATEWAY_PATH
    ws = await from_stranger(nursery, url)
    start = trio.current_time()
    await ws.send_message(WRONG)
    assert (await refused(ws))[0] == REFUSED  # told after the hold too, then barred
    assert trio.current_time() - start >= hold and gateway.waiting == 0
    start = trio.current_time()
    status, _ = await rejected(nursery, url)
    assert status == 429 and trio.current_time() - start >= hold
    assert gateway.held == 0


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("192.0.2.1", "192.0.2.1"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("::1", "::/64"),
        ("not an address", "not an address"),
        (None, None),
    ],
)
def test_a_peer_is_counted_by_its_address_or_its_ipv6_64(host: str | None, key: str | None) -> None:
    assert peer_key(host) == key
