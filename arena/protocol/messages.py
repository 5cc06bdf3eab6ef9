"""The bot wire protocol (version 1): messages, line framing and codecs.

The protocol itself is specified in ``protocol.md`` at the repository top; this
module is its executable form. Messages are msgspec Structs in two tagged unions
(``type`` is the tag): :data:`ArenaMessage` for what the arena writes and
:data:`BotMessage` for what a bot writes. Decoding a line is one pass of a typed
msgspec decoder, so a malformed message fails with msgspec's own error, which
names the offending field (``Expected `int`, got `str` - at `$.id```).

Framing is one JSON object per ``\\n``-terminated UTF-8 line. :class:`LineReader`
enforces a maximum line length *while* reading: an endless line without a
newline is rejected after ``max_line`` bytes instead of being buffered whole,
so a hostile or broken bot cannot make the arena allocate without bound.

This module knows nothing of processes or of any game's rules.
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, TypeVar

import msgspec

from arena.protocol.text import MAYBE_UNSAFE_JSON, visible

# The framing only names trio's stream types: imported for type checking alone, so
# that a bot importing arena.sdk does not pay trio's import (most of its start-up).
if TYPE_CHECKING:
    import trio

PROTOCOL_VERSION = 1
"""The version this arena speaks; sent in ``hello`` and echoed in ``identity``."""

MAX_LINE = 1 << 20
"""Default maximum length of one line in bytes, excluding the ``\\n`` (1 MiB)."""

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in a line. No message needs
more than three levels; the bound exists because msgspec decodes recursively
(skipping an unknown field too), so a line of a few KiB nested a thousand levels
deep would otherwise raise ``RecursionError`` instead of a protocol error."""

_READ_CHUNK = 1 << 16

Id = Annotated[int, msgspec.Meta(ge=0)]
Player = Annotated[int, msgspec.Meta(ge=0, le=1)]
Millis = Annotated[int, msgspec.Meta(ge=0)]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class ProtocolError(Exception):
    """A line that is not a valid message of the expected union.

    The text is msgspec's message, which names the field, prefixed by what was
    being decoded; the raw line (truncated) is kept for the record. msgspec may
    quote a bad value as it came (``Invalid value '...'``), so the text has its
    control characters made visible (:func:`arena.protocol.text.visible`).
    """

    def __init__(self, message: str, line: bytes = b"") -> None:
        super().__init__(visible(message))
        self.line = line[:200]


class LineTooLong(ProtocolError):
    """More than ``max_line`` bytes arrived without a newline."""


class EndOfStream(Exception):
    """The peer closed the stream; ``partial`` holds an unterminated last line."""

    def __init__(self, partial: bytes = b"") -> None:
        super().__init__("stream closed" + (" inside a line" if partial else ""))
        self.partial = partial


# --------------------------------------------------------------------------
# arena -> bot


