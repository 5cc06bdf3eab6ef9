"""The delaying TCP relay (tests/relay.py) over loopback with real sockets: each
direction is delayed by its share and no more, a stream is delayed rather than
serialized, nothing is reordered, an end of stream and a reset pass through, and
a receiver that does not read stops the sender with the relay's memory bounded.

Client, relay and server all run in the test's trio loop and share its clock,
so a byte's one-way time is read off directly: the time it was sent and the
time it arrived, on either side of the relay. The tests of the delay itself run
on a mock clock (:func:`settling_clock`), where it is a known answer: exactly
the one-way time, whatever the machine's load. The real-time delay, what a
remote bot's test gets, is measured by tests/test_netns.py's round trips."""

from __future__ import annotations

import contextlib
import hashlib
import random
import socket
import statistics
import struct
from collections.abc import AsyncIterator

import pytest
import relay
import trio
import trio.testing

ONE_WAY_S = 0.015

SETTLE_S = 0.02
"""Real time the mock clock waits, with every task blocked, for the sockets to
have something to say before it jumps to the next timer. Loopback data is
there within microseconds, mostly before ``send`` returns; 20 ms covers the
kernel passing it on later on a loaded machine (a jump before it arrived would
make it look late). Each jump costs this much real time."""


@pytest.fixture
def settling_clock() -> trio.testing.MockClock:
    """The test's trio clock (pytest-trio runs a test on a Clock fixture it is
    given): virtual time that moves only when the loop has nothing to do, so a
    chunk due in 15 ms arrives at exactly 15 ms. On the real clock the median
    was within 4 ms of it, and past that in 3 runs of 8 with two busy processes
    on the two cores (this machine shares them with other test runs)."""
    return trio.testing.MockClock(autojump_threshold=SETTLE_S)


@contextlib.asynccontextmanager
async def through_relay(
    one_way_s: float = ONE_WAY_S, limit: int = relay.LIMIT
) -> AsyncIterator[tuple[trio.SocketStream, trio.SocketStream, relay.Relay]]:
    """A client connected through a relay to a server: (client, server, relay)."""
    with trio.fail_after(60):
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        async with listeners[0]:
            port = listeners[0].socket.getsockname()[1]
            async with relay.relay("127.0.0.1", "127.0.0.1", port, one_way_s, limit=limit) as r:
                client = await trio.open_tcp_stream(r.host, r.port)
                server = await listeners[0].accept()
                async with client, server:
                    yield client, server, r


