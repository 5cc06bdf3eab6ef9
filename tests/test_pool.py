"""The backends behind one pool protocol (``arena/backends/pool.py``)."""

from __future__ import annotations

import inspect

import pytest

from arena.backends.pool import Pool, split
from arena.backends.raypool import RayPool
from arena.backends.slots import InProcessPool
from arena.backends.workers import WorkerPool


@pytest.mark.parametrize("pool", [InProcessPool, WorkerPool, RayPool])
def test_every_backend_is_a_pool(pool: type) -> None:
    assert issubclass(pool, Pool)
    assert inspect.iscoroutinefunction(pool.run)
    for name in ("run", "kill_all", "summary"):  # the protocol's own signatures
        assert inspect.signature(getattr(pool, name)).parameters.keys() == (
            inspect.signature(getattr(Pool, name)).parameters.keys()
        ), name


@pytest.mark.parametrize(
    ("concurrency", "work", "cpus", "processes", "expected"),
    [
        (8, 100, 2, None, (2, 4)),  # one process per CPU, the games spread over them
        (8, 3, 2, None, (2, 2)),  # never more games at once than pair tasks
        (2, 100, 16, None, (2, 1)),  # never more processes than games at once
        (2, 100, 2, 1, (1, 2)),  # --workers 1: every game in the arena's process
        (2, 100, 2, 5, (2, 1)),  # --workers above the concurrency: the concurrency holds
        (3, 100, 2, None, (2, 2)),  # rounded up
        (1, 0, 4, None, (1, 1)),
    ],
)
def test_the_split_of_games_over_processes(
    concurrency: int, work: int, cpus: int, processes: int | None, expected: tuple[int, int]
) -> None:
    assert split(concurrency, work, cpus, processes) == expected
