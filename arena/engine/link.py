"""A remote bot's connection as the engine sees it: the transport of an engine
whose bot runs on its author's machine (``arena/engine/transport.py``'s contract).

The gateway (``arena/web/gateway.py``) owns the WebSocket and pumps its frames
through two small channels; the link is the engine's end of them. Keeping the
socket out of here keeps the engine free of any web framework and lets the
logic run under trio's mock clock. Both channels are bounded, so a bot that
floods its connection waits on the socket (TCP's window), not on memory.

A link outlives its socket by up to ``[remote] reconnect_s``: a connection lost
mid-game may come back (``arena connect`` reconnects by itself), and the new one
is told what the engine told the old (:class:`~arena.engine.replay.Replay`: its
``hello``, the game's options and ``newgame``, the request still unanswered)
while the engine just waits for its answer, its clock running. Only when the
window passes does the link end, and the game is a ``disconnect`` fault.
"""

from __future__ import annotations

from collections import deque
from contextlib import suppress

import trio

from arena.engine.errors import (
    EngineCrashed,
    EngineError,
    EngineProtocolError,
    EngineTimeout,
)
from arena.engine.replay import Replay
from arena.protocol.messages import EndOfStream, LineTooLong, ProtocolError
from arena.protocol.remote import ENDING

__all__ = ["EngineDisconnected", "RemoteLink"]

BUFFERED = 8
"""Frames each way held between the socket and the engine."""
RTT_SAMPLES = 9
"""Round trips kept: the median of the latest is the connection's latency."""


class EngineDisconnected(EngineError):
    """A remote bot's connection was lost (and did not come back in time)."""

    reason = "disconnect"


_REPORTED: dict[str, type[EngineError]] = {
    "crash": EngineCrashed,
    "protocol": EngineProtocolError,
    "time": EngineTimeout,
}