async def receive_exactly(stream: trio.SocketStream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        assert chunk, f"end of stream after {len(data)} of {size} bytes"
        data += chunk
    return bytes(data)


async def test_each_direction_is_delayed_by_its_half(
    settling_clock: trio.testing.MockClock,
) -> None:
    """Timestamps on a round trip: sent, arrived at the server (echoed at once),
    back at the client. Each leg takes the one-way delay, never less."""
    up: list[float] = []
    down: list[float] = []
    async with through_relay() as (client, server, _):
        for _ in range(15):
            sent = trio.current_time()
            await client.send_all(b"p")
            assert await server.receive_some(1) == b"p"
            arrived = trio.current_time()
            await server.send_all(b"q")
            assert await client.receive_some(1) == b"q"
            back = trio.current_time()
            up.append(arrived - sent)
            down.append(back - arrived)
    said = (
        f"up median {statistics.median(up) * 1000:.2f} ms (min {min(up) * 1000:.2f}),"
        f" down median {statistics.median(down) * 1000:.2f} ms (min {min(down) * 1000:.2f})"
    )
    print(said)
    assert all(leg == pytest.approx(ONE_WAY_S, abs=1e-9) for leg in up + down), said


async def test_a_stream_of_chunks_is_delayed_not_serialized(
    settling_clock: trio.testing.MockClock,
) -> None:
    """40 chunks, each read by the relay on its own (the loop runs idle between
    sends), each arrives its delay after it was sent: the 40th does not wait 40
    delays, as it would behind a relay that waited the delay before each write."""
    count = 40
    sent: list[float] = []
    arrived: list[float] = []

    async def receive(server: trio.SocketStream) -> None:
        for index in range(count):
            assert struct.unpack("!Q", await receive_exactly(server, 8)) == (index,)
            arrived.append(trio.current_time())

    async with through_relay() as (client, server, _), trio.open_nursery() as nursery:
        nursery.start_soon(receive, server)
        for index in range(count):
            sent.append(trio.current_time())
            await client.send_all(struct.pack("!Q", index))
            await trio.testing.wait_all_tasks_blocked()  # the relay has read it
    late = [a - s for s, a in zip(sent, arrived, strict=True)]
    said = (
        f"sent over {(sent[-1] - sent[0]) * 1000:.1f} ms, each took: median"
        f" {statistics.median(late) * 1000:.2f} ms, max {max(late) * 1000:.2f} ms,"
        f" the last {late[-1] * 1000:.2f} ms"
    )
    print(said)
    # Each one delayed by exactly its own 15 ms, the last too: not 40 of them.
    assert all(each == pytest.approx(ONE_WAY_S, abs=1e-9) for each in late), said


async def test_many_chunks_arrive_in_order_both_ways() -> None:
    """Some megabytes in chunks of every size, both directions at once: the
    bytes that come out are the bytes that went in, in order."""
    rng = random.Random(37)
    ups = [rng.randbytes(rng.randrange(1, 40_000)) for _ in range(300)]
    downs = [rng.randbytes(rng.randrange(1, 40_000)) for _ in range(300)]
    got: dict[str, bytes] = {}

    async def send(stream: trio.SocketStream, chunks: list[bytes]) -> None:
        for chunk in chunks:
            await stream.send_all(chunk)
        await stream.send_eof()

    async def receive(stream: trio.SocketStream, key: str) -> None:
        data = bytearray()
        async for chunk in stream:
            data += chunk
        got[key] = bytes(data)

    async with through_relay() as (client, server, r), trio.open_nursery() as nursery:
        nursery.start_soon(send, client, ups)
        nursery.start_soon(send, server, downs)
        nursery.start_soon(receive, server, "up")
        nursery.start_soon(receive, client, "down")
    assert got["up"] == b"".join(ups)
    assert got["down"] == b"".join(downs)
    assert r.peak <= r.limit


async def test_an_end_of_stream_follows_the_data_and_closes_one_direction() -> None:
    """The client's half-close reaches the server after its data and its delay;
    the server still answers over the other direction, then closes it too."""
    async with through_relay() as (client, server, _):
        await client.send_all(b"ask")
        await client.send_eof()
        closed = trio.current_time()
        assert await receive_exactly(server, 3) == b"ask"
        assert await server.receive_some(10) == b""
        assert trio.current_time() - closed >= ONE_WAY_S
        await server.send_all(b"answer")
        await server.send_eof()
        closed = trio.current_time()
        assert await receive_exactly(client, 6) == b"answer"
        assert await client.receive_some(10) == b""
        assert trio.current_time() - closed >= ONE_WAY_S


def reset(stream: trio.SocketStream) -> None:
    stream.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


async def test_a_reset_resets_the_other_side_and_the_relay_goes_on() -> None:
    """Not a quiet end of stream: the server sees the reset the client made. A
    later connection through the same relay works."""
    async with through_relay() as (client, server, r):
        reset(client)
        await client.aclose()
        with pytest.raises(trio.BrokenResourceError):
            await server.receive_some(10)
        again = await trio.open_tcp_stream(r.host, r.port)
        async with again:
            await again.send_all(b"x")
            await again.send_eof()
            assert r.connections == 2


async def test_a_refused_target_resets_the_client() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    await listeners[0].aclose()  # nothing listens on the port now
    with trio.fail_after(30):
        async with relay.relay("127.0.0.1", "127.0.0.1", port, ONE_WAY_S) as r:
            client = await trio.open_tcp_stream(r.host, r.port)
            async with client:
                with pytest.raises(trio.BrokenResourceError):
                    await client.receive_some(10)


FLOOD = 16 * 1024 * 1024
"""Far more than the relay's limit and the kernel's buffers take on loopback
once nothing is read (a few megabytes here)."""


async def test_a_receiver_that_does_not_read_stops_the_sender() -> None:
    """A sender floods, the server reads nothing: the relay holds its limit and
    no more, the sender stops short; once the server reads, everything arrives,
    in order."""
    limit = 256 * 1024
    block = random.Random(7).randbytes(64 * 1024)
    progress = {"sent": 0}

    async def flood(client: trio.SocketStream) -> None:
        while progress["sent"] < FLOOD:
            await client.send_all(block)
            progress["sent"] += len(block)
        await client.send_eof()

    async with through_relay(0.002, limit) as (client, server, r), trio.open_nursery() as n:
        n.start_soon(flood, client)
        # Idle for 0.2 s: the sender waits on a full socket, the relay on the
        # server, nothing moves (while the relay holds a chunk it waits on a timer).
        await trio.testing.wait_all_tasks_blocked(0.2)
        stalled = progress["sent"]
        print(f"stalled at {stalled / 2**20:.1f} MiB, the relay held at most {r.peak} bytes")
        assert stalled < FLOOD
        assert r.peak == limit  # filled, and not past its limit
        digest = hashlib.sha256()
        total = 0
        async for chunk in server:
            digest.update(chunk)
            total += len(chunk)
    assert total == FLOOD and r.peak == limit
    assert digest.digest() == hashlib.sha256(block * (FLOOD // len(block))).digest()
