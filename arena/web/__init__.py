"""The live web view: ``arena serve`` and ``arena run --web``.

An ASGI app (``arena/web/app.py``, Starlette) served by Hypercorn's trio worker
in the arena's own trio loop (``arena/web/server.py``), fed by the running
tournament's :class:`~arena.web.hub.LiveHub` and by read-only reads of the
results databases (``arena/web/store_view.py``); remote bots connect to its
gateway (``arena/web/gateway.py``).

May import: :mod:`arena.storage`, :mod:`arena.report`, :mod:`arena.ratinglist`,
:mod:`arena.match`, :mod:`arena.games`, :mod:`arena.analysis` (the solver's marks
for replays), :mod:`arena.plan` and :mod:`arena.tournament` (the live run it watches),
:mod:`arena.engine` and :mod:`arena.protocol` (the remote bots' gateway and its links).
"""
