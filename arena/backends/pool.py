"""What a backend is to the tournament: a pool that plays work items and hands back
each finished game, whichever processes or machines it uses.

Three pools satisfy :class:`Pool`: the game slots in the arena's own process
(:class:`~arena.backends.slots.InProcessPool`, ``--workers 1``), local worker
processes (:class:`~arena.backends.workers.WorkerPool`) and Ray actors
(:class:`~arena.backends.raypool.RayPool`). The tournament and the CLI speak
to any of them through this protocol alone, and each splits the concurrency
into processes (or actors) and game slots the same way (:func:`split`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from arena.backends.slots import WorkItem


@runtime_checkable
class Pool(Protocol):
    """Plays work items; every finished game goes to the ``on_record`` it was made with."""

    async def run(self, items: list[WorkItem]) -> None:
        """Play every item; return when all are done (a lost process's items replayed)."""
        ...

    def kill_all(self) -> None:
        """Second Ctrl-C: SIGKILL every process now (bots die with theirs)."""
        ...

    def summary(self) -> str | None:
        """One line for the end of a run about where games ran and what was lost,
        or ``None`` when there is nothing to say beyond the games stored."""
        ...


def split(concurrency: int, work: int, cpus: int, processes: int | None = None) -> tuple[int, int]:
    """(processes, game slots per process) for ``work`` pair tasks.

    At most ``concurrency`` games at once, and no more than there are pair tasks;
    one process (or actor) per CPU up to that, unless ``processes`` is given
    (``--workers``; ``1`` keeps every game in the arena's own process); the
    games spread over them, rounded up.
    """
    concurrency = max(1, min(concurrency, work))
    count = processes or min(concurrency, cpus)
    count = max(1, min(count, concurrency))
    return count, -(-concurrency // count)
