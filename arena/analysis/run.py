"""``arena analyze``: every stored game's positions solved, in worker processes.

The parent reads the games (read-only), hands each game still to analyse to
one of ``workers`` processes (one per core by default, as a tournament runs
its games), and alone writes each game's values to ``analysis.sqlite`` as
they come back. A worker keeps the game's solver, and with it the solver's
table, for all the games it is given: positions of one tournament share much
of their proofs. Workers die with the parent (``PR_SET_PDEATHSIG``), so a
killed analysis leaves nothing running; its finished games are stored and
the next run skips them.

With ``backend="ray"`` the same pure function, :func:`analyse_one`, runs as
Ray tasks on a cluster (:mod:`arena.backends.raytasks`): Ray runs a task again
elsewhere when its node dies, and a game solved twice is still written once,
by key, here. Ray is imported only then, and only when the operator asks for it
(``arena analyze --backend ray``, or ``arena run --backend ray --analyze``): the
tournament file stored in a results folder is data, and what it says of a
backend or a cluster address is never followed (a folder from elsewhere would
otherwise have the arena join the sender's cluster and unpickle its replies).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from arena.analysis import DEFAULT_BUDGET_MS, MAX_BUDGET_MS, MIN_BUDGET_MS
from arena.analysis.figures import game_calls
from arena.analysis.store import AnalysisStore, GamesReader, digest
from arena.analysis.values import GameValues, ReplayError, solve_game
from arena.engine.process import die_with_parent
from arena.games import Game, GameError, get_game
from arena.match.record import GameRecord
from arena.storage.store import StoreError

CONNECT_TIMEOUT = 5.0
"""Seconds each step of joining a Ray cluster may take."""


class AnalysisError(StoreError):
    """An analysis that cannot be done as asked (one line)."""


@dataclass(slots=True)
class AnalysisRun:
    """What one run did."""

    games: int = 0
    """Stored games."""
    analysed: int = 0
    skipped: int = 0
    """Already analysed (same record, at least this budget)."""
    positions: int = 0
    proven: int = 0
    seconds: float = 0.0
    failed: list[str] = field(default_factory=list)
    """One line per game that could not be replayed."""
    place: str = ""
    """Where a Ray run solved the games, for the summary line: ``on Ray (3 CPUs on
    3 nodes)``; empty for worker processes here."""


Task = tuple[str, str, str, float]
"""``(game name, key, record text, budget ms)``: a plain value, for any process."""
Done = tuple[str, bytes | None, int, int, str]
"""``(key, encoded GameValues or None, blunders, missed, error)``."""


def analyse_one(task: Task) -> Done:
    """Solve one game's positions (in a worker, or in the parent with one worker)."""
    game_name, key, text, budget_ms = task
    try:
        record = msgspec.json.decode(text, type=GameRecord)
        values = solve_game(get_game(game_name), record, budget_ms)
    except (ReplayError, msgspec.DecodeError) as exc:
        return key, None, 0, 0, str(exc)
    calls = game_calls(record, values.values)
    return key, msgspec.json.encode(values), calls.blunders, calls.missed, ""


def _worker_init(game_name: str) -> None:
    """Die with the parent, leave Ctrl-C to it, and load the solver before any game."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    game = get_game(game_name)
    game.solve(game.new_state(), 1, max_depth=1)


def check_budget(budget_ms: float) -> None:
    if not MIN_BUDGET_MS <= budget_ms <= MAX_BUDGET_MS:
        raise AnalysisError(
            f"--budget-ms {budget_ms:g} is out of range ({MIN_BUDGET_MS}..{MAX_BUDGET_MS} ms)"
        )


def solvable_game(reader: GamesReader) -> Game | None:
    """The tournament's game if it has a solver; ``None`` if it holds no games."""
    name = reader.first_game()
    if name is None:
        return None
    game = get_game(name)
    if game.solves is None:
        raise AnalysisError(
            f"{reader.directory}: {game.name} games cannot be analysed: {game.no_solver}"
        )
    return game