class _ArenaBase(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Arena messages: always written with every field, so bots can rely on them."""


class Hello(_ArenaBase, kw_only=True, frozen=True, tag="hello"):
    """First line of a session: the protocol version and the game on offer."""

    id: Id = 0
    protocol: int = PROTOCOL_VERSION
    game: str
    variant: str
    max_line: int = MAX_LINE
    cores: int = 1
    """Cores the bot may use at once (its entry's ``threads``); more threads than
    this only share them (protocol.md, section 6)."""


class NewGame(_ArenaBase, kw_only=True, frozen=True, tag="newgame"):
    """A new game starts in the same process; ``position`` is this player's view."""

    id: Id = 0
    game: str
    variant: str
    player: Player
    players: list[str]
    position: str
    time_control: str


class ClockInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Both clocks and the time control, in integer milliseconds.

    ``budget_ms`` is what the player to move may spend on this decision before
    it forfeits on time, not counting the tolerance ``margin_ms``.
    """

    control: str
    remaining_ms: list[int]
    increment_ms: Millis = 0
    movetime_ms: Millis | None = None
    moves_to_go: int | None = None
    margin_ms: Millis = 0
    budget_ms: Millis = 0


class Go(_ArenaBase, kw_only=True, frozen=True, tag="go"):
    """A request for one decision by ``player`` (the receiving bot)."""

    id: Id = 0
    player: Player
    position: str
    observation: dict[str, Any]
    history: list[str]
    legal: Annotated[
        list[str],
        msgspec.Meta(
            min_length=1,
            description="every legal action; a single one only when it is forced by what "
            "the bot hides (e.g. a Sekigahara pass without a loyalty card): a decision "
            "forced for both players to see is played by the arena and never asked",
        ),
    ]
    clock: ClockInfo


class Ping(_ArenaBase, kw_only=True, frozen=True, tag="ping"):
    """Liveness check; answered by ``pong`` with the same id."""

    id: Id = 0


class GameOver(_ArenaBase, kw_only=True, frozen=True, tag="gameover"):
    """Notification (no answer): the game ended. ``result`` is from player 0's view."""

    result: str
    reason: str
    detail: str = ""
    winner: Player | None = None


class Quit(_ArenaBase, kw_only=True, frozen=True, tag="quit"):
    """Notification (no answer): exit now with status 0."""


OptionValue = bool | int | float | str
"""What an engine option can be set to (JSON ``true``, ``64``, ``0.5``, ``"book.bin"``)."""


class SetOption(_ArenaBase, kw_only=True, frozen=True, tag="setoption"):
    """Notification (no answer), like UCI's ``setoption``: sent right before
    ``newgame`` for each option the tournament sets, and only for options the bot
    declared in its ``identity``, so a bot that declares none never sees one."""

    name: str
    value: OptionValue


ArenaMessage = Hello | NewGame | Go | Ping | GameOver | Quit | SetOption
Request = Hello | NewGame | Go | Ping
"""Arena messages that carry an ``id`` and expect an answer."""


# --------------------------------------------------------------------------
# bot -> arena


class _BotBase(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", omit_defaults=True):
    """Bot messages: optional fields may be left out or sent as null."""


OptionType = Literal["int", "float", "bool", "string", "choice"]


class OptionSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One engine option a bot declares in identity (like UCI's option).

    int and float may bound the value with min and max (inclusive); a choice
    lists its choices. default is what the bot uses when nothing is set.
    """

    name: NonEmpty
    type: OptionType
    default: OptionValue | None = None
    min: float | None = None
    max: float | None = None
    choices: list[str] | None = None


class Identity(_BotBase, kw_only=True, frozen=True, tag="identity"):
    """Answer to hello. games lists "game" (every variant) or "game/variant"
    entries; options declares engine options (protocol.md 2.1). Optional fields
    may be left out or sent as null."""

    id: Id
    protocol: int
    name: NonEmpty
    games: list[str]
    author: str | None = None
    version: str | None = None
    options: list[OptionSpec] | None = None

    def supports(self, game: str, variant: str) -> bool:
        """Whether the bot declared ``game`` (any variant) or ``game/variant``."""
        return game in self.games or f"{game}/{variant}" in self.games

    @property
    def declared_options(self) -> dict[str, OptionSpec]:
        """Options by name (a name declared twice: the last declaration)."""
        return {o.name: o for o in self.options or []}


class Ready(_BotBase, kw_only=True, frozen=True, tag="ready"):
    """Answer to ``newgame``: the bot has reset its state."""

    id: Id


class Action(_BotBase, kw_only=True, frozen=True, tag="action"):
    """Answer to ``go``: exactly one action, which must be in ``legal``."""

    id: Id
    action: NonEmpty


class Info(_BotBase, kw_only=True, frozen=True, tag="info"):
    """Optional search report before an ``action``; recorded, never required."""

    id: Id
    depth: int | None = None
    score: float | None = None
    pv: list[str] | None = None
    nodes: int | None = None
    playouts: Annotated[
        int | None,
        msgspec.Meta(
            description="a Monte-Carlo bot's playouts so far, sent instead of nodes "
            "(reports show playouts/s)"
        ),
    ] = None
    text: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The fields that were sent, for the game record."""
        return {
            k: v for k, v in msgspec.structs.asdict(self).items() if k != "id" and v is not None
        }


class Pong(_BotBase, kw_only=True, frozen=True, tag="pong"):
    """Answer to ``ping``."""

    id: Id


BotMessage = Identity | Ready | Action | Info | Pong
Answer = Identity | Ready | Action | Pong
"""Bot messages that end a request."""

EXPECTED_ANSWER: dict[type[msgspec.Struct], type[msgspec.Struct]] = {
    Hello: Identity,
    NewGame: Ready,
    Go: Action,
    Ping: Pong,
}
"""Which answer type each request expects."""


# --------------------------------------------------------------------------
# codecs

_T = TypeVar("_T")
_encoder = msgspec.json.Encoder()
# A union is no ``type[T]``, so msgspec's stubs cannot infer these decoders' types.
_bot_decoder: msgspec.json.Decoder[BotMessage] = msgspec.json.Decoder(BotMessage)
_arena_decoder: msgspec.json.Decoder[ArenaMessage] = msgspec.json.Decoder(ArenaMessage)

_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_NOT_BRACKET = bytes(c for c in range(256) if c not in b"[]{}")
_BRACKET_STEP = bytes(1 if c in b"[{" else 255 if c in b"]}" else 0 for c in range(256))
"""Opening brackets to +1, closing ones to -1 (255 read as a signed byte)."""


def nesting_depth(line: bytes) -> int:
    """The deepest nesting of ``[``/``{`` outside JSON strings in ``line``.

    All C-level passes (a regex drops the strings, ``translate`` keeps the
    brackets as +1/-1, ``accumulate`` sums them): about 30 ms for a 1 MiB line
    of brackets. An unterminated string is not dropped, which can only
    overstate the depth of a line that is invalid anyway.
    """
    steps = _STRING.sub(b"", line).translate(None, _NOT_BRACKET).translate(_BRACKET_STEP)
    return max(accumulate(memoryview(steps).cast("b")), default=0)


def _decode(decoder: msgspec.json.Decoder[_T], line: bytes | str, what: str) -> _T:
    """One decode that raises nothing but :class:`ProtocolError` for any line."""
    raw = line.encode(errors="surrogateescape") if isinstance(line, str) else line
    # Two counts settle almost every line: fewer brackets than the bound.
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and nesting_depth(raw) > MAX_DEPTH:
        raise ProtocolError(f"invalid {what} message: nested deeper than {MAX_DEPTH} levels", raw)
    try:
        return decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise ProtocolError(f"invalid {what} message: {exc}", raw) from None
    except RecursionError:  # cannot happen within MAX_DEPTH; never an arena crash
        raise ProtocolError(f"invalid {what} message: nested too deeply", raw) from None


def encode_line(msg: msgspec.Struct) -> bytes:
    """One message as one line. JSON escapes newlines, so the frame is unambiguous."""
    return _encoder.encode(msg) + b"\n"


def decode_bot_message(line: bytes | str) -> BotMessage:
    """Decode one line written by a bot; raise :class:`ProtocolError` naming the field.

    No other exception can come out of it, whatever the bytes
    (``tests/test_robust_decoding.py`` fuzzes it).
    The free text of an ``identity`` and an ``info`` comes out with its control
    characters made visible (:func:`shown`): this is where a bot's words become
    the arena's strings, so nothing built from them (records, check-bot, reports,
    the rating list) can carry an escape sequence to a terminal.
    """
    msg = _decode(_bot_decoder, line, "bot")
    if isinstance(msg, Identity | Info):
        raw = line.encode(errors="surrogateescape") if isinstance(line, str) else line
        if MAYBE_UNSAFE_JSON.search(raw):
            return shown(msg)
    return msg


def _text(value: Any) -> Any:
    return visible(value) if isinstance(value, str) else value


def shown(msg: Identity | Info) -> Identity | Info:
    """``msg`` with every string a person may read made visible (an ``action`` is not
    one: it is legal, the game's own text, or quoted with ``repr`` as illegal)."""
    if isinstance(msg, Info):
        pv = None if msg.pv is None else [visible(m) for m in msg.pv]
        return msgspec.structs.replace(msg, pv=pv, text=_text(msg.text))
    options = None
    if msg.options is not None:
        options = [
            msgspec.structs.replace(
                o,
                name=visible(o.name),
                default=_text(o.default),
                choices=None if o.choices is None else [visible(c) for c in o.choices],
            )
            for o in msg.options
        ]
    return msgspec.structs.replace(
        msg,
        name=visible(msg.name),
        games=[visible(g) for g in msg.games],
        author=_text(msg.author),
        version=_text(msg.version),
        options=options,
    )


def decode_arena_message(line: bytes | str) -> ArenaMessage:
    """Decode one line written by the arena (for bots written in Python and tests)."""
    return _decode(_arena_decoder, line, "arena")


# --------------------------------------------------------------------------
# framing


class LineReader:
    """Complete lines from a trio ``ReceiveStream``, with a hard length limit.

    Reads in chunks of at most 64 KiB and never holds more than
    ``max_line`` plus one chunk, so an over-long line costs bounded memory and
    time: :class:`LineTooLong` is raised as soon as ``max_line`` bytes have
    arrived without a newline. After that the stream cannot be resynchronised
    and every further call raises again; the caller should drop the peer.

    A trailing ``\\r`` is stripped (bots written on Windows) and blank lines
    are skipped, so neither counts as a protocol fault.
    """

    def __init__(self, stream: trio.abc.ReceiveStream, max_line: int = MAX_LINE) -> None:
        if max_line < 1:
            raise ValueError("max_line must be positive")
        self._stream = stream
        self.max_line = max_line
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no newline
        self._broken: ProtocolError | None = None
        self._eof = False

    async def receive_line(self) -> bytes:
        """The next non-blank line without its terminator.

        Raises :class:`LineTooLong` or :class:`EndOfStream` (with any
        unterminated rest of the stream as ``partial``).
        """
        while True:
            line = await self._next_raw_line()
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip():
                return line

    async def _next_raw_line(self) -> bytes:
        if self._broken is not None:
            raise self._broken
        while True:
            nl = self._buf.find(b"\n", self._scanned)
            if nl >= 0:
                if nl > self.max_line:
                    self._fail(nl)
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                self._scanned = 0
                return line
            self._scanned = len(self._buf)
            if self._scanned > self.max_line:
                self._fail(self._scanned)
            if self._eof:
                partial, self._buf = bytes(self._buf), bytearray()
                self._scanned = 0
                raise EndOfStream(partial)
            chunk = await self._stream.receive_some(_READ_CHUNK)
            if not chunk:
                self._eof = True
            else:
                self._buf += chunk

    def _fail(self, seen: int) -> NoReturn:
        head = bytes(self._buf[:200])
        self._buf = bytearray()
        self._scanned = 0
        self._broken = LineTooLong(
            f"line longer than {self.max_line} bytes (read {seen} bytes without a newline)",
            head,
        )
        raise self._broken


async def send_message(stream: trio.abc.SendStream, msg: msgspec.Struct) -> None:
    """Write one message as one line in a single ``send_all``."""
    await stream.send_all(encode_line(msg))


__all__ = [
    "MAX_DEPTH",
    "MAX_LINE",
    "PROTOCOL_VERSION",
    "EXPECTED_ANSWER",
    "Action",
    "Answer",
    "ArenaMessage",
    "BotMessage",
    "ClockInfo",
    "EndOfStream",
    "GameOver",
    "Go",
    "Hello",
    "Identity",
    "Info",
    "LineReader",
    "LineTooLong",
    "NewGame",
    "Ping",
    "Pong",
    "ProtocolError",
    "Quit",
    "OptionSpec",
    "OptionType",
    "OptionValue",
    "Ready",
    "Request",
    "SetOption",
    "decode_arena_message",
    "decode_bot_message",
    "encode_line",
    "nesting_depth",
    "send_message",
    "shown",
]
