"""The Python side of the compiled search: tables, the clock and iterative deepening.

:mod:`arena.bots.kamisado_jit` holds the compiled kernels; this module gives them a
position from the rules core, keeps their arrays (transposition table,
history, killers) for the whole game, and drives them:

* iterative deepening with an aspiration window around the previous value,
  the root re-ordered best-first after each iteration;
* the clock from :mod:`arena.bots.timeman`: no new iteration once half the planned
  time is gone, more time while the best move keeps changing, and a hard
  deadline enforced by a watchdog thread that raises a flag the compiled code
  reads (it runs without the GIL, so the thread gets to run);
* between rounds, the regroup choice searched like any other root move: each
  choice is made with the rules core and the next round searched from there.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import NoReturn

import numpy as np
from arena.bots import jit_cache, kamisado_eval

from arena.games.kamisado import jit
from arena.games.kamisado.board import MATCH_TARGET
from arena.games.kamisado.position import REGROUP, Position
from arena.sdk import Bot, run

jit_cache.prepare()

with jit_cache.without_blas():  # (after the cache is placed)
    from arena.bots import kamisado_jit as K

    from arena.games.kamisado.round_solver import Solver
    from arena.games.kamisado.solver import C_STOP

ASPIRATION = 60
"""Half-width of the root window around the previous iteration's value."""
UNSTABLE_CAP = 3.0
"""Most an unstable root may stretch the planned time."""
TT_BITS = 22
SEARCH_PARAMS = {"LMR_DEPTH": 0, "LMR_MOVES": 3}
"""The search's own tunable parameters (see ``kamisado_jit.W_LMR_DEPTH``)."""
TUNABLE = (*K.WEIGHT_NAMES, *SEARCH_PARAMS)
"""What ``--eval NAME=VALUE`` may change, for tuning by SPRT."""
SOLVER_BITS = 20
"""The round solver's table: 2**20 entries (16 MiB)."""

Iteration = Callable[[int, int, list[int], int], None]
"""``on_iteration(depth, value, pv, nodes)``, called after each finished iteration."""


class Watchdog:
    """Raises the kernels' stop flag at a deadline, from a thread of its own (one per
    search: a bot searches once per decision).

    The kernels run without the GIL, so the thread gets to run; a timer that
    fires while its search is being closed must not stop the next search,
    which reuses the flag: firing and closing take one lock.
    """

    def __init__(self, ctl: np.ndarray, deadline: float | None) -> None:
        ctl[C_STOP] = 0
        self.ctl = ctl
        self.lock = threading.Lock()
        self.closed = False
        self.timer: threading.Timer | None = None
        if deadline is not None:
            self.timer = threading.Timer(max(deadline - time.monotonic(), 0.0), self.fire)
            self.timer.daemon = True

    def fire(self) -> None:
        with self.lock:
            if not self.closed:
                self.ctl[C_STOP] = 1

    def __enter__(self) -> Watchdog:
        if self.timer is not None:
            self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self.closed = True
        if self.timer is not None:
            self.timer.cancel()


class Board:
    """A rules-core position as the kernels' arrays."""

    def __init__(self, pos: Position) -> None:
        self.at = np.array(pos.at, dtype=np.int64)
        self.sq = np.array(pos.square_of, dtype=np.int64)
        self.rank = np.array(pos.rank, dtype=np.int64)
        self.side = pos.side
        self.req = pos.required
        self.match = np.array([pos.score(0), pos.score(1), MATCH_TARGET[pos.kind]], dtype=np.int64)


def weights() -> np.ndarray:
    """The evaluation weights as set in :mod:`arena.bots.kamisado_eval`, then the search
    parameters (``--eval`` changes both)."""
    values = [getattr(kamisado_eval, name) for name in K.WEIGHT_NAMES]
    return np.array([*values, *SEARCH_PARAMS.values()], dtype=np.int64)


def set_parameter(name: str, value: int) -> None:
    """Change one of :data:`TUNABLE` for every later search in this process."""
    if name in SEARCH_PARAMS:
        SEARCH_PARAMS[name] = value
    elif name in K.WEIGHT_NAMES:
        setattr(kamisado_eval, name, value)
    else:
        raise KeyError(name)


