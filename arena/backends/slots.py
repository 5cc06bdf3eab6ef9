"""Plays pair tasks on one trio loop: game slots, engine pools, one record per finished game.

This is the unit of execution that every backend shares. The tournament runs it
in its own process (one worker) or in several worker processes
(``arena/backends/workers.py``), each fed pair tasks and handing back game records, so a
pair task stays a plain value in and a plain record out.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack, suppress
from typing import Any

import msgspec
import trio

from arena.backends.pool import FaultGate, Verdict, WorkItem
from arena.engine import cpuset
from arena.engine.bot import Engine
from arena.engine.gateway import Gateway
from arena.engine.remote import RemoteEngine
from arena.games import get_game
from arena.match.clock import CPU_CEILING, TimeControl
from arena.match.events import EventSink, GameStarted
from arena.match.record import GameRecord
from arena.match.referee import RefereeSettings, play_game
from arena.plan.config import TournamentConfig
from arena.plan.launch import entry_config


class FinishedGame(msgspec.Struct, tag="record", frozen=True):
    """One finished game on its way from where it was played (a worker process, a Ray
    actor) to the arena process, which alone stores it."""

    key: str
    pair_key: str
    record: GameRecord


Emit = Callable[[str, str, GameRecord], Awaitable[None]]
"""``emit(game_key, pair_key, record)``: called once per finished game."""

Skipped = Callable[[str, str], Awaitable[None]]
"""``skipped(game_key, pair_key)``: called once per game not played (a bot disqualified)."""

VERDICT_TIMEOUT = 60.0
"""How long a worker process or actor waits for the arena's verdict on a game it sent
before it starts its next one on what it knows (the arena is storing a game: seconds at most)."""


class RemoteGate:
    """Where games are played away from the arena: the last :class:`Verdict` received.

    A game of a bot that is out is skipped. A game that may change the verdict
    (one with a fault, or of a bot with a fault) is followed by a wait for the
    arena's answer to it before the slot takes its next game, as the arena's own
    slots wait for the game to be stored: so a bot plays the same games wherever
    they run (``[faults] restart = false``: none after its first fault in a slot).
    """

    def __init__(self) -> None:
        self.verdict = Verdict(-1, [], [])
        self._waiting: dict[str, trio.Event] = {}

    def update(self, verdict: Verdict) -> None:
        """Take a verdict (trio thread): newer than the last one, or answering a game."""
        if verdict.version > self.verdict.version:
            self.verdict = msgspec.structs.replace(verdict, ack=None)
        if verdict.ack is not None and verdict.ack in self._waiting:
            self._waiting.pop(verdict.ack).set()

    def out(self, name: str) -> bool:
        return name in self.verdict.out

    def expect(self, key: str, record: GameRecord) -> trio.Event | None:
        """The event to wait on after sending ``record``, if the arena answers it.

        Made before the record is sent: the answer may come back before the wait.
        """
        faulted = self.verdict.faulted
        if record.faulty is None and not any(name in faulted for name in record.players):
            return None
        self._waiting[key] = event = trio.Event()
        return event

    async def wait(self, key: str, event: trio.Event | None) -> None:
        if event is not None:
            with trio.move_on_after(VERDICT_TIMEOUT):
                await event.wait()
            self._waiting.pop(key, None)


def affinity_in_force(config: TournamentConfig) -> bool:
    """Whether games get cores of their own: as the file says, else where they fit."""
    if config.affinity is not None:
        return config.affinity
    return cpuset.fits(config.concurrency, config.game_cores())


def slot_cores(config: TournamentConfig, slots: int) -> list[str] | None:
    """The cores of each of the machine's ``slots`` game slots, where affinity is in
    force (``arena/engine/cpuset.py``); ``None``: games run on every core.

    More slots than fit (``--workers`` rounds the slots per worker up) share cores
    from the first slot's again.
    """
    if not affinity_in_force(config) or config.sandbox.mode != "bwrap" or cpuset.missing():
        return None
    size = config.game_cores()
    room = max(1, len(cpuset.machine_cores()) // size)
    return [cpuset.slot_cpus(i % room, size) for i in range(slots)]


def describe_affinity(config: TournamentConfig) -> str:
    """The affinity in force, for the tournament's start line."""
    size = config.game_cores()
    if config.sandbox.mode != "bwrap":
        return "games on every core (no sandbox)"
    if config.backend == "ray":
        return "games on every core of their node (affinity: not on ray)"
    if not affinity_in_force(config):
        cores = len(cpuset.machine_cores())
        why = "affinity = false" if config.affinity is False else f"only {cores} cores"
        return f"games on every core ({why})"
    missing = cpuset.missing()
    if missing is not None:
        return f"games on every core: {missing}, affinity not enforced"
    return f"each game on {size} core{'s' if size > 1 else ''} of its own (affinity)"


