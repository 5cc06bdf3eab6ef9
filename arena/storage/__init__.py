"""The results database (one SQLite file per tournament, WAL, one transaction per
finished game) and the JSON-lines export.

May import: :mod:`arena.match` (the game record, which gives its game's figures for
the export). Knows nothing of ratings or reports.
"""
