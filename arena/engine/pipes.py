"""One running incarnation of a bot as the engine holds it: the process, its line
reader, its exit, and the writing of a request line to its stdin.

The engine starts and stops these (``arena/engine/bot.py``); what is here knows
nothing of requests or faults, only of pipes and an exit.
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import dataclass, field

import trio

from arena.engine.process import ChildProcess
from arena.engine.sandbox import exit_status
from arena.protocol.messages import LineReader

EXIT_DRAIN = 0.1
"""After the process exits, how long a pending read may still drain the pipe."""


def close_fd(fd: int | None) -> None:
    if fd is not None:
        with suppress(OSError):
            os.close(fd)


@dataclass(eq=False)
class Running:
    """One running incarnation of the bot and its background tasks."""

    process: ChildProcess
    reader: LineReader
    pgid: int
    sandboxed: bool = False
    exited: trio.Event = field(default_factory=trio.Event)
    stderr_done: trio.Event = field(default_factory=trio.Event)
    watch_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    drain_scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    read_scope: trio.CancelScope | None = None
    """The scope of the read in progress, which an exit cuts short."""
    games: int = 0
    """``newgame`` requests answered by this process."""
    watch: int | None = None
    """The write end of the sandbox's reaper pipe (:func:`arena.engine.sandbox.wrap`),
    held until the process group is gone."""

    def mark_exited(self) -> None:
        """Announce the exit; a pending read gets only a short drain from now on.

        Done by whoever reaps the process, rather than by a watcher task per read:
        spawning a task (and a nursery) for every answer cost more than the pipe
        round trip itself.
        """
        self.exited.set()
        if self.read_scope is not None:
            self.read_scope.deadline = min(
                self.read_scope.deadline, trio.current_time() + EXIT_DRAIN
            )

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
