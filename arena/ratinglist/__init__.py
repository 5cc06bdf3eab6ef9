"""One rating list across every stored tournament (``arena ratings``, the web view's
ratings page): read the stores read-only and incrementally (``collect``), decide
who each player is (``players``), fit every game and match kind jointly with the
report's model (``fit``) and write it out (``render``).

May import: :mod:`arena.storage`, :mod:`arena.stats`, :mod:`arena.report`,
:mod:`arena.match` (the game record), :mod:`arena.protocol` (a bot's text made
visible).
"""
