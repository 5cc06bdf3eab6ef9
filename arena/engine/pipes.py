"""One running incarnation of a bot as the engine holds it: the process, its line
reader, its exit, and the writing of a request line to its stdin.

:class:`Running` is the pipe :class:`arena.engine.transport.Transport`: the engine
starts and stops these (``arena/engine/bot.py``) and converses over them
(``arena/engine/conversation.py``); what is here knows nothing of requests, only of
pipes and an exit.
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass, field

import trio

from arena.engine.errors import EngineCrashed, EngineError, describe_exit
from arena.engine.process import ChildProcess
from arena.engine.sandbox import exit_status
from arena.engine.transport import EXIT_DRAIN
from arena.protocol.messages import LineReader


def close_fd(fd: int | None) -> None:
    if fd is not None:
        with suppress(OSError):
            os.close(fd)


@dataclass(eq=False)
class Running:
    """One running incarnation of the bot and its background tasks; its pipes are
    the bot's :class:`~arena.engine.transport.Transport`."""

    process: ChildProcess
    reader: LineReader
    pgid: int
    sandboxed: bool = False
    ended: trio.Event = field(default_factory=trio.Event)
    """The process has exited (and been reaped)."""
    stderr_done: trio.Event = field(default_factory=trio.Event)
    watch_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    drain_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    watch: int | None = None
    """The write end of the sandbox's reaper pipe (:func:`arena.engine.sandbox.wrap`),
    held until the process group is gone."""
    leeway: float = 0.0
    """Pipes need no allowance: the time from write to read is the bot's."""

    @property
    def exited(self) -> trio.Event:
        return self.ended

    async def send(self, line: bytes) -> None:
        await write_line(self.process.stdin_pipe, line)

    async def receive(self) -> bytes:
        return await self.reader.receive_line()

    def end_fault(self) -> EngineError:
        rc = self.returncode
        if rc is None:  # not reaped yet: only a closed pipe is known
            return EngineCrashed("its pipes closed")
        return EngineCrashed(describe_exit(rc), returncode=rc)

    def mark_exited(self) -> None:
        """Announce the exit. Done by whoever reaps the process, rather than by a
        watcher task per read: spawning a task (and a nursery) for every answer cost
        more than the pipe round trip itself. The engine cuts a pending read short."""
        self.ended.set()

    def cancel_tasks(self) -> None:
        self.watch_scope.cancel()
        self.drain_scope.cancel()

    @property
    def returncode(self) -> int | None:
        """The bot's exit status (``-N`` for signal N), seen through bwrap if sandboxed."""
        rc = self.process.returncode
        return exit_status(rc) if self.sandboxed and rc is not None else rc


async def write_line(stream: trio.abc.SendStream, data: bytes) -> None:
    """``stream.send_all(data)``, minus one scheduler pass in the usual case.

    trio's ``send_all`` yields to the scheduler before writing; on the hot path
    that pass costs about a third of a whole pipe round trip. A request line
    normally fits in the pipe, so try a non-blocking write first and fall back
    to ``send_all`` for whatever did not fit. The read that always follows is a
    checkpoint, so a request still yields (and can be cancelled) once per step.
    Only the engine writes to the bot's stdin, and one request at a time.
    """
    if not isinstance(stream, trio.lowlevel.FdStream):  # not a Unix pipe
        await stream.send_all(data)
        return
    try:
        sent = os.write(stream.fileno(), data)
    except BlockingIOError:
        sent = 0
    except BrokenPipeError as exc:
        raise trio.BrokenResourceError from exc
    except OSError as exc:  # EBADF: closed by us
        raise trio.ClosedResourceError("stdin already closed") from exc
    if sent < len(data):
        await stream.send_all(memoryview(data)[sent:])


async def wait_exit(proc: Running) -> None:
    """Wait for (and reap) the process directly: the watch task may already be
    cancelled when the engine is being torn down by a cancellation."""
    await proc.process.wait()
    proc.mark_exited()


__all__ = ["EXIT_DRAIN", "Running", "close_fd", "wait_exit", "write_line"]
