"""What the engine tells a game record about a bot: how its process was confined.

A plain value, kept apart from the sandbox that fills it (``sandbox.py``, with
its processes and files) so that the game record, the store and every report
load no process code to read it.
"""

from __future__ import annotations

import msgspec

__all__ = ["SandboxRecord"]


class SandboxRecord(msgspec.Struct, frozen=True, kw_only=True):
    """How one player's bot process was confined (kept in each game record).

    ``mode`` is the one in force (``bwrap`` or ``none``); ``ro``/``rw``/``net`` are
    the bot's own grants beyond the default sandbox. ``user`` is who the bot ran
    as (empty: the arena's own user, or a record from before issue 22);
    ``bound`` how its processes and memory were bounded as a whole: ``cgroup``
    (one per bot process), ``rlimit`` (per process, and processes per user) or
    empty (unconfined, or an older record).
    """

    mode: str
    ro: list[str] = []
    rw: list[str] = []
    net: bool = False
    user: str = ""
    bound: str = ""
    freeze: str = ""
    """How the bot was kept off its opponent's time (``arena/engine/cpu.py``):
    ``freezer``, ``cgroup.freeze``, ``sigstop``, ``ponder`` (not at all) or empty
    (an older record)."""
    cores: int = 0
    """Its ``threads``: the cores it was given (0: an older record)."""
