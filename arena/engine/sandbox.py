"""Bubblewrap sandbox for bot processes: a bot touches nothing but its own game.

Every bot process is started as ``bwrap ... -- COMMAND`` (the tool Flatpak uses,
package ``bubblewrap``), so that a hostile entrant cannot reach outside its game:

* **no network**: its own network namespace (only a loopback of its own), unless
  the tournament grants ``sandbox_net``;
* **read-only file system**: ``/`` is bound read-only so interpreters (``python3``,
  ``node``, a virtualenv) work unchanged; ``/home``, ``/root``, ``/run``,
  ``/var/tmp``, ``/mnt``, ``/media`` and the results folder are covered by empty
  read-only tmpfs, because that is where users keep secrets, sockets (``/run``)
  and where the arena keeps its database; ``/tmp`` is a fresh, size-bounded tmpfs
  per process and ``HOME`` points at it: the bot's only writable place (plus
  ``sandbox_rw``). The bot's working directory, its executable's folder, any
  file named on its command line and the arena's own Python prefix are bound
  back read-only where they lie under a covered folder;
* **own PID namespace** with bwrap as its init and ``--die-with-parent``: when the
  bot's game ends or the arena dies, every descendant dies too (``setsid``,
  double forks and SIGTERM-proof helpers included), and ``/proc`` shows only the
  bot's own processes (so the arena's ``/proc/PID/environ`` is out of reach; the
  init's environment is the scrubbed one the bot gets anyway);
* **no capabilities** (``--cap-drop ALL``): even an arena running as root gives
  its bots none, so they cannot unmount what covers the secrets.

The rlimits of :class:`arena.engine.bot.ResourceLimits` are set on bwrap before it
execs, so they hold for everything inside. Start-up costs a few milliseconds per
bot process (``bench/overhead.py`` measures it).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from arena.match.record import SandboxRecord

Mode = Literal["auto", "bwrap", "none"]
MODES: tuple[str, ...] = ("auto", "bwrap", "none")
MB = 1 << 20

INSTALL_HINT = "install it with: apt-get install bubblewrap (Fedora: dnf install bubblewrap)"
COVERED = ("/home", "/root", "/run", "/var/tmp", "/mnt", "/media")
"""Folders hidden under an empty read-only tmpfs (``/tmp`` becomes the scratch)."""
SCRATCH = "/tmp"
"""The private writable folder inside the sandbox, also the bot's ``HOME``."""


class SandboxError(ValueError):
    """The sandbox was demanded (``--sandbox bwrap``) but cannot run; one line."""


