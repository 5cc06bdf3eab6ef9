"""Runs a tournament's pair tasks concurrently on trio, storing each finished game at once.

Guarantees, and how they are kept:

* **Nothing lost.** A game is stored, in its own transaction, the moment it ends,
  from a worker thread that a cancellation cannot interrupt half-way. A game
  that has not ended is never stored, so an interrupted run leaves only whole
  games behind.
* **Nothing doubled.** The schedule follows from the config alone; a rerun opens
  the same store, skips every stored game key and plays only the rest (the
  store also refuses a second row for a key).
* **Bots reused, never leaked.** Each bot has a small pool of engines (one per
  concurrent slot), all entered here in the runner's own task so that leaving
  the runner, normally, by an error or by cancellation, kills every process
  group.

The runner reports progress through a :class:`Observer`, so the live terminal
view (``arena/live.py``) and quiet logs are interchangeable.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path

import trio

from arena.clock import TimeControl
from arena.config import TournamentConfig
from arena.engine import Engine, EngineConfig, ResourceLimits
from arena.games import Game, get_game
from arena.record import FAULT_REASONS, GameRecord
from arena.referee import RefereeSettings, play_game
from arena.schedule import PairTask, build_schedule, schedule_fingerprint
from arena.store import Store, default_directory

MB = 1 << 20


@dataclass(slots=True)
class Standing:
    """Running totals for one bot, for the live table and the summary."""

    games: int = 0
    points: float = 0.0
    faults: int = 0
    disqualified: bool = False

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
    reasons: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    standings: dict[str, Standing] = field(default_factory=dict)

    def add(self, record: GameRecord, *, stored_before: bool = False) -> None:
        self.done += 1
        if not stored_before:
            self.played_now += 1
        self.reasons[record.reason] += 1
        if record.reason in FAULT_REASONS:
            self.faults[record.reason] += 1
        for player, name in enumerate(record.players):
            row = self.standings.setdefault(name, Standing())
            row.games += 1
            row.points += record.score if player == 0 else 1 - record.score
            if record.faulty == player:
                row.faults += 1


class Observer:
    """Callbacks of a running tournament; the base class ignores them all."""

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        pass

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        pass

    def bot_disqualified(self, name: str, standing: Standing) -> None:
        pass

    def stopping(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a run did: where the results are and whether every game is stored."""

    directory: Path
    progress: Progress
    complete: bool


def engine_config(config: TournamentConfig, name: str) -> EngineConfig:
    bot = config.bot(name)
    limits = config.limits
    return EngineConfig(
        name=name,
        command=bot.argv,
        cwd=bot.cwd,
        env=dict(bot.env),
        limits=ResourceLimits(
            memory_bytes=None if limits.memory_mb is None else limits.memory_mb * MB,
            cpu_seconds=limits.cpu_seconds,
            processes=limits.processes,
            file_size=None if limits.file_size_mb is None else limits.file_size_mb * MB,
        ),
    )


class EnginePool:
    """Idle engines per bot; a game borrows one of each of its two bots.

    At most ``slots`` games run at once and a bot never plays itself, so
    ``slots`` engines per bot always suffice. Running engines are preferred, to
    reuse processes between games.
    """

    def __init__(self, engines: dict[str, list[Engine]]) -> None:
        self._idle = engines
        self.all = [e for pool in engines.values() for e in pool]

    def take(self, name: str) -> Engine:
        idle = self._idle[name]
        for i, engine in enumerate(idle):
            if engine.running:
                return idle.pop(i)
        return idle.pop()

    def give_back(self, engine: Engine) -> None:
        self._idle[engine.name].append(engine)

    def kill_all(self) -> None:
        """Last resort (second Ctrl-C): SIGKILL every bot process group now."""
        import os
        import signal

        for engine in self.all:
            pgid = engine.pgid
            if pgid is not None:
                with suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)


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
    ) -> None:
        self.config = config
        self.game: Game = get_game(config.game)
        self.tasks: list[PairTask] = build_schedule(config, game=self.game)
        self.directory = (
            Path(directory) if directory else default_directory(config.name, results_root)
        )
        self.store = Store.open(
            self.directory,
            name=config.name,
            config_text=config_text,
            fingerprint=schedule_fingerprint(config, self.tasks),
            force=force,
        )
        self.observer = observer or Observer()
        self.controls = {bot.name: TimeControl.parse(config.time_control(bot.name))
                         for bot in config.bots}  # fmt: skip
        self.settings = RefereeSettings(max_plies=config.max_plies)
        self.progress = Progress(total=2 * len(self.tasks))
        self.pool: EnginePool | None = None

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

    async def run(self) -> Outcome:
        """Play every game not stored yet; return when all are stored or the run is cancelled."""
        for _key, record in self.store.items():
            self.progress.add(record, stored_before=True)
        for bot in self.config.bots:
            self._disqualified(bot.name)
        work = self.pending()
        self.observer.started(self.progress, self.config, self.directory)
        slots = max(1, min(self.config.concurrency, len(work)))
        limiter = trio.CapacityLimiter(slots)
        async with AsyncExitStack() as stack:
            engines: dict[str, list[Engine]] = {}
            for bot in self.config.bots:
                cfg = engine_config(self.config, bot.name)
                engines[bot.name] = [
                    await stack.enter_async_context(Engine(cfg)) for _ in range(slots)
                ]
            self.pool = EnginePool(engines)
            async with trio.open_nursery() as nursery:
                for task, numbers in work:
                    nursery.start_soon(self._run_pair, task, numbers, limiter)
        complete = not self.pending()
        return Outcome(self.directory, self.progress, complete)

    async def _run_pair(
        self, task: PairTask, numbers: Sequence[int], limiter: trio.CapacityLimiter
    ) -> None:
        async with limiter:
            assert self.pool is not None
            opening = self.game.state_from_text(task.opening)
            for number in numbers:
                names = task.players(number)
                if any(self._disqualified(n) for n in names):
                    self.progress.skipped += 1
                    continue
                engines = [self.pool.take(n) for n in names]
                try:
                    record = await play_game(
                        self.game,
                        opening,
                        engines,
                        [self.controls[n] for n in names],
                        variant=task.variant,
                        settings=self.settings,
                    )
                finally:
                    for engine in engines:
                        self.pool.give_back(engine)
                key = task.game_key(number)
                # A finished game is stored even if the run is being cancelled.
                await trio.to_thread.run_sync(self.store.add_game, key, task.key, record)
                self.progress.add(record)
                self.observer.game_finished(self.progress, key, record)

    def close(self) -> None:
        self.store.close()


def games_per_minute(done: int, seconds: float) -> float:
    return 60.0 * done / seconds if seconds > 0 else math.nan


def ordered_standings(progress: Progress) -> Iterable[tuple[str, Standing]]:
    return sorted(progress.standings.items(), key=lambda kv: (-kv[1].score, kv[0]))
