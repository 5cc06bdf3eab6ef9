"""mcts: UCT Monte-Carlo tree search with fast playouts to the end of the round.

Rewards are round wins, credited to the player who *made* the move into a
node (stored per node), because after a Sumo push the same side moves again
and "alternate the sign each ply" would credit the wrong player. Playouts are
random except that a playout takes a move onto the goal row when it has one:
a cheap rule that makes the statistics of a round far less noisy. A node whose
mover can win at once is scored as a certain win without a playout.

Time is planned by :mod:`bots.timeman`; at the soft limit the search goes on
(up to the hard limit) while the most visited root move is not also the one
with the best win rate, since the choice between them is not settled yet.

python bots/mcts_bot.py [--seed N]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any

from arena.games.kamisado.notation import move_to_text, text_to_position
from arena.games.kamisado.position import PLAY, Position
from arena.sdk import Bot, Request, run
from bots import timeman
from bots.kamisado_eval import winning_move

EXPLORATION = 0.7


class Node:
    """A tree node: the move that led here and who made it, with its statistics."""

    __slots__ = ("move", "mover", "parent", "children", "untried", "visits", "wins", "winner")

    def __init__(self, move: int, mover: int, parent: Node | None) -> None:
        self.move = move
        self.mover = mover
        self.parent = parent
        self.children: list[Node] = []
        self.untried: list[int] | None = None
        self.visits = 0
        self.wins = 0.0
        self.winner = -1
        """The round's winner when this node is terminal (the round ended here)."""


def playout(pos: Position, rng: random.Random) -> int:
    """Play the round out (random, but winning moves are taken); return its winner."""
    made = 0
    make = pos.make
    choice = rng.choice
    while pos.phase == PLAY:
        m = winning_move(pos)
        if m < 0:
            m = choice(pos.legal_moves())
        make(m)
        made += 1
    winner = pos.last_winner
    unmake = pos.unmake
    for _ in range(made):
        unmake()
    return winner


def search(
    pos: Position, deadline: float, rng: random.Random, root: Node | None = None
) -> tuple[Node, int]:
    """Grow a UCT tree from ``pos`` (or go on growing ``root``) until ``deadline``;
    return the root and the playouts of this call."""
    if root is None:
        root = Node(-1, pos.side ^ 1, None)
        root.untried = pos.legal_moves()
        rng.shuffle(root.untried)
    make = pos.make
    unmake = pos.unmake
    log = math.log
    sqrt = math.sqrt
    iterations = 0
    while True:
        if time.monotonic() > deadline:  # every playout: one costs far more than the clock read
            break
        iterations += 1
        node = root
        depth = 0
        # Selection.
        while not node.untried and node.children and node.winner < 0:
            c_log = EXPLORATION * sqrt(log(node.visits))
            best = None
            best_score = -1.0
            for child in node.children:
                score = child.wins / child.visits + c_log / sqrt(child.visits)
                if score > best_score:
                    best_score = score
                    best = child
            assert best is not None
            node = best
            make(node.move)
            depth += 1
        # Expansion.
        if node.winner < 0 and node.untried:
            move = node.untried.pop()
            mover = pos.side
            make(move)
            depth += 1
            child = Node(move, mover, node)
            node.children.append(child)
            node = child
            if pos.phase != PLAY:
                child.winner = pos.last_winner
            else:
                child.untried = pos.legal_moves()
                rng.shuffle(child.untried)
        # Simulation.
        if node.winner >= 0:
            winner = node.winner
        elif pos.phase != PLAY:  # the root itself is terminal: nothing to learn
            winner = node.winner = pos.last_winner
        else:
            w = winning_move(pos)
            winner = pos.side if w >= 0 else playout(pos, rng)
        for _ in range(depth):
            unmake()
        # Backpropagation: credit the player who made each move.
        while node is not None:
            node.visits += 1
            if node.mover == winner:
                node.wins += 1.0
            node = node.parent
    return root, iterations


def unsettled(root: Node) -> bool:
    """Whether the most visited root move is not the one with the best win rate
    (among moves with a tenth of its visits: a rate from a handful is noise)."""
    most = max(root.children, key=lambda c: c.visits)
    floor = max(most.visits // 10, 1)
    rate = max((c for c in root.children if c.visits >= floor), key=lambda c: c.wins / c.visits)
    return most is not rate


class MctsBot(Bot):
    name = "mcts"
    author = "Kamisado Arena"
    version = "2"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, request: Request) -> tuple[str, dict[str, Any]]:
        pos = text_to_position(request.position)
        win = winning_move(pos)
        if win >= 0:
            # A win in one ply, in protocol.md §2.2's units.
            return move_to_text(win), {"depth": 1, "score": 9999, "pv": [move_to_text(win)]}
        plan = timeman.plan(request.clock, pos, request.history)
        # Playouts have no iterations to stop between, so the plan is the mean:
        # half the soft limit, up to 1.5 times it while the root is unsettled
        # (measured: more than that takes over 80 % of a 2+0.02 clock under load).
        root, playouts = search(pos, request.received_at + plan.soft * 0.5, self.rng)
        hard = request.received_at + min(plan.hard, plan.soft * 1.5)
        while root.children and unsettled(root) and time.monotonic() < hard:
            step = min(hard, time.monotonic() + max(plan.soft * 0.25, 0.005))
            root, more = search(pos, step, self.rng, root)
            playouts += more
        if not root.children:
            text = self.rng.choice(request.legal)
            return text, {"nodes": playouts}
        best = max(root.children, key=lambda c: (c.visits, c.wins))
        text = move_to_text(best.move)
        if text not in request.legal:  # cannot happen; never forfeit over it
            text = self.rng.choice(request.legal)
        pv = [text]
        node = best
        while node.children and len(pv) < 8:
            node = max(node.children, key=lambda c: c.visits)
            pv.append(move_to_text(node.move))
        info = {
            "depth": len(pv),
            "score": round(100 * (2 * best.wins / best.visits - 1)),  # protocol.md §2.2
            "pv": pv,
            "nodes": playouts,
        }
        return text, info


def main() -> None:
    parser = argparse.ArgumentParser(description="UCT Monte-Carlo Kamisado bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    run(MctsBot(args.seed))


if __name__ == "__main__":
    main()