class SandboxSettings(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[sandbox]`` in a tournament file (and ``--sandbox`` on the command line).

    ``mode``: ``auto`` uses bwrap when it works here, else says so once and runs
    bots unconfined; ``bwrap`` insists; ``none`` opts out. ``scratch_mb`` bounds
    each bot's private ``/tmp`` (and ``/dev/shm``). ``hide`` adds folders the bots
    must not see (the results folder is always hidden).
    """

    mode: Mode = "auto"
    scratch_mb: Annotated[int, Meta(ge=1)] = 64
    hide: list[str] = []


class Sandbox(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How one bot process is confined: the tournament's settings plus the bot's own grants."""

    mode: Mode = "auto"
    ro: list[str] = []
    """Extra paths visible read-only (``sandbox_ro``)."""
    rw: list[str] = []
    """Extra paths visible and writable (``sandbox_rw``)."""
    net: bool = False
    """Share the arena's network (``sandbox_net``)."""
    hide: list[str] = []
    """Folders covered by an empty tmpfs: the results folder and ``[sandbox] hide``."""
    scratch_bytes: int = 64 * MB

    def record(self, mode: str) -> SandboxRecord:
        """What the game record keeps: the mode in force and the bot's grants."""
        return SandboxRecord(mode=mode, ro=list(self.ro), rw=list(self.rw), net=self.net)


# --------------------------------------------------------------------------- availability


@functools.cache
def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def probe() -> str | None:
    """Why bwrap cannot confine a process here, or ``None`` if it can (checked once).

    Runs a real sandboxed ``true`` with the same options bots get, since bwrap
    may be installed yet refused user namespaces (some containers, hardened
    kernels without setuid bwrap).
    """
    exe = bwrap_path()
    if exe is None:
        return "bwrap is not installed"
    true = shutil.which("true") or "/bin/true"
    argv = wrap(Sandbox(mode="bwrap"), [true], "/")
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot start: {exc}"
    if done.returncode != 0:
        words = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bwrap fails here: {words[-1] if words else f'exit code {done.returncode}'}"
    return None


_warned: list[str] = []


def _warn_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def resolve(mode: str, warn: Callable[[str], None] = _warn_stderr) -> Literal["bwrap", "none"]:
    """The mode in force for ``mode``: ``auto`` becomes ``bwrap`` or ``none``.

    ``auto`` without a working bwrap warns once per process, in one line;
    ``bwrap`` without one raises :class:`SandboxError`.
    """
    if mode == "none":
        return "none"
    reason = probe()
    if reason is None:
        return "bwrap"
    if mode == "bwrap":
        raise SandboxError(f"sandbox 'bwrap' unavailable: {reason}; {INSTALL_HINT}")
    if not _warned:
        _warned.append(reason)
        warn(f"arena: warning: {reason}: bots run unconfined (no sandbox); {INSTALL_HINT}")
    return "none"


# --------------------------------------------------------------------------- command line


def _covered_roots() -> list[str]:
    return [p for p in (SCRATCH, *COVERED) if os.path.isdir(p) and not os.path.islink(p)]


_ROOTS = functools.cache(_covered_roots)


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _too_broad(path: str) -> bool:
    """A whole home folder (or a covered root) is never bound back in for a program."""
    return path in ("/", "/root", SCRATCH) or os.path.dirname(path) in ("/", "/home")


def _shown(command: Sequence[str], cwd: str, path_env: str | None) -> list[str]:
    """Paths the bot needs to see: its folder, its program, files on its command line.

    A file is shown with its folder (a script imports its siblings), the
    executable also with its folder's parent (``PREFIX`` for ``PREFIX/bin``: a
    virtualenv, or ``~/.pyenv`` for pyenv's shims) unless that is a whole home
    folder, and the arena's own interpreter prefix and source tree (built-in
    bots import ``arena.sdk``).
    """
    wanted = [cwd, sys.prefix, sys.base_prefix, str(Path(__file__).resolve().parents[2])]
    exe = command[0] if "/" in command[0] else shutil.which(command[0], path=path_env)
    words = [exe] if exe else []
    words += [w for w in command[1:] if w.startswith("/")]
    for word in words:
        path = os.path.join(cwd, word)
        for p in dict.fromkeys((os.path.abspath(path), os.path.realpath(path))):
            if not os.path.exists(p):
                continue
            folder = os.path.dirname(p) if os.path.isfile(p) else p
            wanted += [p, folder]
            if word == exe and not _too_broad(os.path.dirname(folder)):
                wanted.append(os.path.dirname(folder))  # PREFIX of PREFIX/bin, ~/.pyenv of shims
    return list(dict.fromkeys(os.path.realpath(p) for p in wanted))


SHELL = "/bin/sh"
_OUTER = 'exec 3<&0 4>&1 0</dev/null 1>/dev/null; exec "$@"'
_INNER = 'exec 0<&3 1>&4 3<&- 4>&-; exec "$@"'
"""The bot's stdin and stdout pipes travel through bwrap as fds 3 and 4, which
bwrap's own processes close, and are put back at 0 and 1 just before the bot
starts. Otherwise bwrap would keep both open for the bot's whole life, and a
bot that closes its stdout or stdin would not be seen doing so."""


def missing_program(command: Sequence[str], cwd: str, path_env: str | None) -> str | None:
    """Why ``command[0]`` cannot be executed, as ``exec`` would say, or ``None``.

    Checked before starting bwrap: inside, a missing program is only bwrap's
    exit code 1, which would pass for the bot's own crash.
    """
    word = command[0] if command else ""
    if "/" in word:
        path: str | None = os.path.join(cwd, word)
    else:
        path = shutil.which(word, path=path_env) if word else None
    if path is None or not os.path.exists(path):
        return f"[Errno 2] No such file or directory: {word!r}"
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        return f"[Errno 13] Permission denied: {word!r}"
    return None


def wrap(
    sandbox: Sandbox, command: Sequence[str], cwd: str, path_env: str | None = None
) -> list[str]:
    """``bwrap OPTIONS -- COMMAND``: ``command`` run in ``cwd`` inside ``sandbox``."""
    exe = bwrap_path() or "bwrap"
    roots = _ROOTS()
    covered = [r for r in roots if r != SCRATCH]
    hidden = [os.path.realpath(h) for h in sandbox.hide if os.path.isdir(h)]
    args = [exe, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
    if sandbox.net:
        args.append("--share-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    size = str(sandbox.scratch_bytes)
    args += ["--size", size, "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    for root in covered:
        args += ["--tmpfs", root]
    args += ["--size", size, "--tmpfs", SCRATCH]
    for path in _shown(command, cwd, path_env):
        # A covered root, or a whole home folder, stays covered: a bot started
        # from ~ sees an empty folder there rather than ~/.ssh.
        if _under(path, roots) and not _too_broad(path) and not _under(path, hidden):
            args += ["--ro-bind", path, path]
    grants = [("--ro-bind", p) for p in sandbox.ro] + [("--bind", p) for p in sandbox.rw]
    inside = [(how, p) for how, p in grants if _under(os.path.realpath(p), hidden)]
    for how, path in [g for g in grants if g not in inside]:
        args += [how, path, path]
    for path in hidden:  # after the grants around them: those do not show them again
        args += ["--tmpfs", path]
    for how, path in inside:  # ...but a grant inside one is still granted
        args += [how, path, path]
    for root in [*covered, *hidden]:
        args += ["--remount-ro", root]
    args += ["--chdir", cwd, "--", SHELL, "-c", _INNER, "sh", *command]
    return [SHELL, "-c", _OUTER, "sh", *args]


def exit_status(returncode: int) -> int:
    """bwrap reports a bot killed by signal N as exit code 128 + N; give back ``-N``."""
    if 128 < returncode < 128 + 65:
        return 128 - returncode
    return returncode


__all__ = [
    "INSTALL_HINT",
    "MODES",
    "Mode",
    "Sandbox",
    "SandboxError",
    "SandboxSettings",
    "exit_status",
    "probe",
    "resolve",
    "wrap",
]
