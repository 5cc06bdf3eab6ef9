"""Pure functions of plain values as Ray tasks, a bounded number in flight.

The game actors (:mod:`arena.backends.rayactor`) keep bots alive between games;
work without processes to keep, such as solving a stored game's positions
(``arena analyze --backend ray``), needs none of that: each item is one Ray
task of a module-level function, Ray places it on any node with a free CPU,
and the caller alone writes each result as it comes back.

Why plain tasks are enough: a task whose worker or node dies is run again
elsewhere by Ray itself (``max_retries``), and a task run twice is harmless
because the function is pure and the caller keys what it writes. What Ray
does not bound is left to this module: joining the cluster goes through
:func:`~arena.backends.rayconnect.join` (the address checked, ``ray.init``
abandoned after a deadline, one-line errors), at most ``IN_FLIGHT`` tasks per
cluster CPU are outstanding (the items are read lazily, so a large store is
never all in memory), and a cluster left without a live CPU ends the run with
one line instead of waiting forever. Ray's chatter goes to ``log_path``, as
the tournament's does.

Ray is imported lazily, as everywhere in the arena.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import trio

from arena.backends.rayconnect import RayBackendError, join, require_ray, routed_logs
from arena.plan.config import one_line

__all__ = ["IN_FLIGHT", "MAX_RETRIES", "TaskCluster", "run_tasks"]

T = TypeVar("T")
R = TypeVar("R")

IN_FLIGHT = 2
"""Tasks outstanding per cluster CPU: one running, one queued behind it, so
that no CPU waits for the driver's round trip."""

MAX_RETRIES = 3
"""Times Ray runs a task again whose worker process or node died."""

POLL_SECONDS = 1.0
"""Longest single wait for a result: the driver stays responsive to Ctrl-C."""

STALL_SECONDS = 10.0
"""Without any result for this long, the driver checks that a node is left."""


@dataclass(slots=True)
class TaskCluster:
    """Where the tasks ran, for the caller's summary line."""

    nodes: int = 0
    cpus: int = 0
    tasks: int = 0
    started_ray: bool = False
    """A local Ray instance was started (and shut down) for this run."""


def run_tasks(
    fn: Callable[[T], R],
    items: Iterable[T],
    keep: Callable[[R], None],
    *,
    address: str | None = None,
    connect_timeout: float = 5.0,
    working_dir: str | None = None,
    log_path: Path | None = None,
    cpus: int | None = None,
) -> TaskCluster:
    """``keep(fn(item))`` for every item, ``fn`` running as Ray tasks; ``keep`` in the
    caller's thread, in order of completion. Blocking; raises
    :class:`~arena.backends.rayconnect.RayBackendError` (one line) when the cluster
    cannot be joined or is lost. ``cpus`` caps the tasks running at once (default:
    the cluster's CPUs). ``address`` and ``working_dir`` mean what they mean to
    :class:`~arena.backends.raypool.RayPool` (defaults ``RAY_ADDRESS`` and
    ``ARENA_RAY_WORKING_DIR``); without an address a local instance of ``cpus``
    CPUs (default: this machine's) is started and shut down at the end.
    """
    ray = require_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None
    working_dir = working_dir or os.environ.get("ARENA_RAY_WORKING_DIR") or None
    if working_dir is not None:
        working_dir = str(Path(working_dir).resolve())
    outcome = TaskCluster()
    with routed_logs(ray, log_path):
        outcome.started_ray = trio.run(
            partial(
                join,
                ray,
                address,
                connect_timeout=connect_timeout,
                working_dir=working_dir,
                local_cpus=cpus,
            )
        )
        try:
            _run(ray, fn, items, keep, cpus, outcome)
        finally:
            if outcome.started_ray:
                ray.shutdown()
    return outcome


def _live(ray: ModuleType) -> tuple[int, int]:
    """``(nodes, CPUs)`` Ray calls alive."""
    try:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
    except Exception as exc:  # noqa: BLE001 - the head is gone: nothing can go on
        raise RayBackendError(f"lost the Ray cluster: {one_line(str(exc))}") from None
    return len(nodes), sum(int(n.get("Resources", {}).get("CPU", 0)) for n in nodes)


def _run(
    ray: ModuleType,
    fn: Callable[[T], R],
    items: Iterable[T],
    keep: Callable[[R], None],
    cpus: int | None,
    outcome: TaskCluster,
) -> None:
    outcome.nodes, outcome.cpus = _live(ray)
    running = max(1, min(cpus or outcome.cpus, outcome.cpus or 1))
    # Capped below the cluster's CPUs, a task queued behind another would find a
    # free CPU and run at once: then the cap is the number in flight.
    limit = running if running < outcome.cpus else IN_FLIGHT * running
    remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(fn)
    pending: list[Any] = []
    last = time.monotonic()

    def collect(until: int) -> None:
        """Keep results until at most ``until`` tasks are outstanding."""
        nonlocal pending, last
        while len(pending) > until:
            ready, pending = ray.wait(pending, num_returns=1, timeout=POLL_SECONDS)
            if not ready:
                if time.monotonic() - last > STALL_SECONDS:
                    last = time.monotonic()
                    if _live(ray)[1] == 0:
                        raise RayBackendError(
                            f"no Ray node with a CPU is left for the {len(pending)} tasks in "
                            "flight; what came back is kept: run the same command again to resume"
                        )
                continue
            if pending:  # every other result already in, without waiting
                more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                ready += more
            for ref in ready:
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    raise RayBackendError(
                        f"a Ray task failed ({_gist(exc)}); what came back is kept: run the "
                        "same command again to resume"
                    ) from None
                outcome.tasks += 1
                keep(result)
            last = time.monotonic()

    try:
        for item in items:
            pending.append(remote.remote(item))
            collect(limit - 1)
        collect(0)
    finally:
        for ref in pending:  # an error or Ctrl-C: no task left running for nothing
            with suppress(Exception):
                ray.cancel(ref, force=True)


def _gist(exc: BaseException) -> str:
    """A Ray error in one line (its messages run over many, with a traceback)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return one_line(f"{type(cause).__name__}: {cause}")[:300]
    return one_line(f"{type(exc).__name__}: {exc}")[:300]
