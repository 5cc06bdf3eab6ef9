"""Fair compute: one bot is one share of the CPU, and nothing runs on its opponent's time.

Clocks are wall time, so a bot's processes that run while its opponent thinks
slow the opponent down: eight busy processes, each in a session of its own (and
so each in a scheduler autogroup of its own), made a fixed-work opponent take
4.1 times as long a move and lose on time at ``2+0``. Two remedies, both on the
bot's cgroup (:mod:`arena.engine.cgroups`):

* **One share, ``threads`` cores.** The group joins the ``cpu`` controller with the
  same weight as every other bot (``cpu.shares`` 1024 on v1, ``cpu.weight`` 100 on
  v2), so the scheduler sees one entity however many processes it holds, and a
  quota of ``threads`` cores (``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``, or
  ``cpu.max``): a bot with eight busy processes and ``threads = 1`` gets one core.
  The quota is per period (100 ms): within one, a burst may spread over every core
  until it is spent (a hog's instant answer measured 9 ms of wall and 18 ms of CPU
  on two cores), which the cpusets per game prevent (``affinity``, :mod:`arena.engine.cpuset`).
* **Frozen off move.** From the moment its answer is read until its next request
  is written, the bot's group is frozen (v1 ``freezer.state``, v2
  ``cgroup.freeze``): it uses no CPU at all while the opponent thinks. The thaw
  comes just before the request is written, inside the interval the clock charges,
  so a bot pays for its own thaw (microseconds). Where no freezer group exists,
  the bot's process group is stopped with ``SIGSTOP`` and continued with
  ``SIGCONT`` (:class:`SignalFreezer`): weaker, since a helper in a session of its
  own escapes it; the arena says so once.
  ``ponder = true`` in a tournament file turns freezing off.

The group's CPU time (``cpuacct.usage``, or ``usage_usec`` of ``cpu.stat`` on v2) is
read around each request, so each action's record holds the CPU the bot used
beside the wall time it was charged.

A v1 freeze costs about 180 us when it is the machine's only frozen group: the
kernel turns a static key on for the first freezing group and off after the last
thaw, patching its own code each time. The arena keeps one empty group of its own
frozen (``arena-PID-pin``) so the key stays on: a freeze and thaw of an idle bot
in a tight loop then cost about 9 us together, and 20-70 us each inside real games
(the kernel wakes the bot's tasks to stop them, and again to go on), which is what
``bench/overhead.py`` prints.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from contextlib import suppress
from dataclasses import dataclass

from arena.engine import cgroups, cpuset

SHARES = 1024
"""``cpu.shares`` of every bot on v1 (the kernel's default for a group)."""
WEIGHT = 100
"""``cpu.weight`` of every bot on v2 (the kernel's default)."""
PERIOD_US = 100_000
"""The quota's period: ``threads`` cores are ``threads * PERIOD_US`` us of CPU per period."""


@dataclass(frozen=True)
class CpuHierarchies:
    """Where a bot's CPU group is made: the arena's own v1 folders, or the v2 one."""

    cpu: str | None = None
    """v1: the ``cpu`` hierarchy (shares and quota)."""
    cpuacct: str | None = None
    """v1: the ``cpuacct`` hierarchy (usage); may be the same mount as ``cpu``."""
    freezer: str | None = None
    """v1: the ``freezer`` hierarchy."""
    v2: str | None = None
    """v2: the arena's folder, where the bot's one group (memory, pids, cpu) lies."""

    @property
    def freeze_kind(self) -> str:
        """``freezer`` (v1), ``cgroup.freeze`` (v2) or ``sigstop`` (neither)."""
        if self.v2:
            return "cgroup.freeze"
        return "freezer" if self.freezer else "sigstop"


@functools.cache
def hierarchies() -> CpuHierarchies:
    """The CPU controllers the arena can use here (checked once; none: all ``None``)."""
    found = cgroups.hierarchies()
    if isinstance(found, str):
        return CpuHierarchies()
    if found[0].version == 2:
        # cgroup.freeze and cpu.stat exist in every non-root v2 group; cpu.weight and
        # cpu.max only where the cpu controller is delegated (see CpuGroup).
        return CpuHierarchies(v2=found[0].folder)
    v1: dict[str, str] = {}
    for root, point, kind, opts in cgroups._mounts():
        if kind != "cgroup":
            continue
        for controller in ("cpu", "cpuacct", "freezer"):
            if controller in opts and controller not in v1:
                own = cgroups._own_path(controller)
                folder = own and cgroups._folder(root, point, own)
                if folder and cgroups._probe([folder]):
                    v1[controller] = folder
    return CpuHierarchies(v1.get("cpu"), v1.get("cpuacct"), v1.get("freezer"))


def v2_cpu_controller(folder: str) -> bool:
    """Whether the v2 ``folder``'s children have the cpu controller (weight and quota)."""
    try:
        return "cpu" in cgroups._read(os.path.join(folder, "cgroup.subtree_control")).split()
    except OSError:
        return False


_GUARD = r"""
import os, sys
fd, folder, prefix = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if os.fork():  # the guard is the grandchild: no process manager's kill of children reaches it
    os._exit(0)
try:
    while os.read(fd, 4096):
        pass
except OSError:
    pass
names = [n for n in os.listdir(folder) if n.startswith(prefix)]
for name in names:
    try:
        with open(os.path.join(folder, name, "freezer.state"), "w") as f:
            f.write("THAWED")
    except OSError:
        pass
for name in names:  # the empty ones (the pin); the next arena sweeps the rest
    try:
        os.rmdir(os.path.join(folder, name))
    except OSError:
        pass
"""
"""The guard's program: wait for the end of the arena (its pipe closes), then thaw
every group of that arena, so that its bots die of the signal already sent them."""

_guarded: list[int] = []
"""The pid of the process whose guard runs (a forked worker needs its own)."""
_guards: list[object] = []


def _guard() -> None:
    """A process that thaws this arena's frozen bots once the arena is gone.

    On cgroup v1 a frozen process does not die of SIGKILL until it is thawed, so a
    bot frozen when its arena is killed would outlive it, the kernel's death
    signal (``PR_SET_PDEATHSIG``) pending. The guard, started once per arena
    process, holds the read end of a pipe whose write end only the arena holds;
    when it reads the end of the pipe it thaws the arena's groups, and the
    pending signal kills the bots. It runs the arena's own interpreter.
    """
    import subprocess

    found = hierarchies()
    if not found.freezer or os.getpid() in _guarded:
        return
    prefix = f"arena-{os.getpid()}-"
    read, write = os.pipe()  # both close on exec: only the guard gets the read end
    try:
        # The guard forks once more and its parent exits here: a Ray worker that is
        # killed has its raylet kill its direct children too, and a guard killed so
        # would leave that actor's frozen bots alive for good.
        subprocess.run(
            [sys.executable, "-I", "-c", _GUARD, str(read), found.freezer, prefix],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            pass_fds=(read,),
            start_new_session=True,
            check=False,
        )
    except OSError:
        os.close(write)
        raise
    finally:
        os.close(read)
    _guards.append(write)  # held open, never written: closed when this process ends
    _guarded.append(os.getpid())


@functools.cache
def _pin() -> None:
    """Keep the kernel's freezer key on with one empty frozen group (see the module doc)."""
    found = hierarchies()
    if not found.freezer:
        return
    path = os.path.join(found.freezer, f"arena-{os.getpid()}-pin")
    with suppress(OSError):
        os.mkdir(path)
    with suppress(OSError):
        cgroups._write(os.path.join(path, "freezer.state"), "FROZEN")


class CpuGroup:
    """A bot's share, quota, usage and freezer; v1 folders made here, v2 the bot's own."""

    def __init__(self, name: str, threads: int, v2_folder: str | None = None) -> None:
        found = hierarchies()
        self.threads = threads
        self.folders: list[str] = []
        """v1 folders made for this bot (removed with it)."""
        self._usage: tuple[int, str] | None = None
        """An open ``cpuacct.usage`` (``ns``) or ``cpu.stat`` (``usec``), read per request."""
        self._freeze: tuple[int, bytes, bytes] | None = None
        self.freeze_kind = "sigstop"
        quota = threads * PERIOD_US
        cpus = cpuset.SLOT_CPUS.get()
        self.cpus: str | None = None
        """The slot's cores the bot is kept to (``None``: every core, no affinity)."""
        try:
            if v2_folder is not None:
                if v2_cpu_controller(os.path.dirname(v2_folder)):
                    cgroups._write(os.path.join(v2_folder, "cpu.weight"), str(WEIGHT))
                    cgroups._write(os.path.join(v2_folder, "cpu.max"), f"{quota} {PERIOD_US}")
                if cpus is not None:
                    self._v2_cpuset(v2_folder, cpus)
                self._open_usage(os.path.join(v2_folder, "cpu.stat"), "usec")
                self._open_freezer(os.path.join(v2_folder, "cgroup.freeze"), b"1", b"0")
                self.freeze_kind = "cgroup.freeze"
                return
            made: dict[str, str] = {}
            for parent in dict.fromkeys(p for p in (found.cpu, found.cpuacct, found.freezer) if p):
                folder = os.path.join(parent, name)
                os.mkdir(folder)
                self.folders.append(folder)
                made[parent] = folder
            if found.cpu:
                folder = made[found.cpu]
                cgroups._write(os.path.join(folder, "cpu.shares"), str(SHARES))
                cgroups._write(os.path.join(folder, "cpu.cfs_period_us"), str(PERIOD_US))
                cgroups._write(os.path.join(folder, "cpu.cfs_quota_us"), str(quota))
            if found.cpuacct:
                self._open_usage(os.path.join(made[found.cpuacct], "cpuacct.usage"), "ns")
            if found.freezer:
                _guard()
                _pin()
                state = os.path.join(made[found.freezer], "freezer.state")
                self._open_freezer(state, b"FROZEN", b"THAWED")
                self.freeze_kind = "freezer"
            if cpus is not None:
                if cpuset.v1_folder() is None:
                    cpuset.warn_once(cpuset.missing() or "no cpuset")
                else:
                    self.folders.append(cpuset.make_v1(name, cpus))
                    self.cpus = cpus
        except OSError:
            self.try_remove()
            raise

    def _v2_cpuset(self, folder: str, cpus: str) -> None:
        try:
            cpuset.set_v2(folder, cpus)
        except OSError as exc:
            cpuset.warn_once(f"cannot set cpuset.cpus in {folder} ({exc.strerror or exc})")
        else:
            self.cpus = cpus

    def _open_usage(self, path: str, unit: str) -> None:
        self._usage = (os.open(path, os.O_RDONLY | os.O_CLOEXEC), unit)

    def _open_freezer(self, path: str, frozen: bytes, thawed: bytes) -> None:
        self._freeze = (os.open(path, os.O_WRONLY | os.O_CLOEXEC), frozen, thawed)

    @property
    def can_freeze(self) -> bool:
        return self._freeze is not None

    def join_fds(self) -> list[int]:
        """``cgroup.procs`` of each v1 folder, open, for the child to join (as the bot's group)."""
        fds: list[int] = []
        try:
            for folder in self.folders:
                fds.append(
                    os.open(os.path.join(folder, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                )
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        return fds

    def usage_ns(self) -> int | None:
        """CPU time the group used so far, in nanoseconds (``None``: not counted here)."""
        if self._usage is None:
            return None
        fd, unit = self._usage
        try:
            text = os.pread(fd, 4096, 0).decode("ascii", "replace")
        except OSError:
            return None
        if unit == "ns":
            return int(text.strip() or 0)
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) * 1000
        return None

    def freeze(self) -> None:
        if self._freeze is not None:
            fd, frozen, _ = self._freeze
            with suppress(OSError):
                os.pwrite(fd, frozen, 0)

    def thaw(self) -> None:
        if self._freeze is not None:
            fd, _, thawed = self._freeze
            with suppress(OSError):
                os.pwrite(fd, thawed, 0)

    def try_remove(self) -> bool:
        """Thaw (a frozen process does not die of SIGKILL on v1), kill what is left, remove."""
        self.thaw()
        self.folders = cgroups.remove_folders(self.folders)
        if not self.folders:
            for held in (self._freeze, self._usage):
                if held is not None:
                    with suppress(OSError):
                        os.close(held[0])
            self._freeze = self._usage = None
        return not self.folders


class SignalFreezer:
    """Where no freezer group exists: ``SIGSTOP`` and ``SIGCONT`` of the bot's process group.

    One system call each way. Weaker than a freezer group: a helper the bot put in
    a session of its own (``setsid``) is in another group and keeps running, which
    is why the arena says once when this is all it has (:func:`warn_sigstop`).
    """

    freeze_kind = "sigstop"

    def __init__(self, pgid: int) -> None:
        self.pgid = pgid

    def freeze(self) -> None:
        with suppress(OSError):
            os.killpg(self.pgid, signal.SIGSTOP)

    def thaw(self) -> None:
        with suppress(OSError):
            os.killpg(self.pgid, signal.SIGCONT)


_warned: list[str] = []


def warn_sigstop(why: str) -> None:
    """Say once per process that bots off move are only stopped by signals here."""
    if _warned:
        return
    _warned.append(why)
    print(
        f"arena: warning: {why}: a bot not on move is stopped with SIGSTOP of its process "
        "group (its helpers in sessions of their own keep running), and no CPU share or "
        "quota bounds it",
        file=sys.stderr,
        flush=True,
    )


def describe(mode: str, ponder: bool) -> str:
    """What holds the bots' CPU here, for a tournament's start line (``mode``: the
    sandbox in force, ``bwrap`` or ``none``)."""
    if mode == "bwrap" and cgroups.available():
        found = hierarchies()
        share = "one CPU share and its threads' cores each" if found.cpu or found.v2 else ""
        off = "not frozen off move (ponder)" if ponder else f"frozen off move ({found.freeze_kind})"
        return f"bots: {share}, {off}" if share else f"bots: {off}"
    if ponder:
        return "bots: no CPU share (no cgroup), not stopped off move (ponder)"
    return "bots: no CPU share (no cgroup), stopped off move by SIGSTOP of their process group"


def remove_stale() -> None:
    """Thaw and remove the CPU groups of arenas that died without removing theirs.

    A process frozen on v1 does not die of SIGKILL (nor of the death signal its
    arena's end sends) until it is thawed, so a killed arena's frozen bots would
    otherwise sit in their groups for good.
    """
    found = hierarchies()
    kinds = (found.cpu, found.cpuacct, found.freezer, cpuset.v1_folder())
    for parent in dict.fromkeys(p for p in kinds if p):
        for name in cgroups.dead_arenas(parent):
            folder = os.path.join(parent, name)
            if parent == found.freezer:
                with suppress(OSError):
                    cgroups._write(os.path.join(folder, "freezer.state"), "THAWED")
            cgroups._kill_members(folder)
            with suppress(OSError):
                os.rmdir(folder)


__all__ = [
    "CpuGroup",
    "CpuHierarchies",
    "SignalFreezer",
    "describe",
    "hierarchies",
    "remove_stale",
    "warn_sigstop",
]
