"""Where games run: game slots on one trio loop, local worker processes, Ray actors.
Each is a :class:`~arena.backends.pool.Pool`: it takes pair tasks and gives back
game records and live events, whichever backend it is.

May import: :mod:`arena.match`, :mod:`arena.engine`, :mod:`arena.games`, :mod:`arena.plan`,
:mod:`arena.protocol` (the workers' line framing). Knows nothing of the store: the
tournament alone writes results.
"""
