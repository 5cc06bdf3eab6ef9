"""mcts: UCT Monte-Carlo tree search with fast playouts to the end of the round.

The tree and the playouts are compiled (:mod:`arena.bots.kamisado_jit`, driven by
:class:`bots.compiled_search.CompiledMcts`), some hundred times the playouts
of the pure-Python search it replaced. Rewards are round wins, credited to
the player who *made* the move into a node (stored per node), because after a
Sumo push the same side moves again and "alternate the sign each ply" would
credit the wrong player. Playouts are random except that a playout takes a
move onto the goal row when it has one: a cheap rule that makes the
statistics of a round far less noisy, and (``--playouts safe``, the
default; accepted by SPRT, see docs/ladder.md) never hands the opponent a
free path to its goal row when another move exists. A node whose mover can
win at once is scored as a certain win without a playout.

Time is planned by :mod:`arena.bots.timeman`; at the soft limit the search goes on
(up to the hard limit) while the most visited root move is not also the one
with the best win rate, since the choice between them is not settled yet.
Between rounds each regroup choice gets half the time, and the choice whose
next round the opponent does worst in is taken.

python bots/mcts_bot.py [--seed N] [--playouts safe|random]
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from arena.bots import timeman
from arena.bots.compiled_search import CompiledMcts, serve_and_leave, warm_up
from arena.bots.kamisado_eval import winning_move

from arena.games.kamisado.notation import move_to_text, text_to_position
from arena.games.kamisado.position import REGROUP, Position
from arena.sdk import Bot, Request, log


class MctsBot(Bot):
    name = "mcts"
    author = "Kamisado Arena"
    version = "3"

    def __init__(self, seed: int | None = None, safe_playouts: bool = True) -> None:
        self.rng = random.Random(seed)
        self.tree = CompiledMcts(safe_playouts=safe_playouts)

    def choose(self, request: Request) -> tuple[str, dict[str, Any]]:
        pos = text_to_position(request.position)
        win = winning_move(pos)
        if win >= 0:
            # A win in one ply, in protocol.md §2.2's units.
            return move_to_text(win), {"depth": 1, "score": 9999, "pv": [move_to_text(win)]}
        plan = timeman.plan(request.clock, pos, request.history)
        start = request.received_at
        if pos.phase == REGROUP:
            return self.regroup(pos, start + plan.soft * 0.5)
        # Playouts have no iterations to stop between, so the plan is the mean:
        # half the soft limit, up to 1.5 times it while the root is unsettled.
        self.tree.start(pos, self.rng.getrandbits(31))
        self.tree.grow(start + plan.soft * 0.5)
        hard = start + min(plan.hard, plan.soft * 1.5)
        while self.tree.unsettled() and time.monotonic() < hard:
            self.tree.grow(min(hard, time.monotonic() + max(plan.soft * 0.25, 0.005)))
        move, visits, wins = self.tree.best()
        text = move_to_text(move)
        if text not in request.legal:  # cannot happen; never forfeit over it
            text = self.rng.choice(request.legal)
        pv = [move_to_text(m) for m in self.tree.pv()] or [text]
        info = {
            "depth": len(pv),  # the principal line's length (protocol.md §7, Monte-Carlo bots)
            "score": round(100 * (2 * wins / max(visits, 1) - 1)),  # protocol.md §2.2
            "pv": pv,
            "playouts": self.tree.playouts,
        }
        return text, info

    def regroup(self, pos: Position, deadline: float) -> tuple[str, dict[str, Any]]:
        """Each regroup choice gets half the time; the opponent, who starts the
        next round, is scored by its best root win rate there."""
        choices = pos.legal_moves()
        rates = []
        playouts = 0
        for i, choice in enumerate(choices):
            child = pos.copy()
            child.make(choice)
            self.tree.start(child, self.rng.getrandbits(31))
            now = time.monotonic()
            self.tree.grow(now + (deadline - now) / (len(choices) - i))
            _, visits, wins = self.tree.best()
            rates.append(wins / max(visits, 1))
            playouts += self.tree.playouts
        i = min(range(len(choices)), key=rates.__getitem__)
        text = move_to_text(choices[i])
        score = round(100 * (1 - 2 * rates[i]))
        return text, {"depth": 1, "score": score, "pv": [text], "playouts": playouts}


def main() -> None:
    parser = argparse.ArgumentParser(description="UCT Monte-Carlo Kamisado bot")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument(
        "--playouts",
        choices=("safe", "random"),
        default="safe",
        help="safe: playouts avoid moves that hand over a free path",
    )
    parser.add_argument(
        "--warm", action="store_true", help="build the compiled search's cache, then exit"
    )
    args = parser.parse_args()
    # Load (or compile) the search before the handshake, not on the clock.
    if (compiled := warm_up()) and not args.warm:
        log(f"mcts: compiled {compiled} search kernels (no usable cache): a slow start")
    if not args.warm:
        serve_and_leave(MctsBot(args.seed, safe_playouts=args.playouts == "safe"))


if __name__ == "__main__":
    main()
