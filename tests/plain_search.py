"""Plain exhaustive search over the pure-Python rules core, the reference the
compiled round solver and the shipped proof book are checked against: every
move, no table, no move ordering, no cut but the first winning move."""

from __future__ import annotations

from arena.games.kamisado.position import PLAY, Position


class TooBig(Exception):
    pass


Seen = dict[str, int]


def wins_within(pos: Position, attacker: int, plies: int, budget: list[int], seen: Seen) -> bool:
    """Whether ``attacker`` wins the round within ``plies`` plies whatever the
    other side plays: plain depth-first search over the rules core, no table,
    stopping only at the first winning move. ``budget[0]`` nodes, then ``TooBig``;
    ``seen`` counts the pushes and deadlocks met."""
    budget[0] -= 1
    if budget[0] < 0:
        raise TooBig
    if plies <= 0:
        return False
    mover = pos.side
    for m in pos.legal_moves():
        seen["push"] += m & 63 != m >> 6 and pos.at[m >> 6] >= 0
        pos.make(m)
        try:
            if pos.phase != PLAY:
                seen["deadlock"] += pos.last_reason == "deadlock"
                won = pos.last_winner == attacker
            else:
                won = wins_within(pos, attacker, plies - 1, budget, seen)
        finally:
            pos.unmake()
        if won and mover == attacker:
            return True
        if not won and mover != attacker:
            return False
    return mover != attacker


def plain_value(pos: Position, budget: int, seen: Seen | None = None) -> tuple[int, int]:
    """``(winner, distance)`` of the round: the first depth at which either side
    wins whatever the other plays is the quickest win and the longest defence."""
    seen = {"push": 0, "deadlock": 0} if seen is None else seen
    left = [budget]
    for plies in range(1, 200):
        for player in (pos.side, pos.side ^ 1):
            if wins_within(pos, player, plies, left, seen):
                return player, plies
    raise TooBig
