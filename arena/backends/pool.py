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

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import msgspec

from arena.plan.schedule import PairTask

if TYPE_CHECKING:
    from arena.match.record import GameRecord


class WorkItem(msgspec.Struct, frozen=True):
    """A pair task and which of its two games still need playing."""

    task: PairTask
    numbers: list[int]


class Verdict(msgspec.Struct, tag="verdict", frozen=True):
    """The fault policy's state, from the arena (which alone decides it) to the worker
    processes and actors that play the games: the bots out (disqualified), the bots
    with a fault so far (a game of one of them may put it out), and the game key it
    answers (``ack``), if any. ``version`` orders verdicts that may overtake each other
    (a Ray actor runs calls in threads)."""

    version: int
    out: list[str]
    faulted: list[str]
    ack: str | None = None


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


class FaultGate:
    """The tournament's fault policy (``[faults]``), the same for every pool.

    The tournament alone decides, from every game stored: ``out(bot)`` says
    whether a bot is disqualified now (``restart = false`` and a fault, or too
    many faults), ``faulted(bot)`` whether it has had a fault (a game of it may
    put it out), and ``skipped(n)`` counts games not played for that. Every pool
    asks before handing out a pair task (:meth:`admits`) and before each game;
    pools that play elsewhere pass the answers on as a
    :class:`Verdict` (:meth:`verdict`), and a worker
    process or actor waits for the answer to a game that may change it before
    its slot takes the next game, as the arena's own slots do.
    """

    def __init__(
        self,
        names: Sequence[str] = (),
        *,
        out: Callable[[str], bool] = lambda name: False,
        faulted: Callable[[str], bool] = lambda name: False,
        skipped: Callable[[int], None] = lambda count: None,
    ) -> None:
        self.names = list(names)
        self.out = out
        self.faulted = faulted
        self.skipped = skipped
        self.version = 0

    def admits(self, item: WorkItem) -> bool:
        """Whether a pair task is played; its games are counted skipped if not."""
        if self.out(item.task.a) or self.out(item.task.b):
            self.skipped(len(item.numbers))
            return False
        return True

    def answers(self, record: GameRecord) -> bool:
        """Whether a game played elsewhere waits for the verdict on it (as
        :meth:`~arena.backends.slots.RemoteGate.expect` decides there): a fault in
        it, or a player with a fault, may put a bot out."""
        return record.faulty is not None or any(self.faulted(n) for n in record.players)

    def verdict(self, ack: str | None = None) -> Verdict:
        """The policy's state now, for worker processes and actors (``ack``: the game
        it answers)."""
        self.version += 1
        return Verdict(
            self.version,
            [name for name in self.names if self.out(name)],
            [name for name in self.names if self.faulted(name)],
            ack,
        )


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
