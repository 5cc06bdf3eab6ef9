"""The remote bots' gateway over loopback, with real WebSocket connections.

Every refusal is a close frame with one readable line: a wrong token, a second
connection for an entry, an oversized frame, a silent socket, a flood.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import trio
from trio_websocket import ConnectionClosed, WebSocketConnection, open_websocket_url

from arena.engine.gateway import Gateway, Presence, presence_lines
from arena.protocol.messages import (
    ClockInfo,
    EndOfStream,
    Go,
    LineTooLong,
    decode_arena_message,
    encode_line,
)
from arena.protocol.remote import (
    BAD_AUTH,
    BINARY,
    BUSY,
    ENDING,
    GATEWAY_PATH,
    REFUSED,
    RESTART,
    TAKEN,
    TOO_BIG,
    TOO_SLOW,
    Auth,
    decode_welcome,
    rtt_id,
)
from arena.web.app import Site
from arena.web.server import Listen, serve

TOKEN = "far-token-0123456789"
MAX_LINE = 1 << 16
WAIT = 10.0
"""Seconds any step may take before the test fails instead of hanging."""


@pytest.fixture
async def served(nursery: trio.Nursery) -> AsyncIterator[tuple[Gateway, str]]:
    gateway = Gateway(
        {"far": TOKEN.encode(), "other": b"other-token-0123456789"},
        max_line=MAX_LINE,
        leeway=0.05,
        auth_timeout=0.5,
        max_waiting=3,
    )
    url = await nursery.start(
        lambda task_status: serve(
            Site({}), Listen("127.0.0.1", 0, None), gateway=gateway, task_status=task_status
        )
    )
    yield gateway, url.replace("http://", "ws://") + GATEWAY_PATH


def auth(name: str = "far", token: str = TOKEN) -> str:
    return f'{{"type":"auth","name":"{name}","token":"{token}"}}'


async def next_line(ws: WebSocketConnection) -> str | bytes:
    """The next frame that is not a round-trip probe (each probe echoed, as
    ``arena connect`` does)."""
    while True:
        frame = await ws.get_message()
        if isinstance(frame, str) and rtt_id(frame) is not None:
            await ws.send_message(frame)
            continue
        return frame


async def refused(ws: WebSocketConnection) -> tuple[int, str]:
    """The close code and reason the gateway ends ``ws`` with."""
    with trio.fail_after(WAIT), pytest.raises(ConnectionClosed) as info:
        while True:
            await ws.get_message()
    reason = info.value.reason
    assert reason.reason is not None and "\n" not in reason.reason
    return reason.code, reason.reason


async def test_an_entrant_connects_and_lines_flow_both_ways(served: tuple[Gateway, str]) -> None:
    gateway, url = served
    async with open_websocket_url(url) as ws:
        await ws.send_message(auth())
        with trio.fail_after(WAIT):
            welcome = decode_welcome(await ws.get_message())
            link = await gateway.connection("far", trio.current_time() + WAIT)
        assert welcome.name == "far" and welcome.max_line == MAX_LINE and welcome.leeway_ms == 50
        assert link is not None and link.leeway == 0.05
        with trio.fail_after(WAIT):
            await link.send(b'{"type":"ping","id":7}\n')
            assert await next_line(ws) == '{"type":"ping","id":7}'
            await ws.send_message('{"type":"pong","id":7}')
            assert await link.receive() == b'{"type":"pong","id":7}'
    with trio.fail_after(WAIT):
        await link.ended.wait()
    with pytest.raises(EndOfStream):
        await link.receive()
    with pytest.raises(trio.BrokenResourceError):
        await link.send(b"{}\n")
    fault = link.end_fault()
    assert fault.reason == "disconnect" and "connection lost" in str(fault)
    assert gateway.current("far") is None


async def test_a_wrong_token_or_an_unknown_name_is_refused_alike(
    served: tuple[Gateway, str],
) -> None:
    gateway, url = served
    for message in (auth(token="wrong-token-0123456789"), auth(name="nobody")):
        async with open_websocket_url(url) as ws:
            await ws.send_message(message)
            code, reason = await refused(ws)
        assert (code, reason) == (REFUSED, "arena: no remote entrant of that name with that token")
    assert gateway.current("far") is None


async def test_a_second_connection_for_an_entrant_is_refused(served: tuple[Gateway, str]) -> None:
    gateway, url = served
    async with open_websocket_url(url) as first:
        await first.send_message(auth())
        with trio.fail_after(WAIT):
            await first.get_message()  # welcome
        async with open_websocket_url(url) as second:
            await second.send_message(auth())
            code, reason = await refused(second)
        assert code == TAKEN and reason == (
            "arena: far is connected already (one connection per entrant)"
        )
        link = gateway.current("far")  # the first one plays on
        assert link is not None
        with trio.fail_after(WAIT):
            await link.send(b'{"type":"ping","id":1}\n')
            assert await next_line(first) == '{"type":"ping","id":1}'


async def test_an_oversized_frame_closes_with_a_reason(served: tuple[Gateway, str]) -> None:
    gateway, url = served
    async with open_websocket_url(url) as ws:
        await ws.send_message(auth())
        with trio.fail_after(WAIT):
            await ws.get_message()
            link = await gateway.connection("far", trio.current_time() + WAIT)
        assert link is not None
        await ws.send_message("x" * (MAX_LINE + 1))
        code, reason = await refused(ws)
    assert (code, reason) == (TOO_BIG, f"arena: a frame over max_line ({MAX_LINE} bytes)")
    with pytest.raises(LineTooLong):
        await link.receive()
    assert link.end_fault().reason == "disconnect"


async def test_a_silent_socket_is_closed_within_the_auth_deadline(
    served: tuple[Gateway, str],
) -> None:
    _, url = served
    async with open_websocket_url(url) as ws:
        start = trio.current_time()
        code, reason = await refused(ws)
    assert (code, reason) == (TOO_SLOW, "arena: no auth message within 0.5 s")
    assert 0.4 < trio.current_time() - start < WAIT


@pytest.mark.parametrize(
    ("first", "code", "reason"),
    [
        ('{"type":"auth","name":"far"}', BAD_AUTH, "arena: the first message must be"),
        ("[" * 100_000, BAD_AUTH, "arena: the first message must be"),
        (b"\x00binary", BINARY, "arena: the first message must be a text frame"),
    ],
)
async def test_a_bad_first_message_is_refused_in_one_line(
    served: tuple[Gateway, str], first: str | bytes, code: int, reason: str
) -> None:
    _, url = served
    async with open_websocket_url(url) as ws:
        await ws.send_message(first)
        got = await refused(ws)
    assert got[0] == code and got[1].startswith(reason)


async def test_a_flood_of_silent_sockets_is_bounded(served: tuple[Gateway, str]) -> None:
    """Beyond ``max_waiting`` connections still authenticating, a new one is closed
    at once as busy; an entrant connects again once the silent ones are gone."""
    gateway, url = served
    async with trio.open_nursery() as nursery:
        silent: list[WebSocketConnection] = []

        async def hold() -> None:
            async with open_websocket_url(url) as ws:
                silent.append(ws)
                await refused(ws)

        for _ in range(3):
            nursery.start_soon(hold)
        with trio.fail_after(WAIT):
            while gateway.waiting < 3:
                await trio.sleep(0.01)
        async with open_websocket_url(url) as ws:
            code, reason = await refused(ws)
        assert code == BUSY and reason.startswith("arena: too many connections")
    assert gateway.waiting == 0
    async with open_websocket_url(url) as ws:
        await ws.send_message(auth())
        with trio.fail_after(WAIT):
            assert decode_welcome(await ws.get_message()).name == "far"


async def test_the_web_view_is_still_served_beside_the_gateway(
    served: tuple[Gateway, str],
) -> None:
    import httpx

    _, url = served
    base = url.replace("ws://", "http://").removesuffix(GATEWAY_PATH)
    async with httpx.AsyncClient() as client:
        with trio.fail_after(WAIT):
            answer = await client.get(base + "/")
    assert answer.status_code == 200


async def test_connection_waits_for_its_entrant_until_the_deadline(autojump_clock: object) -> None:
    """Under trio's mock clock: the wait ends at the deadline, or when the entrant
    connects (again, after its first connection ended)."""
    gateway = Gateway({"far": TOKEN.encode()}, max_line=MAX_LINE, leeway=0.0)
    start = trio.current_time()
    assert await gateway.connection("far", start + 30) is None
    assert trio.current_time() == pytest.approx(start + 30)
    got = []

    async def wait() -> None:
        got.append(await gateway.connection("far", trio.current_time() + 60))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.sleep(5)
        first = gateway.attach("far")
    assert got == [first] and gateway.current("far") is first
    first.close("gone")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(wait)
        await trio.sleep(5)
        second = gateway.attach("far")
    assert got[1] is second and second is not first
    assert first.end_fault().reason == "disconnect" and "gone" in str(first.end_fault())


async def test_a_link_told_again_what_a_dropped_socket_was_told(autojump_clock: object) -> None:
    """Under trio's mock clock: a socket lost mid-game; the next one hears the
    session's hello, the game's options and newgame and the unanswered go, in that
    order, and the engine gets only the answer it waits for."""
    gateway = Gateway({"far": TOKEN.encode()}, max_line=MAX_LINE, leeway=0.0, reconnect=30)
    link = gateway.attach("far")
    assert link.connected() == []
    lines = [
        b'{"type":"hello","id":1}',
        b'{"type":"setoption","name":"Hash","value":1}',
        b'{"type":"newgame","id":2}',
        b'{"type":"go","id":3}',
    ]
    identity = b'{"type":"identity","id":1,"protocol":1,"name":"far","games":["kamisado"]}'
    answers = [identity, None, b'{"type":"ready","id":2}']
    for line, answer in zip(lines, answers, strict=False):
        with trio.fail_after(1):
            await link.send(line + b"\n")
            assert await link.outgoing() == line
            if answer is not None:
                await link.deliver(answer)
                assert await link.receive() == answer
    await link.send(lines[3] + b"\n")
    with trio.fail_after(1):  # under the mock clock: a hang fails at once
        assert await link.outgoing() == lines[3]  # the go left, and the socket dropped
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.dropped, "gone", 30.0)
        await trio.sleep(10)
        assert not link.up and not link.ended.is_set()
        assert gateway.refusal(Auth(name="far", token=TOKEN)) is None  # it may come back
        assert gateway.attach("far") is link
        assert link.connected() == lines
    await link.deliver(identity)  # the fresh bot's answers to
    await link.deliver(b'{"type":"ready","id":2}')  # what the engine did not ask again
    await link.deliver(b'{"type":"action","id":3,"action":"a1"}')
    with trio.fail_after(1):
        assert await link.receive() == b'{"type":"action","id":3,"action":"a1"}'
    assert not link.ended.is_set()


async def test_a_go_told_again_carries_the_clock_left_not_the_one_it_had(
    autojump_clock: object,
) -> None:
    """Under trio's mock clock: a bot whose socket drops 7.25 s into its move and
    comes back 3 s later hears its ``go`` again with 10.25 s off its remaining time
    and its budget (what the arena will have charged), the rest of it unchanged;
    the ``go`` is told once."""
    gateway = Gateway({"far": TOKEN.encode()}, max_line=MAX_LINE, leeway=0.0, reconnect=30)
    link = gateway.attach("far")
    link.connected()
    clock = ClockInfo(control="60+1", remaining_ms=[41_000, 30_000], budget_ms=31_000)
    go = Go(id=3, player=1, position="p", observation={}, history=["a1"], legal=["b2"], clock=clock)
    await link.send(encode_line(go))
    with trio.fail_after(1):
        await link.outgoing()
    await trio.sleep(7.25)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.dropped, "gone", 30.0)
        await trio.sleep(3)
        assert gateway.attach("far") is link
        told = link.connected()
    assert len(told) == 1
    again = decode_arena_message(told[0])
    assert isinstance(again, Go)
    assert again.clock.remaining_ms == [41_000, 19_750]
    assert again.clock.budget_ms == 20_750
    assert again == Go(
        id=3,
        player=1,
        position="p",
        observation={},
        history=["a1"],
        legal=["b2"],
        clock=ClockInfo(control="60+1", remaining_ms=[41_000, 19_750], budget_ms=20_750),
    )


async def test_the_presence_of_each_remote_entrant(autojump_clock: object) -> None:
    """What the live view shows: not connected, connected, its socket lost (the link
    waits), a fresh bot on its way (the arena restarted it), gone past the window."""
    gateway = Gateway({"far": TOKEN.encode()}, max_line=MAX_LINE, leeway=0.0, reconnect=5)
    assert gateway.status() == [Presence("far", "absent", None)]
    link = gateway.attach("far")
    link.connected()
    link.probe(0.0, first=True)
    link.probed(1, 0.0125)
    assert gateway.status() == [Presence("far", "connected", 12.5)]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(link.dropped, "gone", 5.0)
        await trio.sleep(1)
        assert gateway.status() == [Presence("far", "dropped", 12.5)]
        assert gateway.attach("far") is link
        link.connected()
    assert gateway.status() == [Presence("far", "connected", 12.5)]
    link.close("the arena starts the bot afresh", code=RESTART)
    assert gateway.status() == [Presence("far", "restarting", 12.5)]
    again = gateway.attach("far")
    again.connected()
    await trio.sleep(0)
    await again.dropped("gone", 5.0)
    assert gateway.status() == [Presence("far", "absent", None)]


def test_the_operator_is_told_a_connection_lost_and_back() -> None:
    """Known answers: a drop, a return, a drop past the window; routine changes (an
    arrival, a fresh bot the arena asked for) say nothing."""
    lost = "remote entrant far lost its connection; its clock runs while it may come back"
    last: dict = {}
    steps = [
        ("connected", []),
        ("restarting", []),
        ("connected", []),
        ("dropped", [f"{lost} (within 30 s)"]),
        ("dropped", []),
        ("connected", ["remote entrant far is back"]),
        ("dropped", [f"{lost} (within 30 s)"]),
        ("absent", ["remote entrant far did not come back within 30 s"]),
        ("absent", []),
        ("connected", ["remote entrant far connected again"]),
        ("restarting", []),
        ("connected", []),
    ]
    for state, said in steps:
        assert presence_lines(last, [Presence("far", state, None)], 30.0) == said, state


async def test_a_link_past_its_reconnection_window_is_a_disconnect(autojump_clock: object) -> None:
    gateway = Gateway({"far": TOKEN.encode()}, max_line=MAX_LINE, leeway=0.0, reconnect=5)
    link = gateway.attach("far")
    link.connected()
    await link.send(b'{"type":"go","id":3}\n')
    start = trio.current_time()
    await link.dropped("the bot's side closed it (code 1006)", gateway.reconnect)
    assert trio.current_time() - start == pytest.approx(5)
    assert link.ended.is_set() and gateway.current("far") is None
    with pytest.raises(EndOfStream):
        await link.receive()
    fault = link.end_fault()
    assert fault.reason == "disconnect"
    assert str(fault) == "far: connection lost (the bot's side closed it (code 1006))"
    assert gateway.attach("far") is not link  # a later connection starts afresh


async def test_round_trip_probes_go_only_between_requests(autojump_clock: object) -> None:
    """A probe sent while the bot thinks would time its thinking: none then; the
    latency is the median of the latest probes."""
    link = Gateway({"far": TOKEN.encode()}, max_line=MAX_LINE, leeway=0.0).attach("far")
    link.connected()
    assert link.rtt_ms is None
    for delay in (0.010, 0.030, 0.020):
        number = link.probe(trio.current_time())
        assert number is not None and link.probe(trio.current_time()) is None  # one at a time
        await trio.sleep(delay)
        link.probed(number, trio.current_time())
    assert link.rtt_ms == pytest.approx(20)
    await link.send(b'{"type":"go","id":4}\n')
    assert link.probe(trio.current_time()) is None and not link.idle
    assert link.probe(trio.current_time(), first=True) is not None  # a new socket's first
    link.probe_lost()
    await link.deliver(b'{"type":"action","id":4,"action":"a1"}')
    assert link.idle and link.probe(trio.current_time()) is not None


async def test_the_end_of_the_run_reaches_a_connected_entrant_before_the_server_stops(
    nursery: trio.Nursery,
) -> None:
    """The run's end closes the links and cancels the server at once: the entrant
    must still get the ``ending`` close frame (``arena connect`` then ends), not a
    cut connection (1006: it would knock again for ever). Seen at the end of real
    runs whose web view had nothing left to refresh."""
    gateway = Gateway({"far": TOKEN.encode()}, max_line=MAX_LINE, leeway=0.05)
    scope = trio.CancelScope()

    async def server(task_status: trio.TaskStatus[str]) -> None:
        with scope:
            await serve(
                Site({}), Listen("127.0.0.1", 0, None), gateway=gateway, task_status=task_status
            )

    url = await nursery.start(server)
    with trio.fail_after(WAIT):
        async with open_websocket_url(url.replace("http://", "ws://") + GATEWAY_PATH) as ws:
            await ws.send_message(auth())
            assert decode_welcome(await next_line(ws)) is not None
            assert await gateway.connection("far", trio.current_time() + WAIT) is not None
            await gateway.close_and_tell("the run is over")
            scope.cancel()  # as run_with_web does once the run has ended
            code, reason = await refused(ws)
    assert code == ENDING and "the run is over" in reason


async def test_an_entrant_arriving_as_the_run_ends_is_told_it_is_over(
    served: tuple[Gateway, str],
) -> None:
    """A bot started afresh as the last game ended connects again while the run is
    ending: it is told so (``arena connect`` ends), not accepted into a link that
    nothing will use and cut with the server."""
    gateway, url = served
    await gateway.close_and_tell("the run is over")
    async with open_websocket_url(url) as ws:
        await ws.send_message(auth())
        code, reason = await refused(ws)
    assert code == ENDING and "the run is over" in reason
