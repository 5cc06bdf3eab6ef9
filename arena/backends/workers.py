"""Worker processes: the same game slots in several processes, so a tournament uses every core.

One trio loop refereeing instant bots spends as much CPU per ply as the bots do,
so a single arena process would cap a tournament at about one core. The parent
therefore runs worker processes, each running
:class:`~arena.backends.slots.GameSlots` (``arena run`` forks them before trio
starts, :func:`fork_workers`; any other caller, and a replacement for a dead
worker, spawns ``python -m arena.backends.workers``), and speaks to them in JSON lines (msgspec,
the same framing as the bot protocol): it hands out work items, a few at a
time, and receives each finished game record, which it alone stores. That keeps
one writer of the results database, and a pair task a plain value in and a
plain record out, as the Ray backend (``arena/backends/raypool.py``) has them too.

Failure handling: a worker that dies loses only its unfinished games; their work
items go back on the queue for the other workers. Workers run in their own
session (a terminal's Ctrl-C reaches only the parent, which coordinates the
shutdown) and die with the parent (``PR_SET_PDEATHSIG``), and their bots die
with them.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress

import msgspec
import trio

from arena.backends.pool import FaultGate, Verdict, WorkItem
from arena.backends.slots import FinishedGame, GameSlots, RemoteGate
from arena.engine import sandbox as confinement
from arena.engine.process import ChildProcess, child_preexec, fork, spawn
from arena.match.events import EVENT_BACKLOG, EventSink, GameMoved, GameStarted, LiveEvent
from arena.match.record import GameRecord
from arena.plan.config import ProtocolSettings, SandboxSettings, parse_config
from arena.protocol.messages import EndOfStream, LineReader

MAX_PIPE_LINE = 64 << 20
"""Game records can be long (a marathon with stderr tails): allow 64 MiB lines."""

SHUTDOWN_TIMEOUT = 5.0
"""How long a worker may take to kill its bots and exit once told to stop."""


class Setup(msgspec.Struct, tag="setup", frozen=True):
    config_text: str
    config_path: str
    slots: int
    protocol: ProtocolSettings | None = None
    """The command line's ``[protocol]`` settings, which the file's text lacks."""
    events: bool = False
    """Stream each game's start and moves too (a live web view is watching)."""
    sandbox: SandboxSettings | None = None
    """The parent's resolved sandbox (mode decided, results folder hidden)."""
    inherited: tuple[str | None, str | None] | None = None
    """The parent's ``/etc`` view and bwrap probe answer, which the worker takes
    rather than making its own (:func:`arena.engine.sandbox.inherit`)."""
    cores: list[str] | None = None
    """The cores of each of this worker's slots (affinity), decided by the parent."""


class Work(msgspec.Struct, tag="work", frozen=True):
    item: WorkItem


class End(msgspec.Struct, tag="end", frozen=True):
    """No more work: finish what you have, then exit."""


class PairDone(msgspec.Struct, tag="pair_done", frozen=True):
    key: str


class Skipped(msgspec.Struct, tag="skipped", frozen=True):
    """A game not played: one of its bots is out (the arena counts it)."""

    key: str
    pair_key: str


class Usage(msgspec.Struct, tag="usage", frozen=True):
    """The worker's own CPU seconds, sent last, so the arena can report its CPU share."""

    cpu: float


ToWorker = Setup | Work | End | Verdict
FromWorker = FinishedGame | PairDone | Skipped | Usage | GameStarted | GameMoved

_to_worker = msgspec.json.Decoder(ToWorker)
_from_worker = msgspec.json.Decoder(FromWorker)
_encoder = msgspec.json.Encoder()


def _line(msg: msgspec.Struct) -> bytes:
    return _encoder.encode(msg) + b"\n"


class WorkerError(RuntimeError):
    """A worker process failed in a way that is not a bot's fault."""


# --------------------------------------------------------------------------- worker side


