"""The arena's start-up (issue 23): what it no longer does before its first game.

The figures are ``bench/startup.py``'s; these tests hold the behaviour that made
them: the path of ``arena run`` to its first game imports no scientific stack,
and the sandbox's ``/etc`` view is made where it is cheap to make.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

RUN_PATH = (
    "arena.cli",
    "arena.cli.live",
    "arena.plan.config",
    "arena.tournament",
    "arena.backends.workers",
)
"""What ``arena run`` and its worker processes import before their first game."""

HEAVY = ("scipy", "numpy", "numba", "jinja2", "starlette")


def test_the_path_of_arena_run_to_its_first_game_imports_no_scientific_stack() -> None:
    """scipy alone (the rating fit, through the report) was a second of every start."""
    code = (
        f"import importlib, json, sys\nfor m in {RUN_PATH!r}: importlib.import_module(m)\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


def test_the_etc_view_is_made_in_memory() -> None:
    """On a disk each of its 700 links is a journalled write (0.5 to 0.9 s a view)."""
    code = "from arena.engine import sandbox; print(sandbox.etc_view())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    view = done.stdout.strip()
    assert view.startswith("/dev/shm/arena-etc-") and view.endswith("/etc")
    assert not os.path.exists(os.path.dirname(view))  # removed when its process ended
