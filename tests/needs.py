"""What the suite needs from the machine, and the one way a test says it is missing.

A test that cannot run without a tool (node, a C compiler, a working bubblewrap
sandbox, chromium, an optional package) asks for it here rather than calling
``pytest.skip`` itself. On a developer's laptop a missing tool is a skip with
the reason (``-rs`` prints them all). Under ``ARENA_REQUIRE_ALL=1``, which
``.ci/run`` sets, it is a failure: a CI run where half the suite did not run
must not be green. ``conftest.py`` backs this up for any other skip.
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Callable
from types import ModuleType
from typing import NoReturn

import pytest

SWITCH = "ARENA_REQUIRE_ALL"


def required() -> bool:
    """Whether every test must run (``ARENA_REQUIRE_ALL=1``): a skip is then an error."""
    return os.environ.get(SWITCH, "") not in ("", "0")


def missing(reason: str, *, module_level: bool = False) -> NoReturn:
    """Skip the test (or a whole module) for ``reason``, or fail it under the switch."""
    if required():
        pytest.fail(f"{SWITCH}=1 and {reason}", pytrace=False)
    if module_level:
        pytest.skip(reason, allow_module_level=True)
    # Reported at the test, not here (as a skipif marker is): pytest's own flag
    # (since 7.0) for skips raised on a test's behalf.
    raise pytest.skip.Exception(reason, _use_item_location=True)


def tool(name: str, *alternatives: str, what: str | None = None) -> str:
    """The path of the program ``name`` (or of the first alternative found)."""
    for candidate in (name, *alternatives):
        path = shutil.which(candidate)
        if path is not None:
            return path
    missing(f"{what or name} is not installed (not found on PATH)")


def if_present(get: Callable[[], str]) -> str | None:
    """``get()`` (e.g. :func:`node`) if this machine has it, else ``None``: for a test
    that does more with the tool and still something without it. Under the
    switch a missing tool is an error here too: CI must not quietly do less."""
    if required():
        return get()
    try:
        return get()
    except pytest.skip.Exception:
        return None


def node() -> str:
    """node, for the JavaScript example bot and the report's own script."""
    return tool("node", what="node (Debian: nodejs)")


def c_compiler() -> str:
    """A C compiler, for the C example bot."""
    return tool("cc", "gcc", "clang", what="a C compiler (cc, gcc or clang)")


def sandbox() -> None:
    """A working bubblewrap sandbox: a real sandboxed process, as the arena starts bots."""
    from arena.engine.sandbox import probe

    reason = probe()
    if reason is not None:
        missing(f"the bot sandbox cannot run here: {reason}")


def module(name: str, hint: str, *, module_level: bool = False) -> ModuleType:
    """The module ``name`` (an optional dependency); ``hint`` says how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"{name} cannot be imported ({exc}); {hint}", module_level=module_level)


def static_c_compiler() -> str:
    """A C compiler that links statically: the C library's archive (``libc.a``,
    Debian: libc6-dev) beside the compiler, for a statically linked bot."""
    import subprocess

    compiler = c_compiler()
    found = subprocess.run(
        [compiler, "-print-file-name=libc.a"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if not os.path.isabs(found) or not os.path.isfile(found):
        missing(f"{compiler} has no static C library (libc.a; Debian: libc6-dev)")
    return compiler


def cgroups() -> None:
    """A cgroup hierarchy the arena can write: every bot bounded by a cgroup of its own."""
    from arena.engine import cgroups as bot_cgroups

    found = bot_cgroups.hierarchies()
    if isinstance(found, str):
        missing(f"bots get no cgroup here: {found}")


def root() -> None:
    """The arena runs as root (bots then run as another user, ``[sandbox] user``)."""
    if os.geteuid() != 0:
        missing("the arena does not run as root here")


def netns() -> None:
    """Network namespaces the test makes itself (``ip netns``, Debian: iproute2), as root."""
    root()
    tool("ip", what="ip (Debian: iproute2)")