class RemoteLink:
    """Remote entrant ``name``'s connection, across reconnections.

    Engine side: :meth:`send`, :meth:`receive`, :attr:`ended`, :meth:`end_fault`,
    :attr:`leeway` (the Transport contract). Gateway side: :meth:`connected`
    (a socket is up: the lines to send it first), :meth:`deliver` (a frame from
    the bot), :meth:`outgoing` (the next line for the bot), :meth:`dropped` (the
    socket is gone: wait for the next) and :meth:`close`.
    """

    def __init__(self, name: str, *, max_line: int, leeway: float) -> None:
        self.name = name
        self.max_line = max_line
        self.leeway = leeway
        """Seconds of each request the engine does not charge (``[remote] leeway_ms``)."""
        self.ended = trio.Event()
        self.why = ""
        """Why the connection ended, one line (for :meth:`end_fault`)."""
        self.reported: tuple[str, str] | None = None
        """``(reason, detail)`` of a fault ``arena connect`` reported before closing."""
        self.close_code = ENDING
        """What the socket is closed with when the arena ends the link."""
        self.up = False
        """A socket carries the link now (else it waits for one, or has ended)."""
        self.released = trio.Event()
        """A socket that carried the link is done (its close frame sent): the arena
        may stop serving without leaving ``arena connect`` to guess why it went."""
        self.spent = False
        """Its bot has had a session with an engine that has stopped since: the next
        engine wants a fresh bot (:meth:`arena.engine.remote.RemoteEngine.start`)."""
        self.connections = 0
        """Sockets that carried the link (more than one: it reconnected)."""
        self.rtts: deque[float] = deque(maxlen=RTT_SAMPLES)
        """The latest round trips measured (seconds), by the gateway's probes."""
        self._probe: tuple[int, float] | None = None
        self._probes = 0
        self._fault: ProtocolError | None = None
        self._replay = Replay()
        self._resumed = trio.Event()
        self._in_send, self._in_recv = trio.open_memory_channel[bytes](BUFFERED)
        self._out_send, self._out_recv = trio.open_memory_channel[bytes](BUFFERED)

    # -- the engine's end ---------------------------------------------------------

    async def send(self, line: bytes) -> None:
        """Queue one encoded line (its newline is the frame's end) for the bot; while
        the link waits for a socket, the line waits with it."""
        if self.ended.is_set():
            raise trio.BrokenResourceError(self.why)
        line = line.rstrip(b"\n")
        self._replay.sent(line, trio.current_time())
        await self._out_send.send(line)

    async def receive(self) -> bytes:
        """The bot's next line (a frame without its newline, blank ones skipped)."""
        while True:
            try:
                line = await self._in_recv.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                if self._fault is not None:
                    raise self._fault from None
                raise EndOfStream() from None
            line = line.rstrip(b"\r\n")
            if line.strip():
                return line

    def end_fault(self) -> EngineError:
        """A fault the bot's side reported (it crashed on its author's machine, say),
        else a ``disconnect``."""
        if self.reported is not None:
            reason, detail = self.reported
            kind = _REPORTED.get(reason, EngineCrashed)
            return kind(f"on its author's machine: {detail}", engine=self.name)
        return EngineDisconnected(f"connection lost ({self.why or 'closed'})", engine=self.name)

    @property
    def rtt_ms(self) -> float | None:
        """The connection's round trip (milliseconds): the median of the latest probes."""
        if not self.rtts:
            return None
        ordered = sorted(self.rtts)
        return ordered[len(ordered) // 2] * 1000

    # -- the gateway's end --------------------------------------------------------

    def probe(self, now: float, *, first: bool = False) -> int | None:
        """The number of a round-trip probe to send now, or ``None``: not while a
        request waits for its answer (the bot's side answers probes between its
        requests only, so one sent meanwhile would time the bot's thinking too).
        The ``first`` probe of a socket goes before any line, so it is always clean."""
        if self._probe is not None or (not first and self._replay.outstanding is not None):
            return None
        self._probes += 1
        self._probe = (self._probes, now)
        return self._probes

    @property
    def idle(self) -> bool:
        """No request waits for its answer."""
        return self._replay.outstanding is None

    def probed(self, number: int, now: float) -> None:
        """The probe ``number`` came back at ``now``."""
        if self._probe is not None and self._probe[0] == number:
            self.rtts.append(now - self._probe[1])
        self._probe = None

    def probe_lost(self) -> None:
        """A probe not sent after all (a request went first), or lost with its socket."""
        self._probe = None

    def connected(self) -> list[bytes]:
        """A socket carries the link from now on; the lines to send it before any
        other: for a reconnection, what the last socket was told and the bot may
        not have heard (the engine's lines queued meanwhile among them)."""
        self.up = True
        self.released = trio.Event()  # this socket's, not the last one's
        self._probe = None
        self.connections += 1
        queued = []
        while True:
            try:
                queued.append(self._out_recv.receive_nowait())
            except trio.WouldBlock:
                break
        resumed, self._resumed = self._resumed, trio.Event()
        resumed.set()
        if self.connections == 1:
            return queued
        return self._replay.lines(queued, trio.current_time())

    async def deliver(self, frame: bytes) -> bool:
        """A frame from the bot; ``False`` if it was over ``max_line``, which ends the
        link with :class:`LineTooLong`, as an over-long line of a local bot does."""
        if len(frame.rstrip(b"\r\n")) > self.max_line:
            self._fault = LineTooLong(
                f"frame longer than {self.max_line} bytes ({len(frame)} bytes)", frame
            )
            self.close(f"a frame over max_line ({self.max_line} bytes)")
            return False
        if self._replay.received(frame):
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self._in_send.send(frame)  # (unless the link has ended meanwhile)
        return True

    async def outgoing(self) -> bytes:
        """The next line for the bot; :class:`trio.EndOfChannel` once the link is closed."""
        try:
            return await self._out_recv.receive()
        except trio.ClosedResourceError:
            raise trio.EndOfChannel() from None

    async def dropped(self, why: str, window: float) -> None:
        """The socket is gone: wait up to ``window`` seconds for the next (from
        :meth:`connected`), else end the link."""
        self.up = False
        resumed = self._resumed
        with trio.move_on_after(window):
            await resumed.wait()
            return
        self.close(why)

    def close(self, why: str, code: int = ENDING) -> None:
        """The link is gone for good: every wait on it ends now; a socket still up
        is closed with ``code`` (:data:`~arena.protocol.remote.RESTART`: the
        arena wants a fresh process of the bot)."""
        if self.ended.is_set():
            return
        self.why = why
        self.close_code = code
        self.up = False
        self._in_send.close()
        self._out_recv.close()
        self.ended.set()
        self._resumed.set()  # a wait for the next socket ends too
