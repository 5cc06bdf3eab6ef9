"""A bot's faults, each carrying the end reason the referee records.

Everything that can go wrong with a foreign program surfaces as one of these:

* :class:`EngineTimeout` (``reason == "time"``): no answer before the deadline;
* :class:`EngineCrashed` (``"crash"``): the process exited, with code or signal;
* :class:`EngineProtocolError` (``"protocol"``): unparseable or over-long line,
  wrong message type or id, stdout closed while the process lives on.
"""

from __future__ import annotations

import signal
from typing import ClassVar

from arena.protocol.text import visible

OUT_OF_MEMORY = (
    "MemoryError",  # Python
    "out of memory",  # node ("JavaScript heap out of memory"), many C programs
    "Cannot allocate memory",  # strerror(ENOMEM)
    "bad_alloc",  # C++
    "memory allocation",  # Rust ("memory allocation of N bytes failed"), glibc
)
"""What a process that hit its address-space limit typically says last: the
limit makes allocations fail (no signal tells), so the stderr tail is the only
witness, and a crash record names memory when it shows one of these."""


class EngineError(Exception):
    """A bot fault. ``reason`` is the record's end reason; ``stderr_tail`` its last words.

    The message may quote what the bot sent (its option names, a bad line), so its
    control characters are made visible here, once for every fault: the detail
    reaches the record, the terminal and the reports.
    """

    reason: ClassVar[str] = "protocol"

    def __init__(self, message: str, *, engine: str = "", elapsed: float | None = None) -> None:
        message, engine = visible(message), visible(engine)
        super().__init__(f"{engine}: {message}" if engine else message)
        self.detail = message
        self.engine = engine
        self.elapsed = elapsed
        """Seconds since the request was written, when the fault ended a request."""
        self.stderr_tail = ""


class EngineTimeout(EngineError):
    """No answer within the deadline (or the bot would not even read its input)."""

    reason = "time"


class EngineCrashed(EngineError):
    """The process is gone (or never started). ``signal`` names a fatal signal."""

    reason = "crash"

    def __init__(
        self,
        message: str,
        *,
        engine: str = "",
        elapsed: float | None = None,
        returncode: int | None = None,
    ) -> None:
        super().__init__(message, engine=engine, elapsed=elapsed)
        self.returncode = returncode
        self.signal: str | None = None
        if returncode is not None and returncode < 0:
            try:
                self.signal = signal.Signals(-returncode).name
            except ValueError:
                self.signal = f"signal {-returncode}"


class EngineProtocolError(EngineError):
    """The bot broke the protocol: bad line, wrong answer, closed stdout, bad handshake."""

    reason = "protocol"


def describe_exit(returncode: int) -> str:
    """``exited with code 3`` or ``killed by SIGSEGV``."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"


def name_engine(exc: EngineError, engine: str) -> EngineError:
    """Name the bot in a fault made without its name (a transport's :meth:`end_fault`)."""
    if not exc.engine and engine:
        exc.engine = visible(engine)
        exc.args = (f"{exc.engine}: {exc.detail}",)
    return exc


def name_out_of_memory(exc: EngineError, *, oom_killed: bool, limit: int | None) -> None:
    """Say "out of memory" in a crash that a memory kill (``oom_killed``) or the
    bot's last words (its ``stderr_tail``, already attached) show to be one."""
    if not isinstance(exc, EngineCrashed):
        return
    if oom_killed or any(w in exc.stderr_tail for w in OUT_OF_MEMORY):
        exc.detail += " (out of memory" + (
            f": limit {limit >> 20} MB)" if limit is not None else ")"
        )
        exc.args = (f"{exc.engine}: {exc.detail}" if exc.engine else exc.detail,)


__all__ = [
    "OUT_OF_MEMORY",
    "EngineCrashed",
    "EngineError",
    "EngineProtocolError",
    "EngineTimeout",
    "describe_exit",
    "name_engine",
    "name_out_of_memory",
]
