"""Where games run: game slots on one trio loop, local worker processes, Ray actors.
Each takes pair tasks and gives back game records and live events, whichever
backend it is.

May import: :mod:`arena.match`, :mod:`arena.engine.bot`, :mod:`arena.plan`. Knows nothing
of the store: the tournament alone writes results.
"""
