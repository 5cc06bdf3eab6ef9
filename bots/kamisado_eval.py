"""Shared Kamisado knowledge for the built-in bots: threats, terminal values, scores.

The bots (greedy, alphabeta, mcts) differ in how they search, not in what they
know about the game; keeping that knowledge here means a fix to, say, how a
round end is scored reaches every bot at once. The compiled search
(``bots/kamisado_jit.py``) carries its own copy of the evaluation and the
values, checked against these by ``tests/test_compiled_search.py``, and reads
the evaluation weights from here (``--eval`` sets them).

Everything works on the fast ``Position`` (int moves, make/unmake), with
module-level tables and the local-variable style of pure-Python hot code.
"""

from __future__ import annotations

from arena.games.kamisado.board import (
    FIRST_STEPS,
    GOAL_RANK,
    LIMITED_RAYS,
    MATCH_TARGET,
    RANK_VALUE,
    SQUARE_COLOUR,
)
from arena.games.kamisado.position import FREE, OVER, PLAY, Position

# ---------------------------------------------------------------- values

WIN_MATCH = 50_000
"""Value of winning the whole match (minus plies to get there)."""
WIN_ROUND = 20_000
"""Base value of winning a round that does not end the match."""
POINT = 100
"""Per point of the score difference after a round win: a round that leaves us
further ahead (a Sumo scoring 2) is better than one that scores 1."""
LIKELY_LOSS = 8_000
"""A static verdict that the side to move must hand the opponent a win."""
WIN_BOUND = 15_000
"""Values above this are (ply-adjusted) proven round or match wins."""
INF = 1_000_000

# ---------------------------------------------------------------- geometry


def _goal_rays() -> tuple:
    """``GOAL_RAYS[player][rank][square]``: the in-range rays that end on the goal row.

    A tower is *open* (threatens to win) when one of these rays is empty: it can
    then move onto the opponent's home row on its next turn.
    """
    out = []
    for p in (0, 1):
        per_rank = []
        for k in range(5):
            per_sq = []
            for s in range(64):
                rays = tuple(
                    ray for ray in LIMITED_RAYS[p][k][s] if ray and ray[-1] >> 3 == GOAL_RANK[p]
                )
                per_sq.append(rays)
            per_rank.append(tuple(per_sq))
        out.append(tuple(per_rank))
    return tuple(out)


GOAL_RAYS = _goal_rays()

# Rows of progress towards the goal, per player and square (0 on the home row).
PROGRESS = tuple(tuple((s >> 3) if p == 0 else 7 - (s >> 3) for s in range(64)) for p in (0, 1))


def is_open(at: list[int], player: int, rank: int, square: int) -> bool:
    """Whether a tower of ``player`` and ``rank`` on ``square`` can reach the goal row now."""
    for ray in GOAL_RAYS[player][rank][square]:
        for sq in ray:
            if at[sq] >= 0:
                break
        else:
            return True
    return False


def winning_move(pos: Position) -> int:
    """A move of the side to move that reaches the goal row at once, or -1.

    Reaching the opponent's home row ends the round at once (no deadlock test
    follows), so such a move always wins the round.
    """
    if pos.phase != PLAY:
        return -1
    at = pos.at
    sq_of = pos.square_of
    rank = pos.rank
    side = pos.side
    towers = range(side * 8, side * 8 + 8) if pos.required == FREE else (side * 8 + pos.required,)
    rays = GOAL_RAYS[side]
    for t in towers:
        s = sq_of[t]
        for ray in rays[rank[t]][s]:
            for sq in ray:
                if at[sq] >= 0:
                    break
            else:
                return s | ray[-1] << 6
    return -1


def round_end_value(pos: Position, player: int, ply: int) -> int:
    """Value for ``player`` of a position where a round (or the match) just ended.

    A match win is best, a round win good and better the further ahead it leaves
    us; quicker wins and slower losses are preferred through ``ply``.
    """
    winner = pos.last_winner
    if pos.phase == OVER:
        v = WIN_MATCH - ply
    else:
        v = WIN_ROUND + POINT * (pos.score(winner) - pos.score(winner ^ 1)) - ply
    return v if winner == player else -v


def win_now_value(pos: Position, ply: int) -> int:
    """Value for the side to move, which has a winning move (see :func:`winning_move`).

    Computed without making the move: the tower that wins is the required one
    (or, on a free choice, any open one: we assume rank 0 for the points).
    """
    side = pos.side
    t = side * 8 + pos.required if pos.required != FREE else -1
    k = pos.rank[t] if t >= 0 else 0
    mine = pos.score(side) + RANK_VALUE[k + 1] - RANK_VALUE[k]
    if mine >= MATCH_TARGET[pos.kind]:
        return WIN_MATCH - ply - 1
    return WIN_ROUND + POINT * (mine - pos.score(side ^ 1)) - ply - 1