def describe_clock(config: TournamentConfig) -> str:
    """What a move is charged, for the tournament's start line."""
    if config.clock == "wall":
        return "wall time charged"
    from arena.engine import cgroups

    if config.sandbox.mode != "bwrap" or not cgroups.available():
        return "clock = cpu, but no cgroup counts the bots' CPU here: wall time charged"
    return f"CPU time charged (wall-clock ceiling {CPU_CEILING:g}x the budget)"


Playing = Engine | RemoteEngine
"""A local bot's engine, or a remote entrant's."""


class EnginePool:
    """Idle engines per bot; a game borrows one of each of its two bots.

    At most ``slots`` games run at once and a bot never plays itself, so
    ``slots`` engines per bot always suffice. Running engines are preferred, to
    reuse processes between games, except with ``per_slot``: then slot ``i`` always
    takes engine ``i`` of a bot, whose group was made on that slot's cores.
    """

    def __init__(self, engines: dict[str, list[Playing]], per_slot: bool = False) -> None:
        self._idle = engines
        self._own = {name: list(pool) for name, pool in engines.items()} if per_slot else None
        self.all = [e for pool in engines.values() for e in pool]

    def take(self, name: str, slot: int = 0) -> Playing:
        if self._own is not None:
            engine = self._own[name][slot]
            self._idle[name].remove(engine)
            return engine
        idle = self._idle[name]
        for i, engine in enumerate(idle):
            if engine.running:
                return idle.pop(i)
        return idle.pop()

    def give_back(self, engine: Playing) -> None:
        self._idle[engine.name].append(engine)

    def kill_all(self) -> None:
        """Last resort (second Ctrl-C): SIGKILL every bot process group now."""
        for engine in self.all:
            engine.thaw()  # a bot frozen on cgroup v1 ignores SIGKILL until thawed
            pgid = engine.pgid
            if pgid is not None:
                with suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)