def analyse(
    directory: str | os.PathLike[str],
    budget_ms: float = DEFAULT_BUDGET_MS,
    *,
    workers: int | None = None,
    on_game: Callable[[AnalysisRun], None] | None = None,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> AnalysisRun:
    """Analyse every stored game of ``directory`` not yet analysed at ``budget_ms``.

    ``backend`` is ``local`` (``workers`` processes here) or ``ray`` (tasks on the
    cluster at ``address``, at most ``workers`` at once if given; its one-line
    errors are those of the tournament's Ray backend, Ray's log goes to the
    folder's ``ray.log``).
    """
    check_budget(budget_ms)
    if backend == "ray":
        from arena.backends.rayconnect import require_ray

        require_ray()  # before anything is opened: the tournament's one-line error
    elif backend != "local":
        raise AnalysisError(f"unknown backend {backend!r} (expected 'local' or 'ray')")
    outcome = AnalysisRun()
    start = time.monotonic()
    with GamesReader(directory) as reader:
        try:
            game = solvable_game(reader)
        except GameError as exc:
            raise AnalysisError(f"{reader.path}: {exc}") from None
        outcome.games = reader.count()
        if game is None:
            return outcome
        with AnalysisStore.open(directory) as store:
            done = store.done()
            todo = _todo(reader, done, budget_ms, outcome)
            digests: dict[str, str] = {}

            def tasks() -> Iterator[Task]:
                for key, text in todo:
                    digests[key] = digest(text)
                    yield game.name, key, text, budget_ms

            def keep(result: Done) -> None:
                key, encoded, blunders, missed, error = result
                if encoded is None:
                    outcome.failed.append(f"game {key}: cannot be replayed: {error}")
                    return
                values = msgspec.json.decode(encoded, type=GameValues)
                store.put(key, digests[key], values, blunders, missed)
                outcome.analysed += 1
                outcome.positions += values.positions
                outcome.proven += values.proven
                outcome.seconds = time.monotonic() - start
                if on_game is not None:
                    on_game(outcome)

            count = workers or os.cpu_count() or 1
            if backend == "ray":
                from arena.backends.raytasks import run_tasks

                cluster = run_tasks(
                    analyse_one,
                    tasks(),
                    keep,
                    address=address,
                    connect_timeout=connect_timeout,
                    log_path=Path(directory) / "ray.log",
                    cpus=workers,
                )
                nodes = f"{cluster.nodes} node{'s' if cluster.nodes != 1 else ''}"
                outcome.place = f"on Ray ({cluster.cpus} CPUs on {nodes})"
            elif count <= 1:
                for task in tasks():
                    keep(analyse_one(task))
            else:
                _run_pool(game.name, tasks(), count, keep)
    outcome.seconds = time.monotonic() - start
    return outcome


def _todo(
    reader: GamesReader, done: dict[str, tuple[str, float]], budget_ms: float, outcome: AnalysisRun
) -> Iterator[tuple[str, str]]:
    for key, text in reader.rows():
        previous = done.get(key)
        if previous is not None and previous[0] == digest(text) and previous[1] >= budget_ms:
            outcome.skipped += 1
            continue
        yield key, text


def _run_pool(
    game_name: str, tasks: Iterator[Task], workers: int, keep: Callable[[Done], None]
) -> None:
    """Keep ``workers`` processes busy (two games queued each), results in order
    of completion."""
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_worker_init, initargs=(game_name,)
    )
    try:
        _feed(pool, tasks, workers, keep)
    except BrokenProcessPool:
        raise AnalysisError(
            "a worker process died (out of memory?); the games analysed so far are kept: "
            "run the same command again to resume"
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _feed(
    pool: ProcessPoolExecutor, tasks: Iterator[Task], workers: int, keep: Callable[[Done], None]
) -> None:
    pending: set[Future[Done]] = set()
    for task in tasks:
        pending.add(pool.submit(analyse_one, task))
        if len(pending) >= 2 * workers:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                keep(f.result())
    while pending:
        finished, pending = wait(pending, return_when=FIRST_COMPLETED)
        for f in finished:
            keep(f.result())


def default_workers(concurrency: int | None = None) -> int:
    """One process per core, as the tournament runs (at most ``concurrency``)."""
    cores = os.cpu_count() or 1
    return max(1, min(cores, concurrency or cores))


__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_BUDGET_MS",
    "MAX_BUDGET_MS",
    "MIN_BUDGET_MS",
    "AnalysisError",
    "AnalysisRun",
    "analyse",
    "check_budget",
    "default_workers",
]
