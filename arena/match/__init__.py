"""One game: the referee between two engines on a rules-core state, the clocks, the
game record it produces and the move events it tells watchers.

May import: :mod:`arena.games`, :mod:`arena.engine` (the engine and its faults),
:mod:`arena.protocol.messages`. Knows nothing of storage, schedules or ratings; every
fault ends as a result with a reason.
"""
