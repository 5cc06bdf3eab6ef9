"""What a tournament is before it plays: tournament files, the schedule of pair tasks,
openings, the bots named on the command line, and where the built-in bots are found
(by path: the arena never imports them) and how they get ready.

May import: :mod:`arena.games`, :mod:`arena.match` (time controls and records),
:mod:`arena.engine` (limits and sandbox settings, each bot's engine configuration,
the preparation's process, a command bot's name), :mod:`arena.protocol` (the line
limit and framing), :mod:`arena.storage` (the record of a Swiss or knockout draw,
``rounds.json``). Knows nothing of how a game is played.
"""
