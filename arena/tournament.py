"""Runs a tournament's pair tasks concurrently on trio, storing each finished game at once.

Guarantees, and how they are kept:

* **Nothing lost.** A game is stored, in its own transaction, the moment it ends,
  from a worker thread that a cancellation cannot interrupt half-way. A game
  that has not ended is never stored, so an interrupted run leaves only whole
  games behind.
* **Nothing doubled.** The schedule follows from the config alone; a rerun opens
  the same store, skips every stored game key and plays only the rest (the
  store also refuses a second row for a key).
* **Bots reused, never leaked.** Games run in game slots (``arena/backends/slots.py``)
  with a pool of engines per bot, in this process or in one worker process per
  core (``arena/backends/workers.py``); leaving a run, normally, by an error or by
  cancellation, kills every bot's process group, and workers die with the arena.

The runner reports progress through a :class:`Observer`, so the live terminal
view (``arena/cli/live.py``) and quiet logs are interchangeable.

May import: :mod:`arena.backends` (through their pool protocol), :mod:`arena.plan`,
:mod:`arena.storage`, :mod:`arena.match`, :mod:`arena.engine` (the sandbox mode, the
options check), :mod:`arena.games`. Knows nothing of game rules beyond the interface.
"""

from __future__ import annotations

import math
import os
import signal
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import trio

from arena.backends.pool import FaultGate, Pool, WorkItem, split
from arena.backends.preflight import BrokenEntrants, Preflight, preflight
from arena.backends.slots import InProcessPool, slot_cores
from arena.backends.workers import WorkerPool, fork_workers, release
from arena.engine.gateway import Gateway
from arena.engine.process import ChildProcess
from arena.engine.sandbox import resolve as resolve_sandbox
from arena.games import Game, get_game
from arena.match.events import EventSink, LiveEvent
from arena.match.record import FAULT_REASONS, GameRecord
from arena.plan.config import ConfigError, TournamentConfig, check_affinity, redact
from arena.plan.prepare import prepare
from arena.plan.remote import entry_tokens, redact_text
from arena.plan.rounds import Draw, Rounds, StoredGame
from arena.plan.schedule import PairTask, build_schedule, schedule_fingerprint
from arena.storage.rounds import write_rounds
from arena.storage.store import Store, default_directory

if TYPE_CHECKING:  # imported where the Ray backend starts: Ray is an optional extra
    from arena.backends.raypool import RayPool


@dataclass(slots=True)
class Tally:
    """Running totals for one bot, for the live table and the summary."""

    games: int = 0
    points: float = 0.0
    faults: int = 0
    disqualified: bool = False
    broken: bool = False
    """It did not start in the pre-flight (``--skip-broken``): its games are not played."""

    @property
    def score(self) -> float:
        return self.points / self.games if self.games else 0.0


@dataclass(slots=True)
class Progress:
    """Everything a live view shows; updated by the runner after every game."""

    total: int
    done: int = 0
    played_now: int = 0
    skipped: int = 0
    """Games not played: a bot was disqualified, or did not start (``broken``)."""
    broken: dict[str, str] = field(default_factory=dict)
    """Entrants that did not start in the pre-flight, each with its one line."""
    reasons: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    standings: dict[str, Tally] = field(default_factory=dict)

    def add(self, record: GameRecord, *, stored_before: bool = False) -> None:
        self.done += 1
        if not stored_before:
            self.played_now += 1
        self.reasons[record.reason] += 1
        if record.reason in FAULT_REASONS:
            self.faults[record.reason] += 1
        for player, name in enumerate(record.players):
            row = self.standings.setdefault(name, Tally())
            row.games += 1
            row.points += record.score if player == 0 else 1 - record.score
            if record.faulty == player:
                row.faults += 1


class Observer:
    """Callbacks of a running tournament; the base class ignores them all."""

    wants_events = False
    """True if :meth:`game_event` should receive every game's start and moves
    (worker processes then stream them, which costs a line per move)."""

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        pass

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        pass

    def bot_disqualified(self, name: str, tally: Tally) -> None:
        pass

    def stopping(self) -> None:
        pass

    def warning(self, line: str) -> None:
        """A one-line warning before the first game (the pre-flight's)."""

    def note(self, line: str) -> None:
        """A one-line notice: what the pre-flight waits for, and later a remote
        entrant's connection lost or back (between moves: it must return at once)."""

    def game_event(self, event: LiveEvent) -> None:
        """A game started or moved; called between moves, so it must return at once."""

    def round_drawn(self, draw: Draw) -> None:
        """A Swiss or knockout drew its next round (or a tied match's extra pair)."""

    def close(self) -> None:
        """The run is over (or abandoned): release the display."""


