"""One game: the referee between two engines on a rules-core state, the clocks, the
game record it produces and the move events it tells watchers.

May import: :mod:`arena.games`, :mod:`arena.engine`, :mod:`arena.protocol`. Knows
nothing of storage, schedules or ratings; every fault ends as a result with a reason.
"""
