"""Writing a file into a results folder the arena may not have written.

A results folder can come from elsewhere (handed over to be reported, rated or
analysed), so every name in it is the sender's: ``report.md.tmp`` may be a
symbolic link to ``~/.bashrc``, ``analysis.sqlite`` one to any path where SQLite
would then create files as the operator. Nothing the arena writes there follows
a link: a file is created with ``O_CREAT|O_EXCL|O_NOFOLLOW`` beside its final
name and renamed over it (a rename replaces a name, never what it points to),
and a symbolic link where one of the arena's files should be is refused in one
line (:class:`UnsafePathError`) so the operator sees that the folder was tampered
with rather than a silently different result.

A regular file left at the temporary name (an arena killed while writing) is
removed and the write tried once more; anything else there is refused too.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal, TextIO, overload

from arena.storage.store import StoreError

__all__ = [
    "NOFOLLOW_CREATE",
    "UnsafePathError",
    "atomic_file",
    "open_new",
    "read_own",
    "refuse_link",
    "write_atomic",
]

NOFOLLOW_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
"""Create a new file, never through a link (``O_EXCL`` refuses any existing name,
a dangling link included)."""


class UnsafePathError(StoreError):
    """A name where the arena writes is a symbolic link or not a regular file."""


def _link_text(path: Path) -> str:
    try:
        return f" to {os.readlink(path)}"
    except OSError:
        return ""


def refuse_link(path: str | os.PathLike[str], *, folder: bool = False) -> None:
    """Raise :class:`UnsafePathError` if ``path`` is a symbolic link, or something
    other than a regular file (a folder with ``folder``); nothing if it is absent."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UnsafePathError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(
            f"{path} is a symbolic link{_link_text(path)}; the arena writes no file through "
            "one (a results folder from elsewhere is data): remove it and run again"
        )
    wanted = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)
    if not wanted:
        raise UnsafePathError(
            f"{path} is not a {'folder' if folder else 'regular file'}; remove it and run again"
        )


def open_new(path: str | os.PathLike[str], mode: int = 0o644) -> int:
    """A new file at ``path`` (an fd), created without following a link; a stale
    regular file there is replaced once, anything else refused."""
    path = Path(path)
    for attempt in (0, 1):
        try:
            return os.open(path, NOFOLLOW_CREATE, mode)
        except FileExistsError:
            refuse_link(path)
            if attempt:
                break
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # left by a writer that was killed
        except OSError as exc:
            raise UnsafePathError(f"cannot write {path}: {exc.strerror or exc}") from None
    raise UnsafePathError(f"cannot write {path}: another process keeps creating it")


@overload
def atomic_file(
    path: str | os.PathLike[str], *, binary: Literal[False] = False, unique: bool = False
) -> contextlib.AbstractContextManager[TextIO]: ...


@overload
def atomic_file(
    path: str | os.PathLike[str], *, binary: Literal[True], unique: bool = False
) -> contextlib.AbstractContextManager[BinaryIO]: ...


@contextlib.contextmanager
def atomic_file(
    path: str | os.PathLike[str], *, binary: bool = False, unique: bool = False
) -> Iterator[Any]:  # the overloads above say which file: text, or binary
    """A file to write whose content replaces ``path`` when the block ends well
    (and is removed when it raises). It is written at ``<name>.tmp``, or with
    ``unique`` at a name of its own (writers in several threads or processes at
    once: caches). ``path`` itself must not be a link."""
    path = Path(path)
    refuse_link(path)
    if unique:
        # mkstemp creates with O_EXCL (no link followed), readable by its owner only
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        tmp = Path(name)
    else:
        tmp = path.with_name(path.name + ".tmp")
        fd = open_new(tmp)
    try:
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, unique: bool = False) -> Path:
    """``data`` as the whole content of ``path``, through :func:`atomic_file`."""
    path = Path(path)
    if isinstance(data, bytes):
        with atomic_file(path, binary=True, unique=unique) as f:
            f.write(data)
    else:
        with atomic_file(path, unique=unique) as f:
            f.write(data)
    return path


def read_own(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes of ``path`` if only this user can have written them (a cache): a
    regular file, reached without a link, owned by this user and writable by no
    group or other; ``None`` for anything else (absent, planted, shared), so the
    caller rebuilds what it would have read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
            return None
        try:
            return f.read()
        except OSError:
            return None