class CompiledSearcher:
    """One game's search state; the tables persist across decisions of a game."""

    def __init__(self, tt_bits: int = TT_BITS) -> None:
        self.tt = np.zeros(2 << tt_bits, dtype=np.int64)  # (key, data) pairs
        self.tt[1::2] = -1
        self.solver = Solver(SOLVER_BITS)
        self.history = np.zeros(4096, dtype=np.int64)
        self.killers = np.full((K.MAX_PLY + 1, 2), -1, dtype=np.int64)
        self.moves = np.zeros((K.MAX_PLY + 1, K.MAX_MOVES), dtype=np.int64)
        self.scores = np.zeros((K.MAX_PLY + 1, K.MAX_MOVES), dtype=np.int64)
        self.ctl = np.zeros(8, dtype=np.int64)
        self.nodes = 0
        self.board: Board | None = None

    def reset(self) -> None:
        """Forget everything (a new game)."""
        self.tt[1::2] = -1
        self.history.fill(0)

    # ------------------------------------------------------------ kernels

    def legal(self, board: Board) -> np.ndarray:
        buf = np.zeros(K.MAX_MOVES, dtype=np.int64)
        occ = K.occupancy(board.at)
        n = K.gen_moves(board.at, board.sq, board.rank, occ, board.side, board.req, buf)
        return buf[:n].copy()

    def ordered(self, board: Board) -> np.ndarray:
        moves = self.legal(board)
        scores = np.zeros(len(moves), dtype=np.int64)
        occ = K.occupancy(board.at)
        K.order_moves(
            board.at,
            board.sq,
            board.rank,
            occ,
            board.side,
            moves,
            scores,
            len(moves),
            -1,
            self.killers,
            self.history,
            0,
        )
        return moves

    def iteration(
        self, board: Board, order: np.ndarray, depth: int, alpha: int, beta: int, w: np.ndarray
    ) -> tuple[int, int]:
        move, value = K.root_search(
            board.at,
            board.sq,
            board.rank,
            board.side,
            board.req,
            order,
            len(order),
            depth,
            alpha,
            beta,
            self.tt,
            self.history,
            self.killers,
            self.moves,
            self.scores,
            w,
            board.match,
            self.ctl,
        )
        return int(move), int(value)

    def solve(self, pos: Position, deadline: float) -> tuple[int, int]:
        """``(result, move)`` of the rules package's exact round solver before
        ``deadline``: 1 a proven round win with its move, 0 a proven loss, -1
        unknown. Its table is kept across games: its entries hold in any game."""
        value = self.solver.solve(
            pos.at, pos.square_of, pos.rank, pos.side, pos.required, deadline=deadline
        )
        self.nodes = value.nodes
        return value.result, value.move

    # ------------------------------------------------------------ the root

    def pv(self, first: int, depth: int) -> list[int]:
        """The principal variation of the last search, read back from the table."""
        board = self.board
        if board is None or first >= 4096:
            return [first]
        out = np.zeros(max(depth, 1), dtype=np.int64)
        buf = np.zeros(K.MAX_MOVES, dtype=np.int64)
        n = K.pv_from_table(
            board.at, board.sq, board.rank, board.side, board.req, first, out, buf, self.tt
        )
        return [int(m) for m in out[:n]]

    def think(
        self,
        pos: Position,
        deadline: float,
        max_depth: int = 64,
        on_iteration: Iteration | None = None,
        soft: float | None = None,
    ) -> tuple[int, int, int]:
        """Iterative deepening; returns (move, value, depth reached).

        ``deadline`` is never crossed (the watchdog stops the kernel there).
        ``soft`` is the planned stop: no new iteration starts once half of it
        is gone, and it stretches towards ``deadline`` each time the best move
        changes. Without ``soft`` the search runs until ``deadline``.
        """
        self.nodes = 0
        self.ctl[:] = 0
        self.killers.fill(-1)
        if pos.phase == REGROUP:
            return self.regroup(pos, deadline, max_depth, soft)
        board = Board(pos)
        self.board = board
        occ = K.occupancy(board.at)
        win = K.winning_move(board.at, board.sq, board.rank, occ, board.side, board.req)
        if win >= 0:
            return (
                int(win),
                K.win_now_value(board.match, board.rank, board.side, board.req, 0) + 1,
                0,
            )
        order = self.ordered(board)
        if len(order) == 1:
            return int(order[0]), 0, 0
        start = time.monotonic()
        planned = (deadline if soft is None else min(soft, deadline)) - start
        limit = deadline - start
        if soft is not None:
            limit = min(limit, planned * UNSTABLE_CAP)
        w = weights()
        best_move, best_value, reached = int(order[0]), 0, 0
        with Watchdog(self.ctl, start + limit):
            for depth in range(1, max_depth + 1):
                self.ctl[K.C_CANDIDATE] = -1
                if depth >= 3 and abs(best_value) < K.WIN_BOUND:
                    lo, hi = best_value - ASPIRATION, best_value + ASPIRATION
                    move, value = self.iteration(board, order, depth, lo, hi, w)
                    if not lo < value < hi and not self.ctl[K.C_ABORTED]:
                        self.ctl[K.C_CANDIDATE] = -1
                        move, value = self.iteration(board, order, depth, -K.INF, K.INF, w)
                else:
                    move, value = self.iteration(board, order, depth, -K.INF, K.INF, w)
                if self.ctl[K.C_ABORTED]:
                    # The previous best was searched first, so a move that beat it
                    # in the unfinished iteration is at least as good.
                    if self.ctl[K.C_CANDIDATE] >= 0:
                        best_move = int(self.ctl[K.C_CANDIDATE])
                    break
                if depth >= 3 and move != best_move:
                    planned = min(planned * 1.6, limit)  # the root is unstable: think longer
                best_move, best_value, reached = move, value, depth
                i = int(np.nonzero(order == best_move)[0][0])
                order = np.concatenate((order[i : i + 1], order[:i], order[i + 1 :]))
                if on_iteration is not None:
                    on_iteration(
                        depth, best_value, self.pv(best_move, depth), int(self.ctl[K.C_NODES])
                    )
                if abs(best_value) > K.WIN_BOUND:
                    break  # a proven result: deeper search changes nothing
                if soft is not None and time.monotonic() - start > planned * 0.5:
                    break  # the next iteration would not finish in time
        self.nodes = int(self.ctl[K.C_NODES])
        return best_move, best_value, reached

    def regroup(
        self, pos: Position, deadline: float, max_depth: int, soft: float | None
    ) -> tuple[int, int, int]:
        """The regroup choice: both choices searched to the same depth in turn.

        After the choice the round's loser starts the next round with a free
        choice, so each choice's value is the negated search of that start.
        """
        choices = pos.legal_moves()
        boards = []
        for choice in choices:
            child = pos.copy()
            child.make(choice)
            boards.append(Board(child))
        orders = [self.ordered(b) for b in boards]
        start = time.monotonic()
        planned = (deadline if soft is None else min(soft, deadline)) - start
        w = weights()
        best, best_value, reached = choices[0], 0, 0
        with Watchdog(self.ctl, deadline):
            for depth in range(1, max_depth + 1):
                values = []
                for board, order in zip(boards, orders, strict=True):
                    _, value = self.iteration(board, order, depth, -K.INF, K.INF, w)
                    values.append(-value)
                if self.ctl[K.C_ABORTED]:
                    break
                i = max(range(len(choices)), key=values.__getitem__)
                best, best_value, reached = choices[i], values[i], depth + 1
                if soft is not None and time.monotonic() - start > planned * 0.5:
                    break
        self.nodes = int(self.ctl[K.C_NODES])
        self.board = None
        return best, best_value, reached


