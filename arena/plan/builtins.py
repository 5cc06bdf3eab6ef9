"""The built-in bots, as programs: where their scripts are, never their code.

They are standalone programs speaking the protocol (the repository's
``bots/`` folder, installed as the package ``arena.bots``), started like any
entrant as ``python SCRIPT``. The arena finds that folder by path, through
the import system's finder, without executing anything in it: importing the
bots would tie the arena to their dependencies, and a top-level name such as
``bots`` could be shadowed by a user's own folder of that name (the current
folder comes first on ``sys.path`` in a Ray node's copy of a shipped working
directory). ``arena.bots`` cannot be shadowed so: a subpackage is looked up
in its parent's folders only.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

PACKAGE = "arena.bots"

BUILTIN: dict[str, tuple[str, str]] = {
    "random": ("random_bot.py", "uniform over any game's legal actions (seedable with --seed)"),
    "greedy": ("greedy_bot.py", "wins at once if it can, avoids handing over a win, else mobility"),
    "mcts": ("mcts_bot.py", "compiled UCT Monte-Carlo search with round playouts, time-managed"),
    "alphabeta": (
        "alphabeta_bot.py",
        "compiled PVS alpha-beta, TT, exact round solver, proof book as Black, Kamisado eval",
    ),
    "battle-greedy": ("battle_greedy_bot.py", "Sekigahara: greedy deploys, odds-based challenges"),
}
"""name -> (script in the built-in bots' folder, one-line description)."""

PREPARED = ("alphabeta", "mcts")
"""Built-in bots with a step before their first game: both search with the
compiled kernels, whose cache :data:`PREPARE_SCRIPT` builds (see
``arena/plan/prepare.py``)."""

PREPARE_SCRIPT = "prepare.py"
"""The preparation of the compiled search, in the built-in bots' folder."""

PREPARE_STAMP = Path("__pycache__") / "prepared.json"
"""What the preparation leaves beside the cache it built: the inputs it built it
from (``arena/plan/prepare.py`` reads it to skip a preparation with nothing to do)."""


@cache
def folder() -> Path | None:
    """The installed built-in bots' folder, or ``None`` if they are not installed."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def builtin_names() -> list[str]:
    where = folder()
    return sorted(name for name in BUILTIN if where and (where / BUILTIN[name][0]).exists())


def description(name: str) -> str:
    return BUILTIN[name][1]


def resolve_builtin(name: str) -> list[str]:
    """The command line of built-in bot ``name`` (``random`` or ``builtin:random``).

    Raises ``KeyError`` naming the built-in bots if there is none by that name.
    """
    name = name.removeprefix("builtin:")
    where = folder()
    if name not in BUILTIN or where is None or not (where / BUILTIN[name][0]).exists():
        known = ", ".join(builtin_names()) or "none: the built-in bots are not installed"
        raise KeyError(f"known: {known}")
    return [sys.executable, str(where / BUILTIN[name][0])]


def prepare_command(name: str | None) -> list[str] | None:
    """The command that gets built-in bot ``name`` (``alphabeta`` or
    ``builtin:alphabeta``) ready, or ``None`` for a bot without a preparation.

    Only a name says a bot is built in: the tournament file's or the command
    line's ``builtin:NAME`` (or ``arena play``'s bare name), never a path an
    entrant supplies (a symlink to a built-in script, an interpreter of its own
    beside it). The command is the arena's own: its interpreter
    (``sys.executable``) on its own preparation script. The bots share one cache,
    so they share one command.
    """
    where = folder()
    if where is None or name is None or name.removeprefix("builtin:") not in PREPARED:
        return None
    return [sys.executable, str(where / PREPARE_SCRIPT)]


def stamp_path() -> Path | None:
    where = folder()
    return None if where is None else where / PREPARE_STAMP
