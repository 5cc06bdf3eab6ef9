"""What a tournament is before it plays: tournament files, the schedule of pair tasks,
openings, and where the built-in bots are found and how they get ready.

May import: :mod:`arena.games`, :mod:`arena.match` (time controls and records),
:mod:`arena.engine.bot` (limits and sandbox settings). Knows nothing of how a game is
played.
"""