class CompiledMcts:
    """UCT search with random playouts to the end of the round, compiled.

    The tree is kept in arrays across calls within one decision, so the
    search can be stopped at the planned time, its root inspected here, and
    resumed while the choice is unsettled.
    """

    def __init__(
        self, capacity: int = 1 << 21, exploration: float = 0.7, safe_playouts: bool = True
    ) -> None:
        self.nodes = np.zeros((capacity, 7), dtype=np.int64)
        self.wins = np.zeros(capacity, dtype=np.float64)
        self.exploration = exploration
        self.safe_playouts = safe_playouts
        """Playouts avoid moves that hand the opponent a free path (see kamisado_jit)."""
        self.ctl = np.zeros(8, dtype=np.int64)
        self.board: Board | None = None
        self.playouts = 0

    def start(self, pos: Position, seed: int) -> None:
        """A fresh tree for ``pos`` (in play)."""
        self.board = Board(pos)
        self.ctl[:] = 0
        self.ctl[K.C_NODES] = K.mcts_root(self.nodes, self.wins, pos.side, seed)
        self.playouts = 0

    def grow(self, deadline: float) -> None:
        """Playouts until ``deadline``."""
        board = self.board
        assert board is not None
        with Watchdog(self.ctl, deadline):
            self.playouts += K.mcts_grow(
                board.at,
                board.sq,
                board.rank,
                board.side,
                board.req,
                self.nodes,
                self.wins,
                self.exploration,
                self.safe_playouts,
                self.ctl,
            )

    def children(self, node: int = 0) -> list[tuple[int, int, float]]:
        """``(move, visits, wins)`` of each child of ``node``."""
        first, count = self.nodes[node, K.N_CHILD], self.nodes[node, K.N_COUNT]
        rows = self.nodes[first : first + count]
        return [
            (int(r[K.N_MOVE]), int(r[K.N_VISITS]), float(w))
            for r, w in zip(rows, self.wins[first : first + count], strict=True)
        ]

    def unsettled(self) -> bool:
        """Whether the most visited root move is not the one with the best win rate
        (among moves with a tenth of its visits: a rate from a handful is noise)."""
        stats = [c for c in self.children() if c[1] > 0]
        if not stats:
            return True
        most = max(stats, key=lambda c: c[1])
        floor = max(most[1] // 10, 1)
        rate = max((c for c in stats if c[1] >= floor), key=lambda c: c[2] / c[1])
        return most is not rate

    def best(self) -> tuple[int, int, float]:
        """The most visited root move (ties to more wins), with its statistics."""
        return max(self.children(), key=lambda c: (c[1], c[2]))

    def pv(self, length: int = 8) -> list[int]:
        """The most visited line from the root."""
        line = []
        node = 0
        while len(line) < length and self.nodes[node, K.N_COUNT] > 0:
            first, count = self.nodes[node, K.N_CHILD], self.nodes[node, K.N_COUNT]
            node = first + int(np.argmax(self.nodes[first : first + count, K.N_VISITS]))
            if self.nodes[node, K.N_VISITS] == 0:
                break
            line.append(int(self.nodes[node, K.N_MOVE]))
        return line


def warm_up() -> int:
    """Call every kernel the driver uses once, so that each is compiled (or
    loaded from the cache) before a clock runs; how many had to be compiled.
    Nothing to do with the kernels compiled ahead of time: they are loaded."""
    if jit.installed():
        return 0
    searcher = CompiledSearcher(tt_bits=10)
    pos = Position.start(kind=1)
    far = time.monotonic() + 3600
    searcher.think(pos, far, max_depth=2)
    searcher.pv(searcher.think(pos, far, max_depth=3)[0], 3)
    pos.make(pos.legal_moves()[0])
    searcher.solve(pos, time.monotonic() + 0.05)  # the whole round: stopped
    mcts = CompiledMcts(capacity=1 << 12)
    mcts.start(pos, 1)
    mcts.grow(time.monotonic() + 0.01)
    searcher.think(pos, far, max_depth=2, soft=far)
    board = Board(pos)  # a root with a win on the board calls this one alone
    K.win_now_value(board.match, board.rank, board.side, board.req, 0)
    return compiled()


def serve_and_leave(bot: Bot) -> NoReturn:
    """``run(bot)``, then leave at once, skipping the interpreter's teardown.

    Tearing down the compiled code (numba's dispatchers, LLVM's engines) takes
    the interpreter a quarter to most of a second, more than half of the second
    a bot has to leave after ``quit`` on a loaded machine. Nothing of a bot
    needs it: its output is flushed first.
    """
    try:
        run(bot)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def compiled() -> int:
    """Kernels this process compiled rather than loaded from the cache."""
    return sum(
        sum(f.stats.cache_misses.values())
        for f in vars(K).values()
        if hasattr(f, "stats") and hasattr(f, "py_func")
    )
