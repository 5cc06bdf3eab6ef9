"""A bot bounded as a whole: one cgroup per bot process, where the machine gives one.

``RLIMIT_AS`` bounds each process on its own, so a bot holding memory in
children, or in a memfd (whose pages count against no process's address
space), passes it; ``RLIMIT_NPROC`` is counted per *user*. A cgroup counts
everything the bot starts together: ``memory_mb`` becomes the group's memory
limit (``memory.max``, or ``memory.limit_in_bytes`` and the same for memory
plus swap on cgroup v1) and ``processes`` its ``pids.max``.

The arena makes a child of its own cgroup per bot process (``arena-PID-N``),
moves the bot's first process in from the child side of the fork (before bwrap
starts, so nothing escapes it) and removes it when the bot is gone. That needs
a writable cgroup hierarchy: a root arena in most containers and CI runners
(v1, or v2 with the controllers delegated), or a v2 subtree systemd delegated
to the arena's user. Where there is none, :func:`available` says why, and the
bot is bounded per process and per user instead (``bound = "rlimit"`` in its
game record).
"""

from __future__ import annotations

import functools
import itertools
import os
import signal
from contextlib import suppress
from dataclasses import dataclass

_counter = itertools.count()

DEFAULT_PROCESSES = 256
"""A bot's ``pids.max`` when ``[limits] processes`` is unset: a group without one
let a single bot take every PID of the machine (32,768 threads fit in 1.4 GB), so
no other bot could start. Threads count as processes here."""


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def remove_folders(folders: list[str]) -> list[str]:
    """Remove each group folder (an absent one counts as removed); a folder that still
    holds processes has them killed and stays. Returns the folders left."""
    left = []
    for folder in folders:
        try:
            os.rmdir(folder)
        except FileNotFoundError:
            pass
        except OSError:
            _kill_members(folder)
            left.append(folder)
    return left


@dataclass(frozen=True)
class _Hierarchy:
    folder: str
    """The arena's own cgroup in this hierarchy (children are made here)."""
    version: int
    controller: str
    """``memory`` or ``pids`` on v1; ``memory+pids`` on v2."""


def _own_path(controller: str | None) -> str | None:
    """The arena's cgroup path for a v1 ``controller`` (``None``: the v2 one)."""
    try:
        lines = _read("/proc/self/cgroup").splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        names = controllers.split(",") if controllers else []
        if (controller is None and not names) or (controller in names):
            return path
    return None


def _mounts() -> list[tuple[str, str, str, list[str]]]:
    """``(mount root, mount point, fs type, super options)`` of every cgroup mount."""
    out: list[tuple[str, str, str, list[str]]] = []
    try:
        lines = _read("/proc/self/mountinfo").splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            out.append((fields[3], fields[4], tail[0], tail[2].split(",")))
    return out


def _folder(mount_root: str, point: str, path: str) -> str | None:
    rel = os.path.relpath(path, mount_root) if path.startswith(mount_root) else None
    if rel is None:
        return None
    return os.path.normpath(os.path.join(point, rel))


def _probe(folders: list[str]) -> bool:
    name = f"arena-probe-{os.getpid()}"
    made = []
    try:
        for folder in folders:
            os.mkdir(os.path.join(folder, name))
            made.append(os.path.join(folder, name))
        return True
    except OSError:
        return False
    finally:
        for path in made:
            with suppress(OSError):
                os.rmdir(path)


@functools.cache
def hierarchies() -> tuple[_Hierarchy, ...] | str:
    """Where per-bot cgroups are made, or why they cannot be (checked once)."""
    mounts = _mounts()
    v1 = {}
    for root, point, kind, opts in mounts:
        for controller in ("memory", "pids"):
            if kind == "cgroup" and controller in opts:
                own = _own_path(controller)
                folder = own and _folder(root, point, own)
                if folder:
                    v1[controller] = _Hierarchy(folder, 1, controller)
    if len(v1) == 2 and _probe([h.folder for h in v1.values()]):
        return (v1["memory"], v1["pids"])
    for root, point, kind, _ in mounts:
        if kind != "cgroup2":
            continue
        own = _own_path(None)
        folder = own and _folder(root, point, own)
        if not folder:
            continue
        try:
            enabled = _read(os.path.join(folder, "cgroup.subtree_control")).split()
        except OSError:
            continue
        if {"memory", "pids"} <= set(enabled) and _probe([folder]):
            return (_Hierarchy(folder, 2, "memory+pids"),)
    if v1 or any(kind == "cgroup2" for *_, kind, _ in mounts):
        return "no writable cgroup with the memory and pids controllers for the arena"
    return "no cgroup file system mounted"


