"""What a remote bot's new connection must be told again after a drop.

The link (``arena/engine/link.py``) notes each line the engine sends, by its
type: the arena encodes every message with its ``type`` first, so a prefix
says which it is without decoding. On a reconnection a fresh process of the
bot hears the session's ``hello``, then, inside a game, that game's options and
``newgame``, and the request still unanswered (a ``go``: the position and the
history are in it, its clock told as it stands now), in that order; the answers
to the lines the engine did not ask again (``identity``, ``ready``) are dropped
here, since the engine waits only for the answer it asked for.
"""

from __future__ import annotations

import msgspec

from arena.protocol.messages import (
    Go,
    Identity,
    ProtocolError,
    Ready,
    decode_arena_message,
    decode_bot_message,
    encode_line,
)

__all__ = ["Replay"]

MAX_OPTIONS = 256
"""``setoption`` lines kept for one game (an engine sends one per option)."""


def _kind(line: bytes) -> bytes:
    """``b"go"`` for ``{"type":"go",...}``: the type of one of the arena's own lines."""
    if not line.startswith(b'{"type":"'):
        return b""
    end = line.find(b'"', 9)
    return line[9:end] if end > 0 else b""


class Replay:
    """The lines of a session that a new connection needs, and the answers to drop."""

    def __init__(self) -> None:
        self.hello: bytes | None = None
        self.options: list[bytes] = []
        self.newgame: bytes | None = None
        """The game in progress (``None`` between games)."""
        self.outstanding: bytes | None = None
        """The request whose answer has not arrived."""
        self._outstanding_at = 0.0
        """When it was queued: its clock has run since (trio's clock, seconds)."""
        self._new_options = True
        """The next ``setoption`` starts the options of the next game."""
        self._drop = 0
        """Answers (``identity``, ``ready``) still to drop: the engine did not ask again."""

    def sent(self, line: bytes, now: float = 0.0) -> None:
        kind = _kind(line)
        if kind == b"hello":
            self.hello, self.options, self.newgame = line, [], None
            self._new_options = True
        elif kind == b"setoption":
            if self._new_options:
                self.options, self._new_options = [], False
            if len(self.options) < MAX_OPTIONS:
                self.options.append(line)
        elif kind in (b"newgame", b"gameover"):
            self.newgame = line if kind == b"newgame" else None
            self._new_options = True
        if kind in (b"hello", b"newgame", b"go", b"ping"):
            self.outstanding, self._outstanding_at = line, now

    def received(self, frame: bytes) -> bool:
        """Whether ``frame`` goes on to the engine (``False``: an answer to drop)."""
        if self._drop:
            try:
                message = decode_bot_message(frame.rstrip(b"\r\n"))
            except ProtocolError:
                message = None
            if isinstance(message, Identity | Ready):
                self._drop -= 1
                return False
        if _kind(frame) not in (b"info", b""):
            self.outstanding = None
        return True

    def lines(self, queued: list[bytes], now: float = 0.0) -> list[bytes]:
        """What a new connection hears first: the session's state, then the
        engine's lines queued since the drop (none twice). An unanswered ``go``
        is told with the clock it has left at ``now``."""
        out: list[bytes] = []
        self._drop = 0
        for line in (self.hello, *(self.options if self.newgame else ()), self.newgame):
            if line is None:
                continue
            out.append(line)
            if _kind(line) in (b"hello", b"newgame") and line is not self.outstanding:
                self._drop += 1
        told = list(out)
        if self.outstanding is not None and self.outstanding not in out:
            told.append(self.outstanding)
            out.append(self._as_of(self.outstanding, now))
        return out + [line for line in queued if not any(line is o for o in told)]

    def _as_of(self, line: bytes, now: float) -> bytes:
        """``line`` as the bot should hear it at ``now``: a ``go`` with the time spent
        since it was queued taken off the mover's remaining time and budget, as the
        arena charges it (the Computer Go Server likewise gives a client that comes
        back the clock it has left, not the one it had). Any other line as it was."""
        if _kind(line) != b"go":
            return line
        try:
            go = decode_arena_message(line)
        except ProtocolError:
            return line
        if not isinstance(go, Go):
            return line
        spent = max(0, int((now - self._outstanding_at) * 1000))
        clock = go.clock
        remaining = list(clock.remaining_ms)
        if 0 <= go.player < len(remaining):
            remaining[go.player] = max(0, remaining[go.player] - spent)
        clock = msgspec.structs.replace(
            clock, remaining_ms=remaining, budget_ms=max(0, clock.budget_ms - spent)
        )
        return encode_line(msgspec.structs.replace(go, clock=clock)).rstrip(b"\n")