class GameSlots:
    """``slots`` concurrent game tasks pulling work items from a channel.

    Engines are created (not started) up front and entered in the task that
    calls :meth:`run`, so that leaving it — normally, by an error or by
    cancellation — kills every bot process group.
    """

    def __init__(
        self,
        config: TournamentConfig,
        slots: int,
        cores: list[str] | None = None,
        gateway: Gateway | None = None,
    ) -> None:
        self.config = config
        self.gateway = gateway
        """Where remote entrants connect (``None``: the tournament has none)."""
        self._remote = {bot.name: trio.Lock() for bot in config.bots if bot.remote}
        """One lock per remote entrant: its one connection plays one game at a time."""
        self.slots = slots
        self.cores = cores
        """Each slot's cores (``cpuset.cpus``), or ``None``: games on every core."""
        self.game = get_game(config.game)
        self.controls = {
            bot.name: TimeControl.parse(config.time_control(bot.name)) for bot in config.bots
        }
        self.settings = RefereeSettings(
            max_plies=config.max_plies,
            newgame_timeout=config.protocol.newgame_timeout,
            clock=config.clock,
        )
        self.pool: EnginePool | None = None

    async def run(
        self,
        work: trio.MemoryReceiveChannel[WorkItem],
        emit: Emit,
        *,
        pair_done: Callable[[WorkItem], Awaitable[None]] | None = None,
        skip: Callable[[str], bool] = lambda name: False,
        skipped: Skipped | None = None,
        on_event: EventSink | None = None,
    ) -> None:
        """Play every work item received until the channel closes.

        ``skip(bot)`` is asked before each game: a disqualified bot's games are
        not played, and each is told to ``skipped``. ``pair_done`` is awaited after
        each work item. ``on_event``, if given, receives each game's start and
        every move (for live views).
        """
        async with AsyncExitStack() as stack:
            engines: dict[str, list[Playing]] = {}
            for bot in self.config.bots:
                cfg = entry_config(self.config, bot.name)
                if bot.remote:  # one engine, one game at a time (its lock), in every slot
                    if self.gateway is None:
                        continue  # its games are played where the gateway is, not here
                    wait = self.config.remote.connect_timeout
                    one = await stack.enter_async_context(RemoteEngine(cfg, self.gateway, wait))
                    engines[bot.name] = [one] * self.slots
                    continue
                engines[bot.name] = [
                    await stack.enter_async_context(Engine(cfg)) for _ in range(self.slots)
                ]
            self.pool = EnginePool(engines, per_slot=self.cores is not None)
            async with trio.open_nursery() as nursery:
                for index in range(self.slots):
                    nursery.start_soon(
                        self._slot, index, work.clone(), emit, pair_done, skip, skipped, on_event
                    )
            await work.aclose()

    async def _slot(
        self,
        index: int,
        work: trio.MemoryReceiveChannel[WorkItem],
        emit: Emit,
        pair_done: Callable[[WorkItem], Awaitable[None]] | None,
        skip: Callable[[str], bool],
        skipped: Skipped | None,
        on_event: EventSink | None = None,
    ) -> None:
        assert self.pool is not None
        if self.cores is not None:
            # This task's own context: the engines it starts make their groups on these cores.
            cpuset.SLOT_CPUS.set(self.cores[index % len(self.cores)])
        async with work:
            async for item in work:
                task = item.task
                opening = self.game.state_from_text(task.opening)
                for number in item.numbers:
                    names = task.players(number)
                    key = task.game_key(number)
                    if any(skip(n) for n in names):
                        if skipped is not None:
                            await skipped(key, task.key)
                        continue
                    if on_event is not None:
                        self._announce(on_event, key, names, task.variant, opening)
                    async with AsyncExitStack() as held:
                        for name in sorted(n for n in names if n in self._remote):
                            await held.enter_async_context(self._remote[name])
                        record = await self._play(index, names, opening, task, key, on_event)
                    await emit(key, task.key, record)
                if pair_done is not None:
                    await pair_done(item)

    async def _play(
        self,
        index: int,
        names: tuple[str, str],
        opening: Any,
        task: Any,
        key: str,
        on_event: EventSink | None,
    ) -> GameRecord:
        assert self.pool is not None
        engines = [self.pool.take(n, index) for n in names]
        try:
            return await play_game(
                self.game,
                opening,
                engines,
                [self.controls[n] for n in names],
                variant=task.variant,
                settings=self.settings,
                on_action=on_event,
                key=key,
            )
        finally:
            for engine in engines:
                self.pool.give_back(engine)

    def _announce(
        self, on_event: EventSink, key: str, names: tuple[str, str], variant: str, opening: Any
    ) -> None:
        """Tell ``on_event`` that game ``key`` starts (the referee reports its moves)."""
        on_event(
            GameStarted(
                key=key,
                game=self.game.name,
                variant=variant,
                players=list(names),
                position=opening.to_text(),
                time_control=[str(self.controls[n]) for n in names],
                t=time.time(),
            )
        )


class InProcessPool:
    """The :class:`~arena.backends.pool.Pool` of ``--workers 1``: game slots on the
    arena's own trio loop (no worker start-up cost, easiest to debug)."""

    def __init__(
        self,
        config: TournamentConfig,
        slots: int,
        *,
        on_record: Emit,
        gate: FaultGate | None = None,
        on_event: EventSink | None = None,
        gateway: Gateway | None = None,
        affinity: bool = True,
    ) -> None:
        cores = slot_cores(config, slots) if affinity else None
        self.slots = GameSlots(config, slots, cores, gateway)
        self.on_record = on_record
        self.gate = gate or FaultGate()
        self.on_event = on_event

    async def run(self, items: list[WorkItem]) -> None:
        send, receive = trio.open_memory_channel[WorkItem](len(items) + 1)
        async with send:
            for item in items:
                if self.gate.admits(item):
                    send.send_nowait(item)

        async def skipped(key: str, pair_key: str) -> None:
            self.gate.skipped(1)

        await self.slots.run(
            receive, self.on_record, skip=self.gate.out, skipped=skipped, on_event=self.on_event
        )

    def kill_all(self) -> None:
        if self.slots.pool is not None:
            self.slots.pool.kill_all()

    def summary(self) -> str | None:
        return None
