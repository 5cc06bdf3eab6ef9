"""A scripted bot behind a :class:`~arena.engine.transport.Transport`, for the referee's
and the clock's rules under trio's mock clock.

The bot is an async function of a :class:`BotSide` (its stdin, stdout and exit), run
as a task when the engine starts it: it reads the arena's lines, sleeps for its think
time on trio's clock (mock time under ``autojump_clock``: no wall time passes), writes
whatever it likes (answers, ``info`` lines, garbage, over-long lines), stops reading,
closes its output or exits. The engine drives it through the same
:class:`~arena.engine.conversation.Conversation` code as a real process, and
:class:`ScriptedEngine` is a :class:`~arena.engine.player.Player` for ``play_game``.

Most bots answer like an honest one and misbehave at one point: :func:`honest` builds
the loop (``hello``, ``newgame``, ``ping``, ``gameover``, ``quit``) and hands each
``go`` to a function of yours.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import NoReturn

import msgspec
import trio

from arena.engine.config import EngineConfig
from arena.engine.conversation import Conversation
from arena.engine.errors import EngineCrashed, EngineError, describe_exit
from arena.engine.record import SandboxRecord
from arena.engine.sandbox import Sandbox
from arena.protocol.messages import (
    MAX_LINE,
    PROTOCOL_VERSION,
    Action,
    ArenaMessage,
    EndOfStream,
    GameOver,
    Go,
    Hello,
    Identity,
    Info,
    LineTooLong,
    NewGame,
    Ping,
    Pong,
    Quit,
    Ready,
    SetOption,
    decode_arena_message,
    encode_line,
)

PIPE_BYTES = 65536
"""What the arena may write before the bot reads (a Linux pipe's default)."""


class ScriptedTransport:
    """Both pipes of a scripted bot: lines in (bounded, like a pipe), lines out, an exit."""

    def __init__(self, *, max_line: int = MAX_LINE, leeway: float = 0.0) -> None:
        self.leeway = leeway
        self.ended = trio.Event()
        self.max_line = max_line
        self.returncode: int | None = None
        self.capacity = PIPE_BYTES
        self.written: list[bytes] = []
        """Every line the arena wrote, in order (what the bot was sent)."""
        self._in: deque[bytes] = deque()
        self._in_bytes = 0
        self._in_closed = False
        self._out: deque[bytes] = deque()
        self._out_closed = False
        self._in_lot = trio.lowlevel.ParkingLot()
        self._out_lot = trio.lowlevel.ParkingLot()

    # -- the arena's side (the Transport) ---------------------------------------

    async def send(self, line: bytes) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._in_closed:
                raise trio.BrokenResourceError("the bot's stdin is closed")
            if self._in_bytes + len(line) <= self.capacity:
                break
            await self._in_lot.park()  # a full pipe: wait for the bot to read
        self._in.append(line)
        self._in_bytes += len(line)
        self.written.append(line)
        self._in_lot.unpark_all()

    async def receive(self) -> bytes:
        await trio.lowlevel.checkpoint_if_cancelled()
        while not self._out:
            if self._out_closed:
                raise EndOfStream()
            await self._out_lot.park()
        line = self._out.popleft()
        if len(line) > self.max_line:
            self._out.clear()
            self._out_closed = True
            raise LineTooLong(f"line longer than {self.max_line} bytes", line)
        self._out_lot.unpark_all()
        return line

    def end_fault(self) -> EngineError:
        rc = self.returncode
        assert rc is not None
        return EngineCrashed(describe_exit(rc), returncode=rc)

    # -- the bot's side --------------------------------------------------------

    async def bot_read(self) -> bytes:
        while not self._in:
            if self._in_closed:
                raise EndOfStream()
            await self._in_lot.park()
        line = self._in.popleft()
        self._in_bytes -= len(line)
        self._in_lot.unpark_all()
        return line

    def bot_write(self, line: bytes) -> None:
        if not self._out_closed:
            self._out.append(line)
            self._out_lot.unpark_all()

    def close_output(self) -> None:
        self._out_closed = True
        self._out_lot.unpark_all()

    def exit(self, returncode: int, *, held: bool = False) -> None:
        """The process is gone: both pipes close (what it wrote can still be read),
        unless a helper it left behind ``held`` its stdout open."""
        if self.returncode is None:
            self.returncode = returncode
        self._in_closed = True
        if not held:
            self.close_output()
        self._in_lot.unpark_all()
        self.ended.set()


class BotSide:
    """What a script sees of its bot: read a message, write lines, stop, exit."""

    def __init__(self, transport: ScriptedTransport) -> None:
        self.transport = transport

    async def read(self) -> ArenaMessage:
        """The arena's next message (as the bot's stdin delivers it)."""
        return decode_arena_message(await self.transport.bot_read())

    def send(self, msg: msgspec.Struct | bytes) -> None:
        """Write a message, or a raw line (without its newline) as it is."""
        self.transport.bot_write(msg if isinstance(msg, bytes) else encode_line(msg)[:-1])

    def answer(self, request: ArenaMessage, action: str | None = None) -> None:
        """The honest answer to ``request``: ``action`` (default the first legal one)."""
        if isinstance(request, Hello):
            self.send(
                Identity(
                    id=request.id, protocol=PROTOCOL_VERSION, name="scripted", games=[request.game]
                )
            )
        elif isinstance(request, NewGame):
            self.send(Ready(id=request.id))
        elif isinstance(request, Go):
            self.send(Action(id=request.id, action=action or request.legal[0]))
        elif isinstance(request, Ping):
            self.send(Pong(id=request.id))

    def stop_reading(self) -> None:
        """From now on nothing more fits in its stdin: the arena's next write blocks."""
        self.transport.capacity = 0

    def close_output(self) -> None:
        self.transport.close_output()

    def exit(self, returncode: int, *, held: bool = False) -> NoReturn:
        """The process ends here with ``returncode`` (the script runs no further);
        ``held``: a helper of it keeps its stdout open (no end of stream)."""
        self.transport.exit(returncode, held=held)
        raise Exited(returncode)


class Exited(Exception):
    """Raised by :meth:`BotSide.exit` to end the script, as a process ends."""


Script = Callable[[BotSide], Awaitable[None]]
OnGo = Callable[[BotSide, int, Go], Awaitable[None]]
"""What a bot does with its ``n``-th ``go`` (counted from 0 over its whole life)."""


def think(*seconds: float) -> OnGo:
    """Answer the ``n``-th ``go`` after ``seconds[n]`` (the last one repeats), honestly."""

    async def on_go(bot: BotSide, n: int, go: Go) -> None:
        await trio.sleep(seconds[min(n, len(seconds) - 1)])
        bot.answer(go)

    return on_go


def honest(
    on_go: OnGo | None = None,
    *,
    on_newgame: Callable[[BotSide, NewGame], Awaitable[None]] | None = None,
) -> Script:
    """A bot that answers everything at once except ``go`` (``on_go``) and, if
    given, ``newgame`` (``on_newgame``), and exits on ``quit``."""
    count = 0
    decide = on_go or think(0.0)

    async def script(bot: BotSide) -> None:
        nonlocal count
        while True:
            try:
                msg = await bot.read()
            except EndOfStream:  # the arena closed its stdin
                return
            if isinstance(msg, Quit):
                return
            if isinstance(msg, (GameOver, SetOption)):
                continue
            if isinstance(msg, Go):
                count += 1
                await decide(bot, count - 1, msg)
            elif isinstance(msg, NewGame) and on_newgame is not None:
                await on_newgame(bot, msg)
            else:
                bot.answer(msg)

    return script


def info_lines(n: int, text: str = "") -> OnGo:
    """Answer each ``go`` at once after ``n`` ``info`` lines (``depth`` 1..n)."""

    async def on_go(bot: BotSide, _: int, go: Go) -> None:
        for depth in range(1, n + 1):
            bot.send(Info(id=go.id, depth=depth, text=text or None))
        bot.answer(go)

    return on_go


class ScriptedEngine(Conversation):
    """A :class:`~arena.engine.player.Player` whose bot is a script, not a process.

    Each start runs ``script`` afresh on a new :class:`ScriptedTransport` in
    ``nursery``; the script's return is the bot's exit with code 0, :meth:`stop`
    its SIGKILL (-9). ``transports`` keeps every incarnation's transport."""

    def __init__(
        self,
        name: str,
        script: Script,
        nursery: trio.Nursery,
        *,
        leeway: float = 0.0,
        **config: object,
    ) -> None:
        settings: dict[str, object] = {"sandbox": Sandbox(mode="none"), **config}
        super().__init__(EngineConfig(name=name, command=["scripted"], **settings))  # type: ignore[arg-type]
        self.script = script
        self._nursery = nursery
        self._leeway = leeway
        self._scope: trio.CancelScope | None = None
        self.transports: list[ScriptedTransport] = []

    @property
    def sandbox_record(self) -> SandboxRecord:
        return SandboxRecord(mode="none")

    @property
    def transport(self) -> ScriptedTransport:
        """The current (or last) incarnation's transport."""
        return self.transports[-1]

    async def start(self, game: str, variant: str, *, check_identity: bool = True) -> Identity:
        if self._transport is not None:
            raise RuntimeError(f"{self.name}: already running; use restart()")
        self.faulted = self.identity = None
        self._tail.clear()
        transport = ScriptedTransport(max_line=self.config.max_line, leeway=self._leeway)
        self.transports.append(transport)
        self.starts += 1
        self._attach(transport)
        scope = self._scope = trio.CancelScope()

        async def run() -> None:
            with scope:
                with suppress(Exited):
                    await self.script(BotSide(transport))
                if not transport.ended.is_set():  # ran to its end
                    transport.exit(0)
            if transport.ended.is_set() and self._transport is transport:
                self._cut_short()

        self._nursery.start_soon(run)
        return await self._handshake(game, variant, check_identity=check_identity)

    async def stop(self, *, graceful: bool = True) -> None:
        transport = self._transport
        if transport is None:
            return
        if graceful and not transport.ended.is_set():
            with trio.move_on_after(self.config.quit_timeout):
                await self.notify(Quit())
                await transport.ended.wait()
        if self._scope is not None:
            self._scope.cancel()
        transport.exit(-9)
        self._transport = None


@asynccontextmanager
async def scripted(
    *scripts: Script, leeway: Sequence[float] = (), **config: object
) -> AsyncIterator[list[ScriptedEngine]]:
    """Engines named ``p0``, ``p1``... on ``scripts``; their bots end with the block."""
    async with trio.open_nursery() as nursery:
        engines = [
            ScriptedEngine(
                f"p{i}", s, nursery, leeway=leeway[i] if i < len(leeway) else 0.0, **config
            )
            for i, s in enumerate(scripts)
        ]
        yield engines
        nursery.cancel_scope.cancel()