@functools.cache
def available() -> bool:
    """Whether bots get a cgroup each here; the first call also sweeps stale groups."""
    if isinstance(hierarchies(), str):
        return False
    from arena.engine import cpu

    remove_stale()
    cpu.remove_stale()
    return True


class BotCgroup:
    """One bot process's cgroup (in each hierarchy): made, joined from the child, removed."""

    def __init__(self, memory_bytes: int | None, processes: int | None, threads: int = 1) -> None:
        from arena.engine.cpu import CpuGroup

        processes = DEFAULT_PROCESSES if processes is None else processes
        found = hierarchies()
        assert not isinstance(found, str), found
        name = f"arena-{os.getpid()}-{next(_counter)}"
        self.folders: list[str] = []
        try:
            for h in found:
                folder = os.path.join(h.folder, name)
                os.mkdir(folder)
                self.folders.append(folder)
                if h.version == 2:
                    _limit(folder, "memory.max", memory_bytes)
                    _limit(folder, "memory.swap.max", memory_bytes and 0, optional=True)
                    _limit(folder, "pids.max", processes)
                elif h.controller == "memory":
                    _limit(folder, "memory.limit_in_bytes", memory_bytes)
                    _limit(folder, "memory.memsw.limit_in_bytes", memory_bytes, optional=True)
                else:
                    _limit(folder, "pids.max", processes)
            v2 = self.folders[0] if found[0].version == 2 else None
            self.cpu: CpuGroup | None = CpuGroup(name, threads, v2)
            """One CPU share, ``threads`` cores, usage and freezer (``arena/engine/cpu.py``)."""
        except OSError:
            self.try_remove()
            raise

    def join_fds(self) -> list[int]:
        """``cgroup.procs`` of each folder, open: the child writes ``0`` to join (exec closes)."""
        fds: list[int] = []
        try:
            for folder in self.folders:
                path = os.path.join(folder, "cgroup.procs")
                fds.append(os.open(path, os.O_WRONLY | os.O_CLOEXEC))
            if self.cpu is not None:
                fds += self.cpu.join_fds()
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        return fds

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group for its memory limit."""
        for folder in self.folders:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    text = _read(os.path.join(folder, name))
                except OSError:
                    continue
                for line in text.splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip() not in ("", "0"):
                        return True
        return False

    def try_remove(self) -> bool:
        """Kill whatever is left in the group and remove it; ``False`` while it still has members.

        The bot's last processes may take a moment to leave once bwrap is reaped.
        The CPU group goes first: it thaws the bot, which a kill needs on v1.
        """
        cpu = getattr(self, "cpu", None)
        if cpu is not None and not cpu.try_remove():
            return False
        self.folders = remove_folders(self.folders)
        return not self.folders

    async def remove(self, timeout: float = 2.0) -> None:
        """:meth:`try_remove` until it succeeds, for at most ``timeout`` seconds."""
        import trio

        with trio.move_on_after(timeout):
            while not self.try_remove():
                await trio.sleep(0.005)


def remove_stale() -> None:
    """Remove the groups of arenas that died without removing theirs (killed, say)."""
    found = hierarchies()
    if isinstance(found, str):
        return
    for h in found:
        for name in dead_arenas(h.folder):
            with suppress(OSError):
                os.rmdir(os.path.join(h.folder, name))


def dead_arenas(folder: str, kind: tuple[str, ...] = ()) -> list[str]:
    """The names in ``folder`` of the form ``arena-[KIND-]PID-X`` whose arena process
    is gone: what an arena killed before its own clean-up left there (its bots'
    groups, its ``/etc`` view). A name of a live arena, or of one this user may not
    signal, is not listed."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    at = 1 + len(kind)
    out = []
    for name in names:
        parts = name.split("-")
        if len(parts) != at + 2 or parts[0] != "arena" or tuple(parts[1:at]) != kind:
            continue
        if not parts[at].isdigit():
            continue
        try:
            os.kill(int(parts[at]), 0)
        except ProcessLookupError:
            out.append(name)
        except OSError:
            continue
    return out


def _kill_members(folder: str) -> None:
    try:
        pids = _read(os.path.join(folder, "cgroup.procs")).split()
    except OSError:
        return
    for pid in pids:
        with suppress(OSError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def _limit(folder: str, name: str, value: int | None, optional: bool = False) -> None:
    if value is None:
        return
    try:
        with open(os.path.join(folder, name), "w") as f:
            f.write(str(value))
    except OSError:
        if not optional:
            raise
