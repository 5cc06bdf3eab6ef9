"""Game analysis with the games' exact solvers: every stored position's value,
where each part (a Kamisado round) was decided, and each bot's blunders and
missed wins. ``values`` solves a record's positions, ``figures`` reads them,
``store`` keeps them in ``analysis.sqlite`` beside the games, ``run`` drives
the worker processes or the Ray tasks (``arena analyze``).

May import: :mod:`arena.games` (replaying and solving through the ``Game``
interface), :mod:`arena.match` (the game record), :mod:`arena.storage` (the
games, read-only), :mod:`arena.engine` (its worker processes die with the arena, as
bots do) and :mod:`arena.backends` (Ray tasks on a cluster, imported only when asked
for)."""

MIN_BUDGET_MS = 1
MAX_BUDGET_MS = 60_000
DEFAULT_BUDGET_MS = 20
"""Per position: most positions a few plies into a round are proven in well
under a millisecond, the rest are what the budget buys (see bench/analysis.py).
Here rather than in ``run``, so that the command line's options read them without
loading the worker machinery."""