async def worker_main() -> None:
    """Serve one parent over stdin/stdout until ``end`` (or until the parent goes)."""
    stdin = trio.lowlevel.FdStream(os.dup(0))
    stdout = trio.lowlevel.FdStream(os.dup(1))
    reader = LineReader(stdin, MAX_PIPE_LINE)
    try:
        setup = _to_worker.decode(await reader.receive_line())
    except EndOfStream:  # forked ahead, then not needed (or the parent is gone)
        return
    assert isinstance(setup, Setup)
    config = parse_config(setup.config_text, setup.config_path)
    if setup.protocol is not None:
        config = msgspec.structs.replace(config, protocol=setup.protocol)
    if setup.sandbox is not None:
        config = msgspec.structs.replace(config, sandbox=setup.sandbox)
    if setup.inherited is not None:
        confinement.inherit(*setup.inherited)
    slots = GameSlots(config, setup.slots, setup.cores)
    gate = RemoteGate()
    lock = trio.Lock()
    send_work, receive_work = trio.open_memory_channel[WorkItem](float("inf"))

    async def write(msg: msgspec.Struct) -> None:
        async with lock:
            await stdout.send_all(_line(msg))

    async def emit(key: str, pair_key: str, record: GameRecord) -> None:
        answer = gate.expect(key, record)
        await write(FinishedGame(key, pair_key, record))
        await gate.wait(key, answer)

    async def skipped(key: str, pair_key: str) -> None:
        await write(Skipped(key, pair_key))

    async def pair_done(item: WorkItem) -> None:
        await write(PairDone(item.task.key))

    send_events, receive_events = trio.open_memory_channel[LiveEvent](EVENT_BACKLOG)
    on_event: EventSink | None = None
    if setup.events:

        def on_event(event: LiveEvent) -> None:
            with suppress(trio.WouldBlock):
                send_events.send_nowait(event)

    async def forward_events() -> None:
        async for event in receive_events:
            await write(event)

    async with trio.open_nursery() as nursery:

        async def feed() -> None:
            async with send_work:
                while True:
                    try:
                        msg = _to_worker.decode(await reader.receive_line())
                    except EndOfStream:
                        # The parent is gone or stopping: abandon running games.
                        nursery.cancel_scope.cancel()
                        return
                    if isinstance(msg, End):
                        return
                    if isinstance(msg, Verdict):
                        gate.update(msg)
                    elif isinstance(msg, Work):
                        await send_work.send(msg.item)

        nursery.start_soon(feed)
        if on_event is not None:
            nursery.start_soon(forward_events)
        await slots.run(
            receive_work,
            emit,
            pair_done=pair_done,
            skip=gate.out,
            skipped=skipped,
            on_event=on_event,
        )
        nursery.cancel_scope.cancel()  # the event forwarder
    usage = resource.getrusage(resource.RUSAGE_SELF)
    await write(Usage(usage.ru_utime + usage.ru_stime))


def _forked_main() -> int:
    trio.run(worker_main)
    return 0


def fork_workers(count: int) -> list[ChildProcess]:
    """``count`` workers forked from this process, for a :class:`WorkerPool` to take.

    Called before trio runs (:func:`arena.engine.process.fork`): a forked worker
    has the arena's modules loaded already, where a spawned one spends about
    0.3 s importing them, on the way to the first game. A worker that dies is
    replaced by a spawned one, as before.
    """
    return [fork(_forked_main) for _ in range(count)]


# --------------------------------------------------------------------------- parent side


