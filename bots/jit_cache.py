"""Where the compiled search's machine code is cached, so that bots start in a second.

numba keeps compiled functions in ``bots/__pycache__`` when it can write
there (a checkout, an editable install). A bot in the arena's sandbox sees
that folder read-only, and numba would then compile again in every game
(seconds of start-up, twice a game). So when the folder is read-only, its
cache files are copied to a private writable folder (the sandbox's own
``/tmp``) and numba is pointed there: a cache built outside the sandbox
(``arena`` builds it before the first game with ``bots/prepare.py``) is used
inside, and a stale or missing one is rebuilt privately.

numba checks a cached function against the source of its own file only;
the kernels also freeze the rules core's board tables (``board.py``) into
their machine code, so a cache built from another ``board.py`` is dropped
(:func:`drop_stale`).

This module must run before :mod:`arena.bots.kamisado_jit` is imported: numba
picks a function's cache folder when it is decorated.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.games.kamisado import board

_HERE = Path(__file__).resolve().parent
SOURCE = _HERE / "kamisado_jit.py"
IN_TREE = _HERE / "__pycache__"
TABLES = Path(board.__file__)
"""The other source frozen into the compiled code."""
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
    """Point numba at a writable cache holding whatever the tree's cache has."""
    global _prepared, _in_tree
    if _prepared:
        return
    _prepared = True
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    if writable(IN_TREE):
        drop_stale(IN_TREE)
        _in_tree = True
        return
    import numba
    from numba.core.caching import _CacheLocator

    root = Path(tempfile.gettempdir()) / PRIVATE
    target = root / _CacheLocator.get_suitable_cache_subpath(str(SOURCE))
    try:
        target.mkdir(parents=True, exist_ok=True)
        drop_stale(target)
        if _stamp(IN_TREE) == tables_digest():
            for f in _cache_files(IN_TREE):
                if not (target / f.name).exists():
                    shutil.copyfile(f, target / f.name)
    except OSError:
        return  # numba falls back to its per-user folder, or compiles uncached
    numba.config.CACHE_DIR = str(root)


def tables_digest() -> str:
    return hashlib.sha256(TABLES.read_bytes()).hexdigest()


def _stamp(folder: Path) -> str | None:
    try:
        return (folder / f"{SOURCE.stem}.tables").read_text().strip()
    except OSError:
        return None


def _cache_files(folder: Path) -> list[Path]:
    return list(folder.glob(f"{SOURCE.stem}.*.nb[ic]"))


def drop_stale(folder: Path) -> None:
    """Delete the kernels' cache in ``folder`` unless it was built from this
    ``board.py``, and record the one it will be built from."""
    digest = tables_digest()
    if _stamp(folder) == digest:
        return
    for f in _cache_files(folder):
        f.unlink(missing_ok=True)
    (folder / f"{SOURCE.stem}.tables").write_text(digest + "\n")


def built_from() -> list[Path] | None:
    """What the tree's cache was built from (the kernels' source, the board tables,
    numba and llvmlite, the interpreter) and the cache files themselves; ``None``
    when this process does not cache into the tree.

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
    return [*sources, stamp, *sorted(_cache_files(IN_TREE))]
