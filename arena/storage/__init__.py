"""The results database (one SQLite file per tournament, WAL, one transaction per
finished game) and the JSON-lines export.

May import: :mod:`arena.match` (the game record) and :mod:`arena.games` (figures for
the export). Knows nothing of ratings or reports.
"""
