"""The search kernels compiled ahead of time: one extension module a bot loads without numba.

A bot that loads numba spends about a second of CPU before its first move
(numba's import, its type registries, the cached machine code linked in):
at every start, in every pair of games, and on the way to a tournament's
first stored game. numba's ``pycc`` compiles the same kernels into an
ordinary extension module instead, which loads in a millisecond
(:mod:`arena.games.kamisado.jit` hands its functions to the kernel modules).

The preparation (``prepare.py``) builds it once per machine, after it has
run every kernel under numba's JIT (``compiled_search.warm_up``): that run
gives each entry point its exact signature, which ``pycc`` needs, and leaves
the JIT cache as the fallback for a bot that finds no usable module. The
module's name carries a digest of everything its machine code depends on
(both kernel sources, the board tables, this file, numba's and llvmlite's
versions, the interpreter, this machine's CPU), so a bot only loads the
module built for exactly what it runs.

Two settings differ from ``pycc``'s defaults, each for a reason:

* machine code for this machine's CPU, as the JIT makes it (``pycc``'s
  generic x86-64 has no ``popcnt``, which move generation counts with);
* the exported functions release the GIL, as the JIT's ``nogil`` kernels do:
  the watchdog thread that stops a search at its deadline must run while
  the search does. ``pycc`` has no option for that, so the build sets
  numba's ``release_gil`` flag on the flags ``pycc`` compiles with.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from arena.games.kamisado.jit import symbol

_HERE = Path(__file__).resolve().parent
ENTRY_POINTS = {
    "arena.games.kamisado.solver": ("gen_moves", "occupancy", "winning_move", "solve_kernel"),
    "arena.bots.kamisado_jit": (
        "order_moves",
        "root_search",
        "pv_from_table",
        "win_now_value",
        "mcts_grow",
        "mcts_root",
    ),
}
"""Every kernel Python code calls (``compiled_search``, the solver's ``Solver``);
the kernels only kernels call are compiled into them. ``tests/test_aot.py``
checks this list against the calls in those files."""

PREFIX = "kamisado_kernels_"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def _spec_origin(name: str) -> Path:
    spec = importlib.util.find_spec(name)  # found, not imported
    if spec is None or spec.origin is None:
        raise ImportError(f"no module {name}")
    return Path(spec.origin).resolve()


def _cpu() -> bytes:
    """This machine's CPU as the kernels see it: its model and feature flags."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return b""
    keep = [
        line
        for line in text.splitlines()
        if line.startswith(("model name", "flags", "Features", "CPU part"))
    ]
    return "\n".join(sorted(set(keep))).encode()


def sources() -> list[Path]:
    """The files the module's machine code depends on (the preparation's stamp
    names them too, so that a change to one starts the preparation again)."""
    files = [
        _HERE / "kamisado_jit.py",
        _spec_origin("arena.games.kamisado.solver"),
        _spec_origin("arena.games.kamisado.board"),
        Path(__file__).resolve(),
    ]
    for package in ("numba", "llvmlite"):
        files.append(_spec_origin(package).parent / "_version.py")
    return files


def digest() -> str:
    """What the module's machine code depends on, in 16 hex digits: :func:`sources`,
    the interpreter and this machine's CPU."""
    h = hashlib.sha256()
    for source in sources():
        h.update(source.read_bytes())
    h.update(sys.version.encode())
    h.update(SUFFIX.encode())
    h.update(_cpu())
    return h.hexdigest()[:16]


def _compilers() -> list[str]:
    """The C compilers ``pycc`` may use: ``$CC``, else ``cc``, and ``gcc``."""
    return list(dict.fromkeys((os.environ.get("CC", "cc"), "cc", "gcc")))


def _headers() -> Path | None:
    include = sysconfig.get_paths().get("include")
    return Path(include) / "Python.h" if include else None


def missing_tools() -> str | None:
    """Why the module cannot be built here (no C compiler, no Python headers), or
    ``None``: said before compiling, since ``pycc`` finds out only at its last step."""
    if not any(shutil.which(cc) for cc in _compilers()):
        return "no C compiler (cc or gcc) on PATH"
    headers = _headers()
    if headers is None or not headers.is_file():
        return f"no Python headers (Python.h) in {sysconfig.get_paths().get('include')}"
    return None


def tool_paths() -> list[Path]:
    """Where the compiler and the headers :func:`missing_tools` looks for would
    appear: a preparation that found them missing names these as absent, so that
    installing them (``apt-get install gcc python3-dev``) prepares again."""
    names = _compilers()
    paths = [Path(n) for n in names if os.path.isabs(n)]
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        paths += [Path(folder, n) for n in names if folder and os.sep not in n]
    headers = _headers()
    return [*paths, headers] if headers is not None else paths


def module_path(folder: Path) -> Path:
    return folder / f"{PREFIX}{digest()}{SUFFIX}"


def load(folder: Path) -> ModuleType | None:
    """The module built for this machine and these sources, if ``folder`` holds one."""
    try:
        path = module_path(folder)
    except (OSError, ImportError):
        return None
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(path.name.split(".")[0], path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except ImportError:
        return None
    return module


@contextlib.contextmanager
def _gil_released() -> Iterator[None]:
    """Compile ``pycc``'s exports with numba's ``release_gil`` flag set."""
    import numba.pycc.compiler as pycc_compiler

    plain = pycc_compiler.Flags

    class Flags(plain):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = Flags
    try:
        yield
    finally:
        pycc_compiler.Flags = plain


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """The compiler's chatter goes to stderr: stdout is the preparation's report."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def build(folder: Path) -> Path:
    """Compile the entry points into ``folder`` (atomically) and drop older builds.

    The kernels must have run under the JIT first (one signature each)."""
    from llvmlite import binding
    from numba.pycc import CC

    target = module_path(folder)
    name = target.name.split(".")[0]
    cc = CC(name)
    cc.target_cpu = binding.get_host_cpu_name()
    cc.verbose = False
    for module_name, names in ENTRY_POINTS.items():
        module = importlib.import_module(module_name)
        for kernel_name in names:
            kernel = getattr(module, kernel_name)
            signatures = kernel.nopython_signatures
            if len(signatures) != 1:
                raise RuntimeError(
                    f"{module_name}.{kernel_name} has {len(signatures)} compiled signatures "
                    "after the warm-up (the module needs exactly one)"
                )
            cc.export(symbol(kernel.py_func), signatures[0])(kernel.py_func)
    scratch = Path(tempfile.mkdtemp(prefix=".aot-", dir=folder))
    try:
        cc.output_dir = str(scratch)
        with _gil_released(), _stdout_to_stderr():
            cc.compile()
        os.replace(scratch / cc.output_file, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for old in folder.glob(f"{PREFIX}*{SUFFIX}"):
        if old != target:
            old.unlink(missing_ok=True)
    return target
