"""The search kernels compiled ahead of time (``bots/aot.py``): a bot loads them
without numba, and they search exactly as the JIT's kernels do.

The session fixture (``conftest.compiled_search``) ran the bots' preparation,
which builds the module into the tree's cache; these tests use that build.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import needs
import pytest
from arena.bots import aot, jit_cache

from arena.games.kamisado import round_solver, solver
from arena.games.kamisado.jit import symbol

BOTS = Path(aot.__file__).resolve().parent

# Runs with the module installed, as a bot would (the kernel modules not imported yet).
AHEAD = """
import sys
from arena.bots import aot, jit_cache
from arena.games.kamisado import jit
module = aot.load(jit_cache.IN_TREE)
assert module is not None, "no module built"
jit.install(module)
"""

SEARCHES = """
import json, random, time
from arena.bots.compiled_search import CompiledSearcher
from arena.games.kamisado.position import PLAY, Position
from arena.games.kamisado.round_solver import Solver
rng, out = random.Random(7), []
for plies in (2, 5, 9, 14):
    pos = Position.start(kind=1)
    for _ in range(plies):
        if pos.phase != PLAY:
            break
        pos.make(rng.choice(pos.legal_moves()))
    searcher = CompiledSearcher(tt_bits=16)
    move, value, _ = searcher.think(pos, time.monotonic() + 3600, max_depth=6)
    proof = Solver(16).solve(pos.at, pos.square_of, pos.rank, pos.side, pos.required,
                             max_nodes=20000)
    proof = [proof.result, proof.distance, proof.move, proof.nodes]
    out.append([move, value, searcher.nodes, proof])
print(json.dumps(out))
"""


def _built() -> None:
    """The module is built where the preparation found a C compiler and the headers."""
    if not aot.module_path(jit_cache.IN_TREE).is_file():
        needs.missing("the ahead-of-time module was not built (no C compiler or Python headers?)")


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_kernel_python_code_calls_is_in_the_module() -> None:
    """A kernel called from Python but left out of ``ENTRY_POINTS`` would raise in a
    game, on the first root with a win on the board: every call of a kernel
    outside the kernels is found in the source and must be exported."""
    from arena.bots import compiled_search
    from arena.bots import kamisado_jit as K

    def kernel(value: object) -> bool:
        return hasattr(value, "py_func")

    called: set[str] = set()
    tree = ast.parse(Path(compiled_search.__file__).read_text())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "K"
            and kernel(getattr(K, node.func.attr, None))
        ):
            called.add(symbol(getattr(K, node.func.attr).py_func))
    for module in (solver, round_solver):  # the kernels' module and the solver's Python side
        tree = ast.parse(Path(module.__file__).read_text())
        for top in tree.body:  # classes and plain functions, not the kernels themselves
            if isinstance(top, ast.FunctionDef) and kernel(getattr(module, top.name, None)):
                continue
            for node in ast.walk(top):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    value = getattr(module, node.func.id, None)
                    if kernel(value):
                        called.add(symbol(value.py_func))  # type: ignore[union-attr]
    exported = {
        f"{module.rpartition('.')[2]}_{name}"
        for module, names in aot.ENTRY_POINTS.items()
        for name in names
    }
    assert "kamisado_jit_win_now_value" in called and "solver_solve_kernel" in called
    assert called <= exported, called - exported


def test_a_bot_takes_the_module_and_never_loads_numba() -> None:
    """Loading numba and its cache was about a second of every bot's start."""
    _built()
    bot = BOTS / "alphabeta_bot.py"
    code = (
        "import runpy, sys\n"
        f"sys.argv = [{str(bot)!r}, '--warm']\n"
        f"runpy.run_path({str(bot)!r}, run_name='__main__')\n"
        "from arena.games.kamisado import jit\n"
        "print(jit.installed(), 'numba' in sys.modules)"
    )
    assert _python(code).split() == ["True", "False"]


def test_in_process_users_keep_the_jit() -> None:
    """The tests, the analysis and the preparation call the inner kernels too."""
    code = (
        "import sys\nfrom arena.bots import compiled_search\n"
        "from arena.games.kamisado import jit\n"
        "print(jit.installed(), 'numba' in sys.modules)"
    )
    assert _python(code).split() == ["False", "True"]


def test_the_module_searches_and_proves_exactly_as_the_jit() -> None:
    """Same moves, values and node counts at a fixed depth, same proofs."""
    _built()
    jit = json.loads(_python(SEARCHES))
    ahead = json.loads(_python(AHEAD + SEARCHES))
    assert ahead == jit
    assert len(jit) == 4 and all(nodes > 0 for _, _, nodes, _ in jit)


def test_a_search_in_the_module_stops_at_its_deadline() -> None:
    """The watchdog thread raises the stop flag while a kernel runs: the module's
    functions must let go of the GIL as the JIT's ``nogil`` kernels do: a module
    built without that proved the opening round to its end, 18 s, deadline or not."""
    _built()
    code = AHEAD + (
        "import time\nfrom arena.games.kamisado.position import Position\n"
        "from arena.games.kamisado.round_solver import Solver\n"
        "pos = Position.start(kind=1)\n"
        "start = time.monotonic()\n"
        "value = Solver(20).solve(pos.at, pos.square_of, pos.rank, pos.side, pos.required,"
        " deadline=start + 0.3)\n"
        "print(time.monotonic() - start, value.result)"
    )
    seconds, result = _python(code).split()
    assert float(seconds) < 3.0, seconds  # 0.3 s asked
    assert result == str(solver.UNKNOWN)


def test_only_the_module_built_for_these_sources_and_this_machine_is_loaded(
    tmp_path: Path,
) -> None:
    _built()
    built = aot.module_path(jit_cache.IN_TREE)
    assert aot.load(tmp_path) is None
    stale = tmp_path / f"{aot.PREFIX}{'0' * 16}{aot.SUFFIX}"
    shutil.copyfile(built, stale)
    assert aot.load(tmp_path) is None  # another digest: other sources, CPU or numba
    shutil.copyfile(built, tmp_path / built.name)
    module = aot.load(tmp_path)
    assert module is not None and hasattr(module, "kamisado_jit_root_search")


def test_a_machine_without_a_compiler_or_headers_is_said_before_compiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pycc finds a missing compiler only at its last step, after the LLVM work:
    the preparation asks first, and keeps the JIT cache."""
    assert aot.missing_tools() is None  # this machine builds it (CI installs both)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    assert aot.missing_tools() == "no C compiler (cc or gcc) on PATH"
    assert aot.tool_paths()[:2] == [tmp_path / "cc", tmp_path / "gcc"]
    monkeypatch.setenv("CC", "/opt/cross/bin/clang")
    assert aot.tool_paths()[0] == Path("/opt/cross/bin/clang")
    monkeypatch.undo()
    monkeypatch.setattr(aot.sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    assert aot.missing_tools() == f"no Python headers (Python.h) in {tmp_path}"
    assert aot.tool_paths()[-1] == tmp_path / "Python.h"
