"""greedy: wins at once when it can, never hands the opponent an immediate win if it
can help it, otherwise keeps its towers mobile. The second rung of the ladder.

It looks one own action ahead plus the opponent's direct reply (following forced
zero-length moves and Sumo-push follow-ups, which are where "one move" stops
being one ply in Kamisado). Ties are broken by a seeded random choice so that
games against it vary.

python bots/greedy_bot.py [--seed N]
"""

from __future__ import annotations

import argparse
import random

from arena.bots.kamisado_eval import WIN_ROUND, round_end_value, winning_move

from arena.games.kamisado.board import LIMITED_RAYS
from arena.games.kamisado.notation import move_to_text, text_to_position
from arena.games.kamisado.position import PLAY, Position
from arena.sdk import Request, run

LOSS = -WIN_ROUND


def mobility(pos: Position, player: int) -> int:
    """Ordinary moves available to all of ``player``'s towers minus the opponent's."""
    at = pos.at
    sq_of = pos.square_of
    rank = pos.rank
    total = 0
    for p, sign in ((player, 1), (player ^ 1, -1)):
        rays = LIMITED_RAYS[p]
        n = 0
        for t in range(p * 8, p * 8 + 8):
            for ray in rays[rank[t]][sq_of[t]]:
                for sq in ray:
                    if at[sq] >= 0:
                        break
                    n += 1
        total += sign * n
    return total


def _play_forced(pos: Position) -> int:
    """Play forced zero-length moves (a blocked required tower); return how many."""
    n = 0
    while pos.phase == PLAY:
        moves = pos.legal_moves()
        if len(moves) != 1 or moves[0] & 63 != moves[0] >> 6:
            break
        pos.make(moves[0])
        n += 1
    return n


def opponent_wins_at_once(pos: Position) -> bool:
    """Whether the side to move can win the round now, directly or after a Sumo push."""
    if winning_move(pos) >= 0:
        return True
    side = pos.side
    at = pos.at
    for m in pos.legal_moves():
        if at[m >> 6] < 0:
            continue  # not a push
        pos.make(m)
        forced = _play_forced(pos)
        won = pos.phase == PLAY and pos.side == side and winning_move(pos) >= 0
        for _ in range(forced + 1):
            pos.unmake()
        if won:
            return True
    return False


def action_value(pos: Position, move: int, me: int, follow_ups: int = 1) -> int:
    """What ``move`` is worth to ``me`` on greedy's short horizon."""
    pos.make(move)
    forced = _play_forced(pos)
    try:
        if pos.phase != PLAY:  # the round (or match) ended; a regroup starts one instead
            return round_end_value(pos, me, 0)
        if pos.side == me:  # after a push (or an opponent's forced pass) we move again
            if winning_move(pos) >= 0:
                return WIN_ROUND
            if follow_ups <= 0:
                return mobility(pos, me)
            return max(action_value(pos, m, me, follow_ups - 1) for m in pos.legal_moves())
        if opponent_wins_at_once(pos):
            return LOSS
        return mobility(pos, me)
    finally:
        for _ in range(forced + 1):
            pos.unmake()


def choose_move(pos: Position, rng: random.Random) -> int:
    """Greedy's decision in ``pos`` (a regroup choice included)."""
    moves = pos.legal_moves()
    win = winning_move(pos)
    if win >= 0:
        return win
    me = pos.side
    best = -(10**9)
    best_moves: list[int] = []
    for m in moves:
        v = action_value(pos, m, me)
        if v > best:
            best, best_moves = v, [m]
        elif v == best:
            best_moves.append(m)
    return rng.choice(best_moves)


def main() -> None:
    parser = argparse.ArgumentParser(description="greedy Kamisado bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    def choose(request: Request) -> str:
        pos = text_to_position(request.position)
        text = move_to_text(choose_move(pos, rng))
        return text if text in request.legal else rng.choice(request.legal)

    run(choose, name="greedy", author="Kamisado Arena", version="1")


if __name__ == "__main__":
    main()
