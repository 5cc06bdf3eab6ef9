"""Where the compiled search's machine code is cached, so that bots start in a second.

numba keeps compiled functions in ``bots/__pycache__`` when it can write
there (a checkout, an editable install). A bot in the arena's sandbox sees
that folder read-only, and numba would then compile again in every game
(seconds of start-up, twice a game). So when the folder is read-only, its
cache files are copied to a private writable folder (the sandbox's own
``/tmp``) and numba is pointed there: a cache built outside the sandbox
(``arena`` builds it before the first game with ``bots/prepare.py``) is used
inside, and a stale or missing one is rebuilt privately.

Two files hold kernels: the bots' search (``kamisado_jit.py``) and the rules
package's move generation and round solver (``arena/games/kamisado/solver.py``),
which the search calls. Both caches are copied. numba checks a cached
function against the source of its own file only, and the search's machine
code holds the solver kernels it calls, so a cache of ``kamisado_jit.py``
built from another ``solver.py`` is dropped (:func:`drop_stale`); ``solver.py``
itself pins the board tables it freezes.

This module must run before :mod:`arena.bots.kamisado_jit` is imported: numba
picks a function's cache folder when it is decorated.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.bots import aot

from arena.games.kamisado import jit

_HERE = Path(__file__).resolve().parent
SOURCE = _HERE / "kamisado_jit.py"
IN_TREE = _HERE / "__pycache__"
TABLES = Path(str(importlib.util.find_spec("arena.games.kamisado.solver").origin)).resolve()
"""The other source compiled into the search's machine code (found, not
imported: importing it would load its kernels before numba's cache is placed)."""
SOURCES = (SOURCE, TABLES)
"""Every file whose kernels a bot loads."""
PRIVATE = "kamisado-arena-numba"
_prepared = False
_in_tree = False
"""Whether numba caches into :data:`IN_TREE` (else a private copy or its own folder)."""


def writable(folder: Path) -> bool:
    """numba's own test: the folder exists (or can be made) and takes a file."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


@contextmanager
def without_blas() -> Iterator[None]:
    """Keep numba from importing scipy while it loads the kernels.

    The kernels use no BLAS, but the first function numba loads in a process
    makes it look for one through ``scipy.linalg``: a quarter of a second of
    every bot's start. The block is lifted afterwards, so the process can
    still import scipy itself.
    """
    name = "scipy.linalg.cython_blas"
    blocked = "scipy.linalg" not in sys.modules and name not in sys.modules
    if blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if blocked and sys.modules.get(name, 0) is None:
            del sys.modules[name]


def prepare() -> None:
    """Install the kernels compiled ahead of time in a bot process that finds them
    (:mod:`arena.bots.aot`); else point numba at a writable cache holding whatever
    the tree's cache has."""
    global _prepared, _in_tree
    if _prepared:
        return
    _prepared = True
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    if started_as_a_bot() and (module := aot.load(IN_TREE)) is not None:
        jit.install(module)
        return
    if all(writable(source.parent / "__pycache__") for source in SOURCES):
        drop_stale(IN_TREE)
        _in_tree = True
        return
    import numba
    from numba.core.caching import _CacheLocator

    root = Path(tempfile.gettempdir()) / PRIVATE
    try:
        for source in SOURCES:
            target = root / _CacheLocator.get_suitable_cache_subpath(str(source))
            target.mkdir(parents=True, exist_ok=True)
            tree = source.parent / "__pycache__"
            if source == SOURCE:
                drop_stale(target)
                if _stamp(tree) != tables_digest():
                    continue  # the tree's search cache was built from another solver.py
            for f in _cache_files(tree, source):
                if not (target / f.name).exists():
                    shutil.copyfile(f, target / f.name)
    except OSError:
        return  # numba falls back to its per-user folder, or compiles uncached
    numba.config.CACHE_DIR = str(root)


def started_as_a_bot() -> bool:
    """Whether this process runs one of the built-in bots' scripts.

    Only a bot takes the module compiled ahead of time: it exports the kernels
    Python code calls, while the tests (in-process) call the inner kernels too,
    and the preparation needs numba's JIT to build the module.
    """
    main = sys.modules.get("__main__")
    file = getattr(main, "__file__", None)
    if not file:
        return False
    path = Path(file).resolve()
    return path.parent == _HERE and path.name.endswith("_bot.py")


def tables_digest() -> str:
    return hashlib.sha256(TABLES.read_bytes()).hexdigest()


def _stamp(folder: Path) -> str | None:
    try:
        return (folder / f"{SOURCE.stem}.tables").read_text().strip()
    except OSError:
        return None


def _cache_files(folder: Path, source: Path = SOURCE) -> list[Path]:
    return list(folder.glob(f"{source.stem}.*.nb[ic]"))


def drop_stale(folder: Path) -> None:
    """Delete the search's cache in ``folder`` unless it was built with this
    ``solver.py``, and record the one it will be built with."""
    digest = tables_digest()
    if _stamp(folder) == digest:
        return
    for f in _cache_files(folder):
        f.unlink(missing_ok=True)
    (folder / f"{SOURCE.stem}.tables").write_text(digest + "\n")


def built_from() -> list[Path] | None:
    """What the tree's cache was built from (the kernels' sources: the search's and
    the rules package's solver, which pins the board tables; numba and llvmlite;
    the interpreter) and the cache files of both; ``None`` when this process does
    not cache into the tree.

    A change to any of them can make numba compile again, so the arena starts
    the preparation again when one changed (``arena/plan/prepare.py``).
    """
    if not _in_tree:
        return None
    import llvmlite
    import numba

    versions = [Path(m.__file__).parent / "_version.py" for m in (numba, llvmlite)]
    versions = [v for v in versions if v.exists()]
    stamp = IN_TREE / f"{SOURCE.stem}.tables"
    sources = [SOURCE, TABLES, *versions, Path(sys.executable)]
    solver_cache = _cache_files(TABLES.parent / "__pycache__", TABLES)
    return [*sources, stamp, *sorted(_cache_files(IN_TREE)), *sorted(solver_cache)]
