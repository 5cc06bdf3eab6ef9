"""Talking to a bot over a :class:`~arena.engine.transport.Transport`: the handshake,
requests with deadlines, the ``info`` lines' bounds, and every fault raised as the
:class:`~arena.engine.errors.EngineError` the referee records.

:class:`Conversation` is what a local process (:class:`arena.engine.bot.Engine`), a
remote bot and the tests' scripted bot (``tests/scripted.py``) share; they differ in
how the far end comes to be and goes: a subclass attaches a transport
(:meth:`Conversation._attach`) when it starts the bot and provides :meth:`~Conversation.stop`,
and may override the hooks a process has (:meth:`~Conversation.thaw`/``_freeze``,
``_cpu_ns``, :meth:`~Conversation.cpu_seconds`, ``_annotate``).

Timing: the clock starts just before the request line is written (the bot may read it
and start thinking as soon as the write begins) and stops when its answer line has
been read, on trio's clock; ``Reply.elapsed`` is that interval less the transport's
leeway, exactly what the referee charges to the bot's clock.
"""

from __future__ import annotations

from collections import deque
from contextlib import AbstractAsyncContextManager, suppress
from typing import NoReturn, Self

import msgspec
import trio

from arena.engine.config import EngineConfig
from arena.engine.errors import (
    EngineError,
    EngineProtocolError,
    EngineTimeout,
    name_engine,
)
from arena.engine.exchange import Reply, decode_answer, is_text
from arena.engine.output import StderrTail
from arena.engine.transport import EXIT_DRAIN, Transport
from arena.protocol.messages import (
    EXPECTED_ANSWER,
    PROTOCOL_VERSION,
    EndOfStream,
    GameOver,
    Go,
    Hello,
    Identity,
    Info,
    NewGame,
    Ping,
    ProtocolError,
    Quit,
    Request,
    SetOption,
    encode_line,
)

EOF_GRACE = 0.5
"""After the bot's output closes, how long to wait for the end that tells crash from
misbehaviour."""
_STRAY_LINES = 20
"""Lines of output kept after one that is not a message (read for ``EXIT_DRAIN`` at most)."""


