"""The kernels' decorator: numba's JIT, or the same kernels compiled ahead of time.

A process that loads numba pays about a second before its first kernel runs
(numba's import, its type registries, the cached machine code linked in),
and a built-in bot pays it on every start: most of the time between ``arena
run`` and its first stored game. So the bots' preparation also compiles the
kernels that Python code calls into one extension module (``arena/bots/aot.py``),
and a bot process that finds it installs it here (:func:`install`) before
the kernel modules are imported. Their ``@njit`` then hands out the module's
functions, and numba is never imported.

A kernel the module does not export (one only other kernels call) has no
machine code of its own there; calling it from Python is a programming error
that says so. Every other process (the arena's analysis, the tests, the
preparation itself) gets numba's ``njit`` as before.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

_module: ModuleType | None = None


def install(module: ModuleType) -> None:
    """Take the kernels from ``module`` (before the kernel modules are imported)."""
    global _module
    _module = module


def installed() -> bool:
    return _module is not None


def symbol(func: Callable[..., Any]) -> str:
    """The exported name of a kernel: its module's last name and its own
    (``solver_gen_moves``), unique across the kernel modules."""
    return f"{func.__module__.rpartition('.')[2]}_{func.__name__}"


def njit(*args: Any, **options: Any) -> Any:
    """``numba.njit``, or the installed module's function of the same kernel."""
    if _module is None:
        from numba import njit as numba_njit

        return numba_njit(*args, **options)
    if len(args) == 1 and callable(args[0]) and not options:
        return _compiled(args[0])
    return _compiled


def _compiled(func: Callable[..., Any]) -> Callable[..., Any]:
    assert _module is not None
    found: Callable[..., Any] | None = getattr(_module, symbol(func), None)
    if found is not None:
        return found
    name = symbol(func)

    def not_exported(*args: Any) -> Any:
        raise RuntimeError(
            f"kernel {name} is not in the ahead-of-time module: "
            "add it to ENTRY_POINTS in arena/bots/aot.py"
        )

    not_exported.__name__ = func.__name__
    return not_exported
