"""The exact round solver as Python code calls it: a table kept across positions,
a deadline, and the answer as a plain value.

The proof itself is compiled (:mod:`arena.games.kamisado.solver`'s kernels);
what is here holds the arrays the kernels work in and the one thread that
raises their stop flag at a deadline (an analysis solves thousands of positions
in a row, most in microseconds, so one thread per solver rather than a timer
per position). ``Kamisado.solve`` and the built-in bots use it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from arena.games.kamisado.solver import (
    C_MAX_NODES,
    C_NODES,
    C_STOP,
    CTL_SIZE,
    LOST,
    MAX_MOVES,
    MAX_PLY,
    UNKNOWN,
    WON,
    solve_kernel,
)

__all__ = ["LOST", "TABLE_BITS", "UNKNOWN", "WON", "Alarm", "RoundValue", "Solver", "table_bits"]


@dataclass(frozen=True, slots=True)
class RoundValue:
    """The solver's answer for the side to move: ``result`` is :data:`WON`,
    :data:`LOST` or :data:`UNKNOWN`; ``distance`` the plies to the round's end
    with best play (unknown: the depth proven undecided); ``move`` a best move
    (the rules core's integer); ``nodes`` the positions searched."""

    result: int
    distance: int
    move: int
    nodes: int


class Alarm:
    """One thread per solver that raises the stop flag at the armed deadline.

    Analysis solves many positions in a row, most of them in microseconds; a
    new timer thread per position cost more than that.
    Arming and firing take one lock, so a deadline that passes while a search
    is being closed never stops the next one.
    """

    def __init__(self, ctl: np.ndarray) -> None:
        self.ctl = ctl
        self.cond = threading.Condition()
        self.deadline: float | None = None
        self.thread = threading.Thread(target=self._run, name="solver-alarm", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with self.cond:
            while True:
                if self.deadline is None:
                    self.cond.wait()
                    continue
                left = self.deadline - time.monotonic()
                if left <= 0:
                    self.ctl[C_STOP] = 1
                    self.deadline = None
                else:
                    self.cond.wait(left)

    def arm(self, deadline: float | None) -> None:
        with self.cond:
            self.ctl[C_STOP] = 0
            self.deadline = deadline
            self.cond.notify()

    def disarm(self) -> None:
        with self.cond:
            self.deadline = None


TABLE_BITS = 20
"""Default table: 2**20 entries of 16 bytes (16 MiB)."""


def table_bits(megabytes: int) -> int:
    """The largest table (as a power of two) within ``megabytes`` MiB, at least 2**10."""
    return max(10, (max(megabytes, 1) * (1 << 20) // 16).bit_length() - 1)


class Solver:
    """The exact round solver with its table, kept across calls: every entry is
    a fact about a position (ranks included), true in any game, so a game's
    positions analysed in order reuse each other's proofs."""

    max_depth = MAX_PLY - 2
    """The deepest proof the kernels can hold."""

    def __init__(self, bits: int = TABLE_BITS) -> None:
        self.keys = np.zeros(1 << bits, dtype=np.int64)
        self.data = np.zeros(1 << bits, dtype=np.int64)
        self.moves = np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int64)
        self.scores = np.zeros((MAX_PLY + 1, MAX_MOVES), dtype=np.int64)
        self.ctl = np.zeros(CTL_SIZE, dtype=np.int64)
        self.alarm: Alarm | None = None

    def clear(self) -> None:
        self.keys.fill(0)
        self.data.fill(0)

    def solve(
        self,
        at: list[int],
        square_of: list[int],
        rank: list[int],
        side: int,
        required: int,
        *,
        deadline: float | None = None,
        max_nodes: int = 0,
        max_depth: int = MAX_PLY - 2,
    ) -> RoundValue:
        """Solve the round of a position in play (the arrays of the rules
        core's ``Position``) until ``deadline`` (``time.monotonic()``) or
        ``max_nodes`` (0: no limit)."""
        a = np.array(at, dtype=np.int64)
        s = np.array(square_of, dtype=np.int64)
        k = np.array(rank, dtype=np.int64)
        self.ctl[:] = 0
        self.ctl[C_MAX_NODES] = max_nodes
        if self.alarm is None and deadline is not None:
            self.alarm = Alarm(self.ctl)
        if self.alarm is not None:
            self.alarm.arm(deadline)  # after the reset: a deadline already past stops at once
        try:
            result, distance, move = solve_kernel(
                a,
                s,
                k,
                side,
                required,
                max_depth,
                self.keys,
                self.data,
                self.moves,
                self.scores,
                self.ctl,
            )
        finally:
            if self.alarm is not None:
                self.alarm.disarm()
        return RoundValue(int(result), int(distance), int(move), int(self.ctl[C_NODES]))
