"""The bot's line channel as a conversation uses it, whatever carries the lines.

A :class:`Transport` is all the request/answer logic
(:class:`arena.engine.conversation.Conversation`) needs of a bot: write one line,
read one line (bounded), know when the far end is gone for good and why. The pipes
of a local process are one (:class:`arena.engine.pipes.Running`); a remote bot's
connection is another, and the tests' scripted bot (``tests/scripted.py``) a third,
so the referee's and the clock's rules are tested under trio's mock clock on the same
code that talks to real processes.

Faults are the caller's business: a transport raises what a pipe raises (trio's
``BrokenResourceError``/``ClosedResourceError`` on a write, :class:`EndOfStream` or
:class:`ProtocolError` on a read) and names its end with :meth:`Transport.end_fault`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import trio

    from arena.engine.errors import EngineError

EXIT_DRAIN = 0.1
"""After the far end is gone, how long a pending read may still drain what it sent."""


class Transport(Protocol):
    """One bot's line channel: one request line out, its lines back.

    Only one coroutine writes and one reads at a time (one request is outstanding).
    """

    leeway: float
    """Seconds the engine adds to each request's deadline and takes off the time it
    charges (``Reply.elapsed``): 0.0 for pipes; for a remote bot a fixed per-move
    network allowance."""

    ended: trio.Event
    """The far end is gone for good (the process exited; the connection was lost past
    any reconnection). A read in progress then only drains for :data:`EXIT_DRAIN`."""

    async def send(self, line: bytes) -> None:
        """Write one encoded line, newline included. Raises ``trio.BrokenResourceError``
        or ``trio.ClosedResourceError`` when the far end is gone (or stopped reading
        for good); blocks while it does not read, like a full pipe."""
        ...

    async def receive(self) -> bytes:
        """The next line without its newline, at most ``max_line`` bytes. Raises
        :class:`arena.protocol.messages.EndOfStream`,
        :class:`arena.protocol.messages.ProtocolError` (``LineTooLong``) or
        ``trio.BrokenResourceError`` as :class:`arena.protocol.messages.LineReader` does."""
        ...

    def end_fault(self) -> EngineError:
        """Why the far end ended (asked once :attr:`ended` is set): for a process
        ``EngineCrashed(describe_exit(rc))``; a remote link its own fault. The engine
        names the bot in it (:func:`arena.engine.errors.name_engine`)."""
        ...


__all__ = ["EXIT_DRAIN", "Transport"]
