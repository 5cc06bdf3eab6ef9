"""The gateway's own messages: what a remote bot's connection says before the
protocol's lines, and how the gateway says no.

A connection is a WebSocket to ``/bots/connect`` on the arena's web address. Its
first text frame is :class:`Auth` (the entry's name and token); the gateway
answers :class:`Welcome`, and from then on every text frame is exactly one line
of protocol.md, without its newline, in either direction. A refusal is a close
frame whose code is one of :data:`CLOSE_CODES` and whose reason is one line
(WebSocket close reasons hold at most 123 bytes).
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from arena.protocol.messages import ProtocolError

__all__ = [
    "BAD_AUTH",
    "BINARY",
    "BOT_FAULT",
    "BUSY",
    "CLOSE_CODES",
    "ENDING",
    "REFUSED",
    "RESTART",
    "TAKEN",
    "TOO_BIG",
    "TOO_SLOW",
    "GATEWAY_PATH",
    "MAX_AUTH",
    "FAULT_PREFIX",
    "RTT_PREFIX",
    "Auth",
    "Fault",
    "Welcome",
    "close_reason",
    "decode_auth",
    "decode_fault",
    "rtt_frame",
    "rtt_id",
    "decode_welcome",
]

GATEWAY_PATH = "/bots/connect"
MAX_AUTH = 4096
"""Longest first message in bytes: a name and a token (at most 1024 characters)."""

REFUSED = 4001
"""No such remote entrant, or the wrong token (one answer for both: the gateway
does not tell a stranger which names exist)."""
TAKEN = 4002
"""The entrant is connected already."""
TOO_SLOW = 4003
"""No first message in time."""
BAD_AUTH = 1008
"""The first message is not an :class:`Auth`."""
TOO_BIG = 1009
"""A frame longer than the tournament's ``max_line``."""
BUSY = 1013
"""Too many connections are waiting to authenticate; try again later."""
BINARY = 1003
"""A binary frame: the protocol's lines are text."""
ENDING = 1001
"""The arena is ending (the run finished or was interrupted)."""
RESTART = 4011
"""The arena is done with this process of the bot (after a fault, or the
pre-flight): ``arena connect`` connects again at once with a fresh one."""
BOT_FAULT = 4010
"""From ``arena connect``: the bot faulted on its author's machine; the reason is
the fault's (``crash: ...``, ``protocol: ...``, ``time: ...``)."""
CLOSE_CODES = {
    REFUSED: "refused",
    TAKEN: "taken",
    TOO_SLOW: "too slow",
    BAD_AUTH: "bad auth",
    TOO_BIG: "too big",
    BUSY: "busy",
    BINARY: "binary",
    ENDING: "ending",
    BOT_FAULT: "bot fault",
    RESTART: "restart",
}


class Auth(msgspec.Struct, frozen=True, kw_only=True, tag="auth", tag_field="type"):
    """A remote bot's first frame: the entry it plays as, and that entry's token."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    token: Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]


class Welcome(msgspec.Struct, frozen=True, kw_only=True, tag="welcome", tag_field="type"):
    """The gateway's answer to a good :class:`Auth`: the protocol's lines follow."""

    name: str
    max_line: int
    leeway_ms: int
    """Of each move's time, the part the arena does not charge (protocol.md)."""


class Fault(msgspec.Struct, frozen=True, kw_only=True, tag="fault", tag_field="type"):
    """From ``arena connect``, just before it closes with :data:`BOT_FAULT`: the bot
    faulted on its author's machine (the close frame's reason does not reach the app)."""

    reason: Literal["crash", "protocol", "time"]
    detail: Annotated[str, msgspec.Meta(max_length=1000)] = ""


FAULT_PREFIX = '{"type":"fault"'
"""How a :class:`Fault` frame starts (msgspec writes the tag first); no line of a
bot does, its lines having passed the engine of ``arena connect``."""

_auth = msgspec.json.Decoder(Auth)
_fault = msgspec.json.Decoder(Fault)
_welcome = msgspec.json.Decoder(Welcome)


def decode_auth(frame: str | bytes) -> Auth:
    """The first frame as an :class:`Auth`, or a :class:`ProtocolError` (never anything else)."""
    data = frame.encode() if isinstance(frame, str) else frame
    if len(data) > MAX_AUTH:
        raise ProtocolError(f"first message longer than {MAX_AUTH} bytes")
    try:
        return _auth.decode(data)
    except (msgspec.DecodeError, RecursionError) as e:
        raise ProtocolError(f"first message: {e}", data) from None


def decode_welcome(frame: str | bytes) -> Welcome:
    """The gateway's answer, for ``arena connect``; :class:`ProtocolError` if it is not one."""
    data = frame.encode() if isinstance(frame, str) else frame
    try:
        return _welcome.decode(data[:MAX_AUTH])
    except (msgspec.DecodeError, RecursionError) as e:
        raise ProtocolError(f"the gateway's answer: {e}", data) from None


def decode_fault(frame: str) -> Fault | None:
    """A :class:`Fault` frame, else ``None`` (never an exception)."""
    if not frame.startswith(FAULT_PREFIX) or len(frame) > MAX_AUTH:
        return None
    try:
        return _fault.decode(frame)
    except (msgspec.DecodeError, RecursionError):
        return None


RTT_PREFIX = '{"type":"rtt","id":'
"""The gateway's round-trip probe, sent between requests; ``arena connect`` sends the
same frame straight back (the bot never sees it)."""


def rtt_frame(number: int) -> str:
    return f"{RTT_PREFIX}{number}}}"


def rtt_id(frame: str) -> int | None:
    """The number of a probe frame, else ``None`` (never an exception)."""
    if not frame.startswith(RTT_PREFIX) or not frame.endswith("}") or len(frame) > 64:
        return None
    digits = frame[len(RTT_PREFIX) : -1]
    return int(digits) if digits.isdigit() else None


def close_reason(text: str) -> str:
    """``text`` as a close frame's reason: one line of at most 123 bytes of UTF-8."""
    data = " ".join(text.split()).encode()[:123]
    return data.decode("utf-8", "ignore")