class Conversation:
    """Requests and answers with one bot over its current transport.

    Only one request is outstanding at a time. Ids are assigned here; the ``id`` of
    messages passed in is ignored. A fault stops the bot (:meth:`stop`) and is raised;
    the bot then needs starting again.
    """

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._nursery: trio.Nursery | None = None
        """Where the engine's background tasks run (a process's exit watch, a link's)."""
        self._nursery_cm: AbstractAsyncContextManager[trio.Nursery] | None = None
        self.identity: Identity | None = None
        self.faulted: EngineError | None = None
        """The fault that ended the last incarnation, ``None`` while healthy."""
        self.starts = 0
        self._tail = StderrTail(
            config.stderr_lines,
            config.stderr_bytes,
            head_lines=config.stderr_head_lines,
            head_bytes=config.stderr_head_bytes,
            line_bytes=config.stderr_line_bytes,
        )
        self._transport: Transport | None = None
        self._reading: trio.CancelScope | None = None
        """The scope of the request in progress, which the far end's end cuts short."""
        self._games = 0
        """``newgame`` requests answered over the current transport."""
        self._next_id = 0
        self._busy = False
        self._set_options: list[SetOption] = []

    # -- what a kind of bot provides ------------------------------------------

    async def start(self, game: str, variant: str, *, check_identity: bool = True) -> Identity:
        """Bring the bot up, :meth:`_attach` its transport, count it in :attr:`starts`,
        and return :meth:`_handshake`'s identity; a failure is an :class:`EngineError`."""
        raise NotImplementedError

    async def stop(self, *, graceful: bool = True) -> None:
        """End the bot for good and detach its transport (``_transport = None``);
        bounded, even when cancelled (a fault stops it under a shield)."""
        raise NotImplementedError

    async def restart(self, game: str, variant: str) -> Identity:
        """Stop whatever runs (no grace if it faulted) and start afresh."""
        await self.stop(graceful=self.faulted is None)
        return await self.start(game, variant)

    def thaw(self) -> None:
        """Let the bot run again (a process frozen between requests); nothing here."""

    def _freeze(self) -> None:
        """Keep the bot off the CPU until its next request; nothing here."""

    def _cpu_ns(self) -> int | None:
        """The bot's CPU time so far in nanoseconds, ``None`` where it is not counted."""
        return None

    def cpu_seconds(self) -> float | None:
        """CPU time the bot used so far (``None``: not counted, the wall time is charged)."""
        return None

    def round_trip_ms(self) -> float | None:
        """The transport's measured round trip in milliseconds (a remote bot's
        connection); ``None`` for pipes, which have no network to measure."""
        return getattr(self._transport, "rtt_ms", None)

    def _annotate(self, exc: EngineError) -> None:
        """Add what only this kind of bot knows to a fault (a memory kill, say)."""

    # -- state ----------------------------------------------------------------

    async def __aenter__(self) -> Self:
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        return self

    async def _close_tasks(self) -> None:
        """End the background tasks (the last step of a subclass's ``__aexit__``)."""
        assert self._nursery is not None and self._nursery_cm is not None
        self._nursery.cancel_scope.cancel()
        nursery_cm, self._nursery, self._nursery_cm = self._nursery_cm, None, None
        await nursery_cm.__aexit__(None, None, None)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        """The bot is attached and its far end has not ended."""
        return self._transport is not None and not self._transport.ended.is_set()

    @property
    def leeway(self) -> float:
        """The current transport's allowance per request (seconds)."""
        return 0.0 if self._transport is None else self._transport.leeway

    def stderr_tail(self, *, clear: bool = False) -> str:
        """The bounded tail of what the bot wrote besides its messages; ``clear``
        starts a fresh one (per game)."""
        text = self._tail.text()
        if clear:
            self._tail.clear()
        return text

    def _attach(self, transport: Transport) -> None:
        """A new incarnation of the bot talks over ``transport`` from now on."""
        self._transport = transport
        self._games = 0

    def _cut_short(self) -> None:
        """The far end ended: a read in progress only drains for :data:`EXIT_DRAIN` more.

        Called by whoever learns of the end (the process's reaper), rather than by a
        watcher task per request: spawning one for every answer cost more than the
        pipe round trip itself."""
        scope = self._reading
        if scope is not None:
            scope.deadline = min(scope.deadline, trio.current_time() + EXIT_DRAIN)

    async def _handshake(self, game: str, variant: str, *, check_identity: bool) -> Identity:
        """``hello`` and its checks (protocol version, game, options), once attached."""
        cfg = self.config
        hello = Hello(game=game, variant=variant, max_line=cfg.max_line, cores=cfg.threads)
        reply = await self.request(hello, timeout=cfg.handshake_timeout)
        ident = reply.answer
        assert isinstance(ident, Identity)
        if check_identity and ident.protocol != PROTOCOL_VERSION:
            await self._fault(
                EngineProtocolError(
                    f"speaks protocol version {ident.protocol}, arena speaks {PROTOCOL_VERSION}",
                    engine=self.name,
                )
            )
        if check_identity and not ident.supports(game, variant):
            await self._fault(
                EngineProtocolError(
                    f"does not support {game}/{variant} (it declared {ident.games})",
                    engine=self.name,
                )
            )
        if check_identity and cfg.options:
            from arena.engine.options import OptionError, check_options

            try:
                self._set_options = check_options(
                    ident.declared_options, cfg.options, bot=self.name
                )
            except OptionError as exc:
                await self._fault(EngineProtocolError(str(exc), engine=self.name))
        self.identity = ident
        return ident

    # -- requests -------------------------------------------------------------

    async def request(self, msg: Request, timeout: float) -> Reply:
        """Send ``msg`` (with a fresh id) and wait for its answer.

        ``timeout`` (plus the transport's leeway) counts from just before the line is
        written; writing itself is bounded by the same deadline. ``info`` lines are
        collected into the reply, the latest ``info_lines`` within ``info_bytes``; the
        rest are only counted (``Reply.infos_dropped``). Any fault stops the bot and is
        raised as an :class:`EngineError`; the bot then needs starting again.
        """
        transport = self._transport
        if transport is None:
            raise RuntimeError(f"{self.name}: not running; call start() or restart()")
        if self._busy:
            raise RuntimeError(f"{self.name}: a request is already outstanding")
        self._busy = True
        try:
            return await self._exchange(transport, msg, timeout)
        finally:
            self._busy = False

    async def new_game(self, msg: NewGame, timeout: float = 10.0) -> Reply:
        """Tell the bot a new game starts (after its ``setoption`` lines); it answers ``ready``.

        The stderr tail then starts afresh for the new game: what the bot wrote
        after the last game (in answer to ``gameover``, say) is written before
        ``ready``. An incarnation that has played no game yet keeps its start-up lines.
        """
        for option in self._set_options:
            await self.notify(option, timeout)
        reply = await self.request(msg, timeout)
        if self._games:
            self.stderr_tail(clear=True)
        self._games += 1
        return reply

    def use_options(self, options: list[SetOption]) -> None:
        """Send ``options`` before every later ``newgame`` (check-bot sets its own)."""
        self._set_options = list(options)

    async def go(self, msg: Go, timeout: float) -> Reply:
        """Ask for a decision; ``reply.answer`` is an ``Action`` (legality is the referee's)."""
        return await self.request(msg, timeout)

    async def ping(self, timeout: float = 5.0) -> float:
        """Round-trip time in seconds of a ``ping`` (less the leeway); faults as for any request."""
        return (await self.request(Ping(), timeout)).elapsed

    async def notify(self, msg: GameOver | Quit | SetOption, timeout: float = 1.0) -> None:
        """Write a message that has no answer. A dead or stuck bot is ignored here:
        the game is over, and its next request will report the fault.
        """
        transport = self._transport
        if transport is None or transport.ended.is_set():
            return
        with trio.move_on_after(timeout):
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await transport.send(encode_line(msg))
        # Stays frozen: the line waits in the pipe until its next request thaws it. A
        # bot thawed for its ``gameover`` would run on other games' time until then
        # (an idle engine of a tournament waits for its next pairing).

    async def _exchange(self, transport: Transport, msg: Request, timeout: float) -> Reply:
        """One request and its answer under a single cancel scope.

        The scope bounds the write (a bot that does not read its input) and the
        reads together: ``timeout`` plus the leeway from just before the write. One
        scope rather than one per step: on the hot path each costs about as much as a
        pipe round trip's own Python work. A fault found inside is raised from inside
        (``_fault`` shields its cleanup); the ends that leave the scope without a line
        (deadline, closed output, reader error) are judged after it.
        """
        self._next_id += 1
        msg = msgspec.structs.replace(msg, id=self._next_id)
        expected = EXPECTED_ANSWER[type(msg)]
        line = encode_line(msg)
        leeway = transport.leeway
        sent_at: float | None = None
        stdin_closed = False
        failure: Exception | None = None  # why the reader stopped without a line
        infos: deque[tuple[Info, int]] = deque()  # the latest ones, with their sizes
        info_size = dropped = 0
        max_infos, max_info_bytes = self.config.info_lines, self.config.info_bytes
        # Timed from just before the write: the bot may read the line and start
        # thinking as soon as the write begins, and on a loaded machine the
        # arena can lose the CPU for milliseconds right after it; a clock read
        # after the write would then charge less than the bot thought.
        used = self._cpu_ns()
        writing_at = trio.current_time()
        # Thawed inside the charged interval: the bot pays for its own thaw (microseconds).
        self.thaw()
        with trio.CancelScope(deadline=writing_at + timeout + leeway) as scope:
            try:
                await transport.send(line)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                stdin_closed = True
            else:
                sent_at = writing_at
                self._reading = scope  # the far end's end cuts the wait short (_cut_short)
                if transport.ended.is_set():
                    scope.deadline = min(scope.deadline, sent_at + EXIT_DRAIN)
                try:
                    while True:
                        try:
                            raw = await transport.receive()
                        except (ProtocolError, EndOfStream, trio.BrokenResourceError) as exc:
                            failure = exc
                            break
                        received_at = trio.current_time()
                        answer = decode_answer(raw, msg, expected, engine=self.name)
                        if isinstance(answer, EngineError):
                            if is_text(raw):  # not a message: what else it wrote
                                await self._stray_stdout(transport, raw)
                            await self._fault(answer, _net(received_at - sent_at, leeway))
                        if isinstance(answer, Info):
                            if len(raw) > max_info_bytes:  # would evict every other one
                                dropped += 1
                                continue
                            infos.append((answer, len(raw)))
                            info_size += len(raw)
                            while infos and (len(infos) > max_infos or info_size > max_info_bytes):
                                info_size -= infos.popleft()[1]
                                dropped += 1
                            continue
                        kept = tuple(info for info, _ in infos)
                        now = None if used is None else self._cpu_ns()
                        self._freeze()  # nothing of it runs until its next request
                        cpu_ns = None if now is None or used is None else now - used
                        return Reply(answer, kept, sent_at, received_at, dropped, cpu_ns, leeway)
                finally:
                    self._reading = None
        if stdin_closed:
            await self._closed_pipe(transport, "closed its stdin", None)
        if sent_at is None:
            await self._fault(
                EngineTimeout(f"did not read its input for {timeout:.3f} s", engine=self.name)
            )
        elapsed = _net(trio.current_time() - sent_at, leeway)
        if isinstance(failure, ProtocolError):  # LineTooLong, the reader's only one
            await self._fault(EngineProtocolError(str(failure), engine=self.name), elapsed)
        if failure is not None:  # EndOfStream, BrokenResourceError
            await self._closed_pipe(transport, "closed its stdout", sent_at)
        if transport.ended.is_set():
            await self._ended(transport, sent_at)
        await self._fault(
            EngineTimeout(f"no answer within {timeout:.3f} s", engine=self.name), elapsed
        )

    async def _stray_stdout(self, transport: Transport, first: bytes | None) -> None:
        """Keep a line of output that is not a message (``first``), and the lines that
        follow it within a moment (bounded in lines and time), among the bot's
        output: a runtime that cannot start (a JVM) writes its reasons there, not to
        stderr, and may exit before the arena's first line reaches it."""
        tail = self._tail
        if first is not None:
            tail.feed_stdout(first[: tail.line_bytes])
        with trio.move_on_after(EXIT_DRAIN):
            for _ in range(_STRAY_LINES - (first is not None)):
                try:
                    raw = await transport.receive()
                except (
                    ProtocolError,
                    EndOfStream,
                    trio.BrokenResourceError,
                    trio.ClosedResourceError,
                ):
                    break
                tail.feed_stdout(raw[: tail.line_bytes])

    async def _closed_pipe(
        self, transport: Transport, what: str, sent_at: float | None
    ) -> NoReturn:
        """A direction closed: the end of the bot if it ends soon, else a protocol fault."""
        with trio.move_on_after(EOF_GRACE):
            await transport.ended.wait()
        if transport.ended.is_set():
            await self._ended(transport, sent_at)
        elapsed = None if sent_at is None else _net(trio.current_time() - sent_at, transport.leeway)
        await self._fault(
            EngineProtocolError(f"{what} but keeps running", engine=self.name), elapsed
        )

    async def _ended(self, transport: Transport, sent_at: float | None) -> NoReturn:
        """The far end is gone: its own fault (a crash, for a process)."""
        await self._stray_stdout(transport, None)  # what it wrote there before it went
        elapsed = None if sent_at is None else _net(trio.current_time() - sent_at, transport.leeway)
        await self._fault(name_engine(transport.end_fault(), self.name), elapsed)

    async def _fault(self, exc: EngineError, elapsed: float | None = None) -> NoReturn:
        """Record the fault, stop the bot (shielded: it must end even if we are
        being cancelled; every wait inside is bounded), attach its last words, raise."""
        if elapsed is not None and exc.elapsed is None:
            exc.elapsed = elapsed
        self.faulted = exc
        with trio.CancelScope(shield=True):
            await self.stop(graceful=False)
        exc.stderr_tail = self._tail.text()
        self._annotate(exc)
        raise exc


def _net(raw: float, leeway: float) -> float:
    """Seconds charged for ``raw`` seconds of a request: less the leeway, never negative."""
    return max(0.0, raw - leeway)


__all__ = ["EOF_GRACE", "Conversation"]
