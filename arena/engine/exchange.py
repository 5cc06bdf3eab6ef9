"""One request's outcome: the :class:`Reply` the engine returns, and the reading
of each line the bot sends while a request is outstanding (its answer, an
``info`` line, or a fault).

The exchange itself, under one cancel scope, is
:meth:`arena.engine.conversation.Conversation.request`;
what is here is plain (no trio, no process), so it can be tested on bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from arena.engine.errors import EngineError, EngineProtocolError
from arena.engine.output import shown_line
from arena.protocol.messages import Answer, Info, ProtocolError, Request, decode_bot_message


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer, the ``info`` lines before it, and when it was sent and read."""

    answer: Answer
    infos: tuple[Info, ...]
    sent_at: float
    received_at: float
    infos_dropped: int = 0
    """``info`` lines read but not kept (beyond ``info_lines``/``info_bytes``)."""
    cpu_ns: int | None = None
    """CPU time the bot's cgroup used from the request to its answer (``None``: not counted)."""
    leeway: float = 0.0
    """The transport's allowance (:attr:`arena.engine.transport.Transport.leeway`):
    ``sent_at``/``received_at`` stay the raw times, :attr:`elapsed` is net of it."""

    @property
    def elapsed(self) -> float:
        """Seconds from the request's write starting to its answer read, less the
        leeway (never below zero): what the clock charges."""
        raw = self.received_at - self.sent_at
        return raw if not self.leeway else max(0.0, raw - self.leeway)

    @property
    def elapsed_ms(self) -> int:
        return round(self.elapsed * 1000)


def decode_answer(
    raw: bytes, msg: Request, expected: type[msgspec.Struct], *, engine: str
) -> Answer | Info | EngineError:
    """The message in ``raw`` if it belongs to this request, else the fault to raise.

    Plain (not async) on purpose: it runs for every line on the hot path.
    ``engine`` names the bot in the fault.
    """
    try:
        answer = decode_bot_message(raw)
    except ProtocolError as exc:
        return EngineProtocolError(f"{exc} in line {shown_line(raw)}", engine=engine)
    if answer.id != msg.id:
        return EngineProtocolError(
            f"answered id {answer.id} ({tag(answer)}), expected id {msg.id}",
            engine=engine,
        )
    if not isinstance(answer, (expected, Info)):
        return EngineProtocolError(
            f"answered {tag(msg)} with {tag(answer)}, expected {tag(expected)}",
            engine=engine,
        )
    return answer


def is_text(raw: bytes) -> bool:
    """Whether an undecodable line is text rather than a bad message (a runtime's words?)."""
    return not raw.lstrip().startswith(b"{")


def tag(msg: msgspec.Struct | type[msgspec.Struct]) -> str:
    cls = msg if isinstance(msg, type) else type(msg)
    return str(cls.__struct_config__.tag)


__all__ = ["Reply", "decode_answer", "is_text", "tag"]