class WorkerPool:
    """Runs work items on ``processes`` worker processes with ``slots`` games each
    (a :class:`~arena.backends.pool.Pool`)."""

    def __init__(
        self,
        config_text: str,
        config_path: str,
        *,
        processes: int,
        slots: int,
        on_record: Callable[[str, str, GameRecord], Awaitable[None]],
        gate: FaultGate | None = None,
        protocol: ProtocolSettings | None = None,
        on_event: EventSink | None = None,
        sandbox: SandboxSettings | None = None,
        ready: list[ChildProcess] | None = None,
        cores: list[str] | None = None,
    ) -> None:
        self.ready = list(ready or [])
        self.cores = cores
        """Every slot's cores (affinity), ``slots`` of them to each worker in turn."""
        """Workers forked ahead (:func:`fork_workers`), used before any is spawned."""
        self.setup = Setup(
            config_text,
            config_path,
            slots,
            protocol,
            events=on_event is not None,
            sandbox=sandbox,
            inherited=confinement.shared(),
        )
        self.on_event = on_event
        self.processes = processes
        self.on_record = on_record
        self.gate = gate or FaultGate()
        self.told: dict[int, Callable[[Verdict], Awaitable[None]]] = {}
        """Each live worker's way to be told a verdict (by its process id)."""
        self._last: tuple[list[str], list[str]] | None = None
        self.queue: deque[WorkItem] = deque()
        self.pgids: set[int] = set()
        self.worker_cpu = 0.0
        """CPU seconds the worker processes spent themselves (not their bots)."""
        self._wakeup = trio.Event()

    async def run(self, items: list[WorkItem]) -> None:
        """Play every item; return when all are done (re-queuing a dead worker's items)."""
        self.queue.extend(items)
        try:
            async with trio.open_nursery() as nursery:
                for number in range(self.processes):
                    nursery.start_soon(self._drive, number)
        finally:
            ready, self.ready = self.ready, []
            await release(ready)

    def kill_all(self) -> None:
        """Second Ctrl-C: SIGKILL every worker (its bots die with it)."""
        for pgid in [*self.pgids, *(process.pid for process in self.ready)]:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)

    def summary(self) -> str | None:
        """Nothing to add on this machine: the games stored say it all."""
        return None

    def _next(self) -> WorkItem | None:
        while self.queue:
            item = self.queue.popleft()
            if self.gate.admits(item):
                return item
        return None

    async def _tell(self, pid: int, ack: str | None) -> None:
        """Answer worker ``pid``'s game ``ack``, and tell every other worker if the
        verdict changed (a bot out or with a first fault)."""
        verdict = self.gate.verdict(ack)
        changed = self._last != (verdict.out, verdict.faulted)
        self._last = (verdict.out, verdict.faulted)
        for other, tell in list(self.told.items()):
            if other == pid:
                await tell(verdict)
            elif changed:
                await tell(msgspec.structs.replace(verdict, ack=None))

    async def _drive(self, number: int) -> None:
        """Feed one worker process and collect its records; restart on its death.

        A worker that dies three times in a row without finishing a game is a
        fault of the arena or the machine, not of a bot: give up loudly.
        """
        failures = 0
        while self.queue:
            lost, progressed = await self._one_process(number)
            if lost:
                self.queue.extendleft(reversed(lost))
                failures = 0 if progressed else failures + 1
                if failures >= 3:
                    raise WorkerError("a worker process died three times without finishing a game")

    async def _one_process(self, number: int) -> tuple[list[WorkItem], bool]:
        """Run worker ``number`` (its slots' cores are the ``number``-th share) until the
        queue is empty.

        Returns the items it did not finish and whether it finished any game.
        """
        if self.ready:
            process = self.ready.pop()
        else:
            process = spawn(
                [sys.executable, "-m", "arena.backends.workers"],
                stderr=None,  # a worker's own errors go straight to the arena's stderr
                start_new_session=True,
                preexec_fn=child_preexec([]),
            )
        self.pgids.add(process.pid)
        outstanding: dict[str, tuple[WorkItem, set[int]]] = {}
        ended = False
        progressed = False
        try:
            stdin = process.stdin_pipe

            broken = False
            writing = trio.Lock()  # other workers' games may tell this one a verdict

            async def send(msg: msgspec.Struct) -> None:
                # A worker killed between two messages cannot be written to: stop
                # writing, and what it held is counted lost once its output ends.
                nonlocal broken
                async with writing:
                    if broken:
                        return
                    try:
                        await stdin.send_all(_line(msg))
                    except trio.BrokenResourceError:
                        broken = True

            setup = self.setup
            if self.cores is not None:
                first = number * setup.slots
                mine = self.cores[first : first + setup.slots]
                setup = msgspec.structs.replace(setup, cores=mine or None)
            await send(setup)
            await send(self.gate.verdict())
            self.told[process.pid] = send

            async def dispatch() -> None:
                nonlocal ended
                if ended:
                    return
                item = self._next()
                if item is None:
                    if not outstanding:
                        ended = True
                        await send(End())
                    return
                outstanding[item.task.key] = (item, set(item.numbers))
                await send(Work(item))

            for _ in range(2 * self.setup.slots):  # one queued per slot hides the round trip
                await dispatch()
            reader = LineReader(process.stdout_pipe, MAX_PIPE_LINE)
            while True:
                try:
                    msg = _from_worker.decode(await reader.receive_line())
                except (EndOfStream, trio.BrokenResourceError):
                    break
                if isinstance(msg, GameStarted | GameMoved):
                    if self.on_event is not None:
                        self.on_event(msg)
                elif isinstance(msg, Usage):
                    self.worker_cpu += msg.cpu
                elif isinstance(msg, FinishedGame):
                    entry = outstanding.get(msg.pair_key)
                    if entry is not None:
                        entry[1].discard(int(msg.key.rsplit("/", 1)[1]))
                    progressed = True
                    await self.on_record(msg.key, msg.pair_key, msg.record)
                    if self.gate.answers(msg.record):
                        await self._tell(process.pid, msg.key)
                elif isinstance(msg, Skipped):
                    entry = outstanding.get(msg.pair_key)
                    if entry is not None:
                        entry[1].discard(int(msg.key.rsplit("/", 1)[1]))
                    self.gate.skipped(1)
                else:
                    outstanding.pop(msg.key, None)
                    await dispatch()
                    if not outstanding and not ended:
                        ended = True
                        await send(End())
            await process.wait()
            lost = [
                WorkItem(item.task, sorted(left)) for item, left in outstanding.values() if left
            ]
            if lost and process.returncode == 0:
                raise WorkerError(f"a worker exited leaving {len(lost)} pair tasks unfinished")
            return lost, progressed
        finally:
            self.told.pop(process.pid, None)
            with trio.CancelScope(shield=True):
                await _finish(process)
            self.pgids.discard(process.pid)


async def _finish(process: ChildProcess) -> None:
    """Close the worker's input (it abandons its games), wait a while, then kill its group."""
    await process.stdin_pipe.aclose()
    with trio.move_on_after(SHUTDOWN_TIMEOUT):
        await process.wait()
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
    await process.stdout_pipe.aclose()


async def release(processes: list[ChildProcess]) -> None:
    """End workers forked ahead and never given work (their input closed: they exit)."""
    with trio.CancelScope(shield=True):
        for process in processes:
            await _finish(process)


if __name__ == "__main__":
    try:
        trio.run(worker_main)
    except KeyboardInterrupt:  # pragma: no cover - workers ignore the terminal's Ctrl-C
        sys.exit(130)
