"""Built-in bots: each a standalone program speaking the protocol through ``arena.sdk``.

``builtin:NAME`` in a tournament file or on the command line resolves here.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent

BUILTIN: dict[str, tuple[str, str]] = {
    "random": ("random_bot.py", "uniform over the legal actions (seedable with --seed)"),
    "greedy": ("greedy_bot.py", "wins at once if it can, avoids handing over a win, else mobility"),
    "mcts": ("mcts_bot.py", "compiled UCT Monte-Carlo search with round playouts, time-managed"),
    "alphabeta": (
        "alphabeta_bot.py",
        "compiled PVS alpha-beta, TT, exact round solver, proof book as Black, Kamisado eval",
    ),
    "battle-greedy": ("battle_greedy_bot.py", "Sekigahara: greedy deploys, odds-based challenges"),
}
"""name -> (script in this folder, one-line description)."""


def builtin_names() -> list[str]:
    return sorted(name for name in BUILTIN if (_HERE / BUILTIN[name][0]).exists())


def resolve_builtin(name: str) -> list[str]:
    """The command line of built-in bot ``name`` (``random`` or ``builtin:random``).

    Raises ``KeyError`` naming the built-in bots if there is none by that name.
    """
    name = name.removeprefix("builtin:")
    if name not in BUILTIN:
        raise KeyError(f"known: {', '.join(builtin_names())}")
    return [sys.executable, str(_HERE / BUILTIN[name][0])]


PREPARED = ("alphabeta", "mcts")
"""Built-in bots with a step before their first game: both search with the
compiled kernels, whose cache ``compiled_search.py --warm`` builds (see
``arena/plan/prepare.py``)."""


def prepare_command(command: list[str]) -> list[str] | None:
    """The command that gets built-in bot ``command`` ready, or ``None``.

    Recognised by the script's path, so a bot named by its command line
    (``python bots/alphabeta_bot.py``) is prepared as well as ``builtin:alphabeta``.
    The bots share one cache, so they share one command (run once).
    """
    for name in PREPARED:
        script = str(_HERE / BUILTIN[name][0])
        if len(command) >= 2 and str(Path(command[1]).resolve()) == script:
            return [command[0], str(_HERE / "compiled_search.py"), "--warm"]
    return None
