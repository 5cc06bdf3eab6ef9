"""A TCP relay that delays every byte by a fixed time in each direction.

The delayed link of tests/netns.py where the kernel has no ``tc netem`` (the
``sch_netem`` qdisc is missing from this machine's kernel and CI's). It is run
by the test itself, in its own trio loop, in the root namespace: it listens on
an address (the host-side veth address, reachable from inside the namespace),
and each connection to it gets a connection of its own to the target.

What a delayed link does to a stream, the relay does to each direction:

- Every chunk read is due ``one_way_s`` after it was read, and is written at
  its due time: a stream of chunks is delayed, not serialized by the delay (a
  chunk does not wait for the one before it to have waited its delay).
- A FIFO queue per direction, and due times only grow: nothing is reordered.
- At most ``limit`` bytes held per direction: when the reader of one side does
  not read, the relay stops reading the other, and the kernel's own flow control
  stops the sender (back-pressure, as a slow link with full buffers gives).
- An end of stream (a half-close) is delayed like data: it closes that
  direction after the data queued before it; the other direction goes on.
- A reset on either side (or a target that refuses) resets both sides at once,
  dropping what was queued, as a reset does to unread data.

Unlike netem it does not delay the TCP handshake (a connect completes at once,
the relay's own connect to the target in the root namespace takes microseconds)
nor the TCP acknowledgements: what a test of charged time per move measures is
the data, and every message and every ping of a WebSocket is data.
"""

from __future__ import annotations

import contextlib
import math
import socket
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass

import trio

CHUNK = 64 * 1024
"""The most one read takes from a socket."""

LIMIT = 1024 * 1024
"""The most bytes a direction holds by default: a 40 ms round trip at 25 MB/s,
far more than any bot's protocol sends, and a bound on the relay's memory."""


@dataclass
class Relay:
    """A running relay: where to connect, and what it held at most (for tests)."""

    host: str
    port: int
    one_way_s: float
    limit: int
    peak: int = 0
    """The most bytes one direction of one connection held at once."""
    connections: int = 0
    """Connections accepted so far."""


@contextlib.asynccontextmanager
async def relay(
    listen_host: str,
    target_host: str,
    target_port: int,
    one_way_s: float,
    *,
    limit: int = LIMIT,
) -> AsyncIterator[Relay]:
    """A relay listening on ``listen_host`` (a free port), forwarding every
    connection to ``target_host:target_port`` with ``one_way_s`` seconds of
    delay each way, for the block's duration (its connections end with it)."""
    if one_way_s < 0 or not math.isfinite(one_way_s):
        raise ValueError(f"one_way_s must be a finite delay >= 0, not {one_way_s}")
    if limit < 1:
        raise ValueError(f"limit must be at least one byte, not {limit}")
    listeners = await trio.open_tcp_listeners(0, host=listen_host)
    info = Relay(listen_host, listeners[0].socket.getsockname()[1], one_way_s, limit)

    async def handle(client: trio.SocketStream) -> None:
        info.connections += 1
        await _connection(client, target_host, target_port, info)

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, handle, listeners)
            try:
                yield info
            finally:
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The relay's own tasks raise nothing: an error is the block's, and the
        # caller gets it as it was raised, not wrapped by the nursery.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise


async def _connection(client: trio.SocketStream, host: str, port: int, info: Relay) -> None:
    async with client:
        try:
            target = await trio.open_tcp_stream(host, port)
        except OSError:
            _reset(client)  # the target refused: the client sees a reset, not a silent close
            return
        async with target:
            broken = False
            async with trio.open_nursery() as nursery:

                async def direction(src: trio.SocketStream, dst: trio.SocketStream) -> None:
                    nonlocal broken
                    try:
                        await _pump(src, dst, info)
                    except* (trio.BrokenResourceError, OSError):  # from _pump's nursery
                        broken = True
                        nursery.cancel_scope.cancel()

                nursery.start_soon(direction, client, target)
                nursery.start_soon(direction, target, client)
            if broken:
                _reset(client)
                _reset(target)


def _reset(stream: trio.SocketStream) -> None:
    """Make the coming close a reset (RST) rather than an end of stream (FIN)."""
    with contextlib.suppress(OSError):
        stream.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


async def _pump(src: trio.SocketStream, dst: trio.SocketStream, info: Relay) -> None:
    """One direction: read ``src`` into a queue of (due time, chunk), write each
    chunk to ``dst`` at its due time; an empty chunk is the end of stream."""
    send, receive = trio.open_memory_channel[tuple[float, bytes]](math.inf)
    held = 0
    room = trio.lowlevel.ParkingLot()

    async def read() -> None:
        nonlocal held
        async with send:
            while True:
                while held >= info.limit:
                    await room.park()
                data = await src.receive_some(min(CHUNK, info.limit - held))
                # Due from the moment it was read, which is never before it arrived.
                send.send_nowait((trio.current_time() + info.one_way_s, data))
                if not data:
                    return
                held += len(data)
                info.peak = max(info.peak, held)

    async def write() -> None:
        nonlocal held
        async with receive:
            async for due, data in receive:
                await trio.sleep_until(due)
                if not data:
                    await dst.send_eof()
                    return
                await dst.send_all(data)
                held -= len(data)  # held until written: a stuck reader stops the reading
                room.unpark_all()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(read)
        nursery.start_soon(write)