class Observers(Observer):
    """Several observers watching one run (the terminal view and the web view)."""

    def __init__(self, *observers: Observer) -> None:
        self.observers = observers
        self.wants_events = any(o.wants_events for o in observers)
        self._event_sinks = [o.game_event for o in observers if o.wants_events]

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        for o in self.observers:
            o.started(progress, config, directory)

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        for o in self.observers:
            o.game_finished(progress, key, record)

    def bot_disqualified(self, name: str, tally: Tally) -> None:
        for o in self.observers:
            o.bot_disqualified(name, tally)

    def stopping(self) -> None:
        for o in self.observers:
            o.stopping()

    def warning(self, line: str) -> None:
        for o in self.observers:
            o.warning(line)

    def note(self, line: str) -> None:
        for o in self.observers:
            o.note(line)

    def game_event(self, event: LiveEvent) -> None:
        for sink in self._event_sinks:
            sink(event)

    def round_drawn(self, draw: Draw) -> None:
        for o in self.observers:
            o.round_drawn(draw)

    def close(self) -> None:
        for o in self.observers:
            o.close()


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a run did: where the results are and whether every game is stored."""

    directory: Path
    progress: Progress
    complete: bool


def _confined(config: TournamentConfig, mode: str | None, results: Path) -> TournamentConfig:
    """``config`` with its sandbox mode resolved (``--sandbox`` wins) and ``results`` hidden."""
    box = config.sandbox
    hide = [*box.hide, str(results.resolve())]
    box = msgspec.structs.replace(box, mode=resolve_sandbox(mode or box.mode), hide=hide)
    return msgspec.structs.replace(config, sandbox=box)


class Tournament:
    """One tournament: its config, schedule, store and the state of a run."""

    def __init__(
        self,
        config: TournamentConfig,
        config_text: str,
        *,
        results_root: str | Path = "results",
        directory: str | Path | None = None,
        force: bool = False,
        observer: Observer | None = None,
        config_path: str | Path = "tournament.toml",
        workers: int | None = None,
        stop_when: Callable[[str, str, GameRecord], bool] | None = None,
        backend: str | None = None,
        address: str | None = None,
        concurrency: int | None = None,
        sandbox: str | None = None,
        skip_broken: bool = False,
        keep_ray: bool = False,
    ) -> None:
        self.skip_broken = skip_broken
        """``--skip-broken``: entrants failing the pre-flight sit out rather than stop the run."""
        self.preflight: Preflight | None = None
        """The last pre-flight of this run (``None`` until it ran, or with nothing to play)."""
        if concurrency is not None:
            config = msgspec.structs.replace(config, concurrency=concurrency)
            check_affinity(config, f"--concurrency {concurrency}")
        self.concurrency = concurrency
        """``-j``: overrides the file's (on Ray, a file without one uses the cluster's CPUs)."""
        self.tokens = entry_tokens(config, config_path)
        """The remote entrants' tokens, for the gateway only: the config and file text
        that the store keeps and the workers get hold ``REDACTED`` instead."""
        config_text = redact_text(config_text, config, config_path)
        config = redact(config)
        self.gateway: Gateway | None = None
        """Where remote entrants connect (served by ``arena run --web``); their games
        are played in this process (:meth:`_play`)."""
        if self.tokens:
            self.gateway = Gateway(
                self.tokens,
                max_line=config.protocol.max_line,
                leeway=config.remote.leeway_ms / 1000,
                reconnect=config.remote.reconnect_s,
            )
        self.config = config
        self.backend = backend or config.backend
        """``local`` (worker processes here) or ``ray`` (:mod:`arena.backends.raypool`)."""
        self.address = address or config.ray_address
        self.keep_ray = keep_ray
        """A local Ray instance the run starts is kept for what follows in this
        process (``arena run --analyze``) until :meth:`release_ray`."""
        if self.backend == "ray":
            from arena.backends.rayconnect import require_ray

            require_ray()  # fail before the first game: a one-line error if Ray is missing
        elif self.backend != "local":
            raise ValueError(f"unknown backend {self.backend!r} (expected 'local' or 'ray')")
        self.config_text = config_text
        self.config_path = Path(config_path).resolve()
        self.workers = workers
        self.stop_when = stop_when
        """Asked after each stored game; ``True`` ends the run early (e.g. an SPRT decided)."""
        self.stopped_early = False
        self._scope = trio.CancelScope()
        self.game: Game = get_game(config.game)
        self.rounds: Rounds | None = None
        """A Swiss or knockout: its rounds are drawn from the results as they come."""
        self.draw: Draw | None = None
        if config.format in ("swiss", "knockout"):
            self.rounds = Rounds(config, game=self.game)
            self.tasks: list[PairTask] = []
            fingerprint = self.rounds.fingerprint()
        else:
            self.tasks = build_schedule(config, game=self.game)
        self.directory = (
            Path(directory) if directory else default_directory(config.name, results_root)
        )
        # Decided once here, so that a missing bwrap is said once (or fails the run
        # before any game), and workers and Ray actors get the same answer.
        hidden = self.directory if directory else Path(results_root)
        self.config = config = _confined(config, sandbox, hidden)
        self.store = Store.open(
            self.directory,
            name=config.name,
            config_text=config_text,
            fingerprint=fingerprint if self.rounds else schedule_fingerprint(config, self.tasks),
            force=force,
        )
        self.observer = observer or Observer()
        total = self.rounds.total_games() if self.rounds else 2 * len(self.tasks)
        self.progress = Progress(total=total)
        self.pool: Pool | None = None
        self.remote_pool: Pool | None = None
        """The games of remote entrants, played in this process (``None``: none)."""
        self._ray_pools: list[RayPool] = []
        self._forked: list[ChildProcess] = []

    # ------------------------------------------------------------------ policy

    def _disqualified(self, name: str) -> bool:
        row = self.progress.standings.get(name)
        if row is None or row.disqualified:
            return bool(row and row.disqualified)
        faults = self.config.faults
        no_restart = not faults.restart and row.faults > 0
        too_many = (
            faults.disqualify_after is not None
            and row.games >= faults.min_games
            and row.faults / row.games >= faults.disqualify_after
        )
        row.disqualified = no_restart or too_many
        if row.disqualified:
            self.observer.bot_disqualified(name, row)
        return row.disqualified

    def _may_be_disqualified(self, name: str) -> bool:
        """A bot with a fault, under a policy that disqualifies: its next game may
        put it out (worker processes and actors wait for the verdict on it)."""
        faults = self.config.faults
        row = self.progress.standings.get(name)
        policy = not faults.restart or faults.disqualify_after is not None
        return policy and row is not None and row.faults > 0

    def _skipped(self, games: int) -> None:
        self.progress.skipped += games

    def _gate(self) -> FaultGate:
        """The fault policy as every backend applies it (:class:`FaultGate`)."""
        return FaultGate(
            [bot.name for bot in self.config.bots],
            out=self._disqualified,
            faulted=self._may_be_disqualified,
            skipped=self._skipped,
        )

    def pending(self) -> list[tuple[PairTask, list[int]]]:
        """Pair tasks with the numbers of their games not stored yet."""
        done = self.store.finished_keys()
        out = []
        for task in self.tasks:
            missing = [n for n in (1, 2) if task.game_key(n) not in done]
            if missing:
                out.append((task, missing))
        return out

    # ------------------------------------------------------------------ running

    def fork_workers(self) -> None:
        """Fork the local worker processes now, before trio runs, rather than spawn
        them once it does: they start with the arena's modules loaded
        (:func:`arena.backends.workers.fork_workers`). For ``arena run``; without
        this call the pool spawns its workers as before."""
        if self.backend != "local" or self._forked:
            return
        remote = self._remote_names()
        work = sum(not {task.a, task.b} & remote for task, _ in self.pending())
        cpus = os.cpu_count() or 1
        processes, _ = split(self.config.concurrency, work, cpus, self.workers)
        if work and processes > 1:
            self._forked = fork_workers(processes)

    async def run(self) -> RunOutcome:
        """Play every game not stored yet; return when all are stored or the run is cancelled."""
        for _key, record in self.store.items():
            self.progress.add(record, stored_before=True)
        for bot in self.config.bots:
            self._disqualified(bot.name)
        if self.rounds is not None:
            await self._redraw(notify=False)
        work = [WorkItem(task, numbers) for task, numbers in self.pending()]
        if work or (self.draw is not None and not self.draw.finished):
            # Here, once, rather than in each worker process at once.
            for bot in self.config.bots:
                await prepare(bot.builtin)
            try:
                work = await self.check_entrants(work)
            except BaseException:  # no game follows: the workers forked ahead end now
                forked, self._forked = self._forked, []
                await release(forked)
                raise
        self.observer.started(self.progress, self.config, self.directory)
        if self.draw is not None:
            self.observer.round_drawn(self.draw)
        try:
            with self._scope:
                if work or self.rounds is None:
                    await self._play(work)
                await self._play_rounds()
        finally:
            if not self.keep_ray and self._ray_pools:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(self._release_rays)
        self.store.check_file()  # deleted after the last game was stored?
        complete = not self.pending() and (self.draw is None or self.draw.finished)
        return RunOutcome(self.directory, self.progress, complete)

    async def _redraw(self, *, notify: bool = True) -> None:
        """Draw a Swiss or knockout again from every stored game (rounds.py): the
        rounds so far, and the next one once the last is settled."""
        rounds = self.rounds
        assert rounds is not None

        def draw_now() -> Draw:
            games = [
                StoredGame(key, r.players[0], r.players[1], float(r.score), r.faulty)
                for key, r in self.store.items()
            ]
            return rounds.draw(games)

        # In a thread: a large Swiss's matching takes seconds, and the live views go on.
        draw = await trio.to_thread.run_sync(draw_now)
        self.tasks = draw.tasks
        self.progress.total = max(self.progress.total, self.progress.done + 2 * len(self.pending()))
        write_rounds(self.directory, draw.record)
        changed = self.draw is None or draw.record != self.draw.record
        self.draw = draw
        if notify and changed:
            self.observer.round_drawn(draw)

    async def _play_rounds(self) -> None:
        """The rounds after the first drawn: each drawn once the one before is stored
        (the round is the only barrier)."""
        while self.rounds is not None:
            before = self.store.count()
            await self._redraw()
            work = [WorkItem(task, numbers) for task, numbers in self.pending()]
            if not work:
                return  # finished, or nothing playable left (every game skipped)
            await self._play(work)
            if self.store.count() == before:
                return  # nothing could be played (every game skipped): the run is incomplete

    async def check_entrants(self, work: list[WorkItem]) -> list[WorkItem]:
        """The pre-flight (:mod:`arena.backends.preflight`): start every entrant once,
        at once, as its games would, before any game is played.

        An entrant that cannot start is the environment's failure or the
        entrant's, never its opponents' win: :class:`BrokenEntrants` stops the run
        before the first game, or with ``skip_broken`` its games are left
        unplayed (counted in ``progress.skipped``, not stored). Options that do
        not fit what a bot declares are the operator's mistake: a one-line
        :class:`ConfigError`.
        """
        result = await preflight(self.config, self.game.name, self.gateway, self.observer.note)
        self.preflight = result
        for line in result.warnings:
            self.observer.warning(line)
        for index, bot in enumerate(self.config.bots):
            problem = result.started[index].option_error
            if problem:
                raise ConfigError(
                    f"{self.config_path}: bots[{index}] ({bot.name}).options: {problem}"
                )
        broken = result.broken
        if not broken:
            return work
        if not self.skip_broken:
            raise BrokenEntrants(broken)
        names = {s.name for s in broken}
        for s in broken:
            self.progress.broken[s.name] = s.line()
            self.observer.warning(f"not playing {s.line()}")
            row = self.progress.standings.setdefault(s.name, Tally())
            row.disqualified = row.broken = True
        if self.rounds is not None:  # a Swiss or knockout draws without them
            self.rounds.withdrawn = frozenset(names)
            await self._redraw(notify=False)
            work = [WorkItem(task, numbers) for task, numbers in self.pending()]
        kept = []
        for item in work:
            if names & {item.task.a, item.task.b}:
                self.progress.skipped += len(item.numbers)
            else:
                kept.append(item)
        return kept

    def _remote_names(self) -> set[str]:
        return {bot.name for bot in self.config.bots if bot.remote}

    async def _play(self, work: list[WorkItem]) -> None:
        """Play ``work``: the games of remote entrants here, where the gateway is (one
        at a time per remote entrant, on top of ``concurrency``), the others on
        the backend as ever, both at once."""
        remote = self._remote_names()
        near = [item for item in work if {item.task.a, item.task.b} & remote]
        rest = [item for item in work if not {item.task.a, item.task.b} & remote]
        if not near:
            self.pool = self._pool(len(rest))
            forked = self._take_forked()
            if not isinstance(self.pool, WorkerPool):  # one process after all
                await release(forked)
            await self.pool.run(rest)
            return
        on_event = self.observer.game_event if self.observer.wants_events else None
        here = InProcessPool(
            self.config,
            min(len(remote), len(near)),
            on_record=self._store_game,
            gate=self._gate(),
            on_event=on_event,
            gateway=self.gateway,
            affinity=False,  # the backend's slots hold the cores
        )
        self.remote_pool = here
        if not rest:
            await release(self._take_forked())
            await here.run(near)
            return
        self.pool = self._pool(len(rest))
        forked = self._take_forked()
        if not isinstance(self.pool, WorkerPool):
            await release(forked)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(here.run, near)
            await self.pool.run(rest)

    def _take_forked(self) -> list[ChildProcess]:
        forked, self._forked = self._forked, []
        return forked

    def _pool(self, work: int) -> Pool:
        """The backend's pool for ``work`` pair tasks."""
        on_event: EventSink | None = (
            self.observer.game_event if self.observer.wants_events else None
        )
        if self.backend == "ray":
            from arena.backends.raypool import RayPool

            # Actors and slots follow the cluster's CPUs, not this machine's.
            ray_pool = RayPool(
                self.config_text,
                str(self.config_path),
                processes=self.workers,
                on_record=self._store_game,
                gate=self._gate(),
                address=self.address,
                config=self.config,
                on_event=on_event,
                concurrency=self.concurrency,
                log_path=self.directory / "ray.log",
                keep_local=self.keep_ray or self.rounds is not None,
            )
            if self.rounds is not None:
                self._ray_pools.append(ray_pool)
            return ray_pool
        processes, slots = split(self.config.concurrency, work, os.cpu_count() or 1, self.workers)
        cores = slot_cores(self.config, processes * slots)
        if processes == 1:
            return InProcessPool(
                self.config,
                slots,
                on_record=self._store_game,
                gate=self._gate(),
                on_event=on_event,
            )
        return WorkerPool(
            self.config_text,
            str(self.config_path),
            sandbox=self.config.sandbox,
            processes=processes,
            slots=slots,
            on_record=self._store_game,
            gate=self._gate(),
            protocol=self.config.protocol,
            on_event=on_event,
            ready=self._forked,
            cores=cores,
        )

    async def run_until_interrupted(self) -> bool:
        """:meth:`run`, with the arena's answer to signals; ``True`` if interrupted.

        The first Ctrl-C (or SIGTERM) abandons the running games cleanly: nothing
        half-played is stored, every bot is stopped. A second one does not wait
        for that: it SIGKILLs every bot and worker and exits at once.
        """
        run_scope = trio.CancelScope()

        async def watch_signals(
            task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
        ) -> None:
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                task_status.started()
                count = 0
                async for _ in signals:
                    count += 1
                    if count == 1:
                        self.observer.stopping()
                        run_scope.cancel()
                    else:
                        self.kill_all()
                        os._exit(130)

        async with trio.open_nursery() as nursery:
            await nursery.start(watch_signals)
            with run_scope:
                await self.run()
            nursery.cancel_scope.cancel()
        return run_scope.cancel_called

    async def _store_game(self, key: str, pair_key: str, record: GameRecord) -> None:
        # A finished game is stored even if the run is being cancelled: the thread
        # is not abandoned on cancellation, so the transaction always completes.
        await trio.to_thread.run_sync(self.store.add_game, key, pair_key, record)
        self.progress.add(record)
        self.observer.game_finished(self.progress, key, record)
        if self.stop_when is not None and self.stop_when(key, pair_key, record):
            self.stopped_early = True
            self._scope.cancel()

    def kill_all(self) -> None:
        """Second Ctrl-C: SIGKILL every bot and worker now."""
        for pool in (self.pool, self.remote_pool):
            if pool is not None:
                pool.kill_all()

    def release_ray(self) -> None:
        """Shut down the local Ray instance kept after the run (``keep_ray``)."""
        if self.backend == "ray" and self.pool is not None:
            from arena.backends.raypool import RayPool

            assert isinstance(self.pool, RayPool)
            self.pool.release_ray()
        self._release_rays()

    def _release_rays(self) -> None:
        """A Swiss or knockout keeps Ray between its rounds; the pool that started it ends it."""
        pools, self._ray_pools = self._ray_pools, []
        for pool in pools:
            pool.release_ray()

    def summary(self) -> str | None:
        """The backend's line for the end of a run (the Ray backend's nodes and losses)."""
        return None if self.pool is None else self.pool.summary()

    def close(self) -> None:
        self.store.close()


def games_per_minute(done: int, seconds: float) -> float:
    return 60.0 * done / seconds if seconds > 0 else math.nan


def ordered_standings(progress: Progress) -> Iterable[tuple[str, Tally]]:
    return sorted(progress.standings.items(), key=lambda kv: (-kv[1].score, kv[0]))