# ---------------------------------------------------------------- evaluation

OPEN_WEIGHT = 40
SAFE_WEIGHT = 12
SAFE_CAP = 5
PROGRESS_WEIGHT = 2
PUSH_WEIGHT = 15
BLOCKED_WEIGHT = 6
SCORE_WEIGHT = 30
OPEN_POINTS_WEIGHT = 0
"""Per point an open tower's round win would score beyond a plain tower's one:
a Sumo's threat is worth its rank (a Sumo scores 2, a Double 4, a Triple 8),
which matters when a single round win by it can decide the match."""
EXTRA_POINTS = tuple(max(0, RANK_VALUE[k + 1] - RANK_VALUE[k] - 1) for k in range(4)) + (0,)


def evaluate(pos: Position) -> int:
    """Static value for the side to move, in a position without an immediate win.

    What matters in Kamisado: open towers (threats to reach the home row), how
    many moves the required tower has that do not hand the opponent an open
    tower of the destination's colour (none at all means the round is lost),
    Sumo towers able to push, blocked towers, advancement and the match score.
    """
    at = pos.at
    sq_of = pos.square_of
    rank = pos.rank
    side = pos.side
    opp = side ^ 1
    goal = GOAL_RAYS
    value = SCORE_WEIGHT * (pos.score(side) - pos.score(opp))
    req = pos.required
    if req != FREE:
        tower = side * 8 + req
        frm = sq_of[tower]
        moves: list[int] = []
        pos.tower_moves(tower, moves)
        obase = opp * 8
        if not moves:
            c = SQUARE_COLOUR[frm]
            u = obase + c
            if is_open(at, opp, rank[u], sq_of[u]):
                return -LIKELY_LOSS
        else:
            safe = 0
            pushes = 0
            for m in moves:
                to = m >> 6
                if at[to] >= 0:
                    pushes += 1  # a push: the follow-up is ours again, call it safe
                    continue
                u = obase + SQUARE_COLOUR[to]
                us = sq_of[u]
                # Would u be open once this tower has moved frm -> to?
                for ray in goal[opp][rank[u]][us]:
                    for sq in ray:
                        if sq == to or (at[sq] >= 0 and sq != frm):
                            break
                    else:
                        break  # u would be open: this move loses
                else:
                    safe += 1
            if not safe and not pushes:
                return -LIKELY_LOSS
            value += SAFE_WEIGHT * min(safe + pushes, SAFE_CAP)
    # Threats, advancement, Sumo push power and blocked towers, both sides.
    for p, sign in ((side, 1), (opp, -1)):
        prog = PROGRESS[p]
        g = goal[p]
        first = FIRST_STEPS[p]
        score = 0
        for t in range(p * 8, p * 8 + 8):
            s = sq_of[t]
            k = rank[t]
            score += PROGRESS_WEIGHT * prog[s]
            for ray in g[k][s]:
                for sq in ray:
                    if at[sq] >= 0:
                        break
                else:
                    score += OPEN_WEIGHT + OPEN_POINTS_WEIGHT * EXTRA_POINTS[k]
                    break
            blocked = True
            for sq in first[s]:
                if at[sq] < 0:
                    blocked = False
                    break
            if blocked:
                score -= BLOCKED_WEIGHT
            if k and pos._can_push(p, s, k):
                score += PUSH_WEIGHT
        value += sign * score
    return value


# ---------------------------------------------------------------- protocol


FORCED = 10_000
"""protocol.md §2.2: a forced result in n plies is reported as ±(FORCED - n)."""


def protocol_score(value: int) -> int:
    """A search value in the units bots report (protocol.md §2.2).

    Proven round and match wins (beyond ``WIN_BOUND``) become ``±(10000 - n)``;
    their distance ``n`` is the ply count the value was reduced by, which is the
    value's remainder below a multiple of ``POINT`` (both bases and every
    points bonus are multiples of it, and no search is 100 plies deep).
    Heuristic values stay as they are, clamped below the forced range.
    """
    if abs(value) > WIN_BOUND:
        plies = max(1, -abs(value) % POINT)
        return (FORCED - plies) * (1 if value > 0 else -1)
    return max(-(FORCED - 1001), min(FORCED - 1001, value))
