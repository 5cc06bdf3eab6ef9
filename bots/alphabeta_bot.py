"""alphabeta: iterative-deepening principal variation search, compiled with numba.

The top rung of the ladder. The search itself (:mod:`arena.bots.kamisado_jit`,
driven by :mod:`arena.bots.compiled_search`) runs as machine code, some fifteen
times the nodes a second of the pure-Python search it replaced. Kamisado-
specific points:

* the sign follows the side to move, not the ply parity: after a Sumo push the
  same side moves again, so a child is negated only when the turn really passed;
* zero-length moves are plies; a node with a single (forced) action does not
  use up depth, so forced chains never hide a threat behind the horizon;
* a round end is a terminal scored by the match situation (round win good,
  match win best), and a side to move with an open required tower is scored as
  the win it is without searching on;
* moves are ordered TT move, then moves that do not hand the opponent an open
  tower, then killers and history; every move after the first is searched
  with a null window and the root iteration starts from an aspiration window
  around the previous value;
* as Black in a round from the start (single rounds, and the first round of
  a match), it plays the shipped proof book (``books/kamisado-single.txt``,
  built by ``arena solve --book``): a winning move in every position Black's
  strategy reaches, down to positions the solver proves at once;
* an exact round solver (the rules package's) runs first, for a share of the
  planned time, and a proven win is played without further search;
* the clock is planned by :mod:`arena.bots.timeman`: a soft limit from the measured
  number of decisions left, stretched while the best move keeps changing, and
  a hard limit that is never crossed;
* between rounds the regroup choice is searched: the next round is searched
  from each choice.

The issue-15 starting version is kept as ``bench/baseline_alphabeta.py``.

python bots/alphabeta_bot.py [--seed N] [--eval NAME=VALUE ...] [--no-book]
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path
from typing import Any

from arena.bots import timeman
from arena.bots.compiled_search import (
    TUNABLE,
    CompiledSearcher,
    serve_and_leave,
    set_parameter,
    warm_up,
)
from arena.bots.kamisado_eval import protocol_score

from arena.games.base import GameError
from arena.games.kamisado.book import book_key, in_book_scope, parse_book
from arena.games.kamisado.notation import move_to_text, text_to_position
from arena.games.kamisado.position import FREE, PLAY, Position
from arena.protocol.messages import NewGame
from arena.sdk import Bot, Request, log

SOLVER_SHARE = 0.2
"""Share of the soft limit the exact solver may spend before the search runs."""
BOOK = Path(__file__).resolve().parent / "books" / "kamisado-single.txt"
"""The proof that Black wins the single round from the start (found by path:
a bot reads its own folder)."""


def load_book(path: Path = BOOK) -> dict[str, str]:
    """The proof book, or an empty one (with a line on stderr) if it cannot be read."""
    try:
        return parse_book(path.read_text(), str(path))
    except (OSError, UnicodeDecodeError, GameError) as exc:
        log(f"alphabeta: no proof book ({exc}); searching every move")
        return {}


class AlphaBetaBot(Bot):
    name = "alphabeta"
    author = "Kamisado Arena"
    version = "4"

    def __init__(self, seed: int | None = None, book: dict[str, str] | None = None) -> None:
        self.searcher = CompiledSearcher()
        self.rng = random.Random(seed)
        self.book = {} if book is None else book

    def new_game(self, message: NewGame) -> None:
        self.searcher.reset()

    def choose(self, request: Request) -> tuple[str, dict[str, Any]]:
        pos = text_to_position(request.position)
        plan = timeman.plan(request.clock, pos, request.history)
        start = request.received_at
        soft, deadline = start + plan.soft, start + plan.hard
        if self.book and in_book_scope(pos):
            move = self.book.get(book_key(pos))
            if move in request.legal:
                # A proven win: the weakest forced score (protocol.md §2.2).
                return move, {"score": 9000, "pv": [move], "text": "book: a proven round win"}
        if pos.phase == PLAY and pos.required != FREE:
            solved = self.solve(pos, start + plan.soft * SOLVER_SHARE)
            if solved is not None:
                return solved
        move, value, depth = self.searcher.think(pos, deadline, soft=soft)
        pv = [move_to_text(m) for m in self.searcher.pv(move, max(depth, 1))]
        text = pv[0]
        if text not in request.legal:  # cannot happen; never forfeit over it
            text = self.rng.choice(request.legal)
            pv = [text]
        info = {
            "depth": depth,
            "score": protocol_score(value),
            "pv": pv,
            "nodes": self.searcher.nodes,
        }
        return text, info

    def solve(self, pos: Position, deadline: float) -> tuple[str, dict[str, Any]] | None:
        """A proven round win as the answer, or ``None`` to search as usual.

        A proven loss is left to the search, which picks the line that holds
        out longest (the opponent may still go wrong).
        """
        result, move = self.searcher.solve(pos, deadline)
        if result != 1:
            return None
        text = move_to_text(move)
        # A proven win of unknown length: the weakest forced score (protocol.md §2.2).
        return text, {
            "depth": 0,
            "score": 9000,
            "pv": [text],
            "nodes": self.searcher.nodes,
            "text": "solved: the round is won",
        }


def set_weights(pairs: list[str]) -> None:
    """Apply ``NAME=VALUE`` changes to the evaluation or the search (read at every search)."""
    for pair in pairs:
        name, _, value = pair.partition("=")
        if name not in TUNABLE or not value.lstrip("-").isdigit():
            raise SystemExit(f"--eval {pair!r}: expected NAME=INTEGER, NAME one of {TUNABLE}")
        set_parameter(name, int(value))


def main() -> None:
    parser = argparse.ArgumentParser(description="alpha-beta Kamisado bot")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--eval",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change an evaluation weight (self-play tuning)",
    )
    parser.add_argument(
        "--warm", action="store_true", help="build the compiled search's cache, then exit"
    )
    parser.add_argument(
        "--no-book", action="store_true", help="search from the start instead of the proof book"
    )
    args = parser.parse_args()
    set_weights(args.eval)
    # Load (or compile) the search before the handshake, not on the clock.
    if (compiled := warm_up()) and not args.warm:
        log(f"alphabeta: compiled {compiled} search kernels (no usable cache): a slow start")
    if not args.warm:
        serve_and_leave(AlphaBetaBot(args.seed, None if args.no_book else load_book()))


if __name__ == "__main__":
    main()
