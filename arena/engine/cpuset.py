"""Games on their own cores: each game slot's bots run on a cpuset of the slot's own.

A CPU share and a quota (:mod:`arena.engine.cpu`) bound what a bot uses on
average, over 100 ms periods; within a period a burst may take every core until
the quota is spent, and a game beside it on those cores waits (a hog in one game
was measured to make the fixed-work bot of the game beside it 15-20 % slower with
``concurrency = 2``; ``tests/test_cpu.py`` later measured 0.94 without cpusets and
0.97 with them, on a machine loaded by other work, so the share and quota do most of
it). Cores of one's own also keep caches and the scheduler's placement to the
game, as fastchess's affinity does. With ``affinity`` each slot ``i`` of the
machine gets cores of its own, ``size`` of them from the arena's allowed cores in
order (``size`` is the largest ``threads`` of the tournament's bots, twice that
with ``ponder``, when both bots of a game run at once: ``TournamentConfig.game_cores``);
both bots of a game share them, taking turns while frozen.

The bot's group joins them before the bot starts: on v1 a folder of the ``cpuset``
hierarchy (``cpuset.mems`` copied from the arena's, then ``cpuset.cpus``), on v2
``cpuset.cpus`` in the bot's own group, the controller enabled in the arena's
``cgroup.subtree_control`` when it is not yet. Which slot a bot plays in reaches
its group through :data:`SLOT_CPUS`, which each slot's task sets for itself (and the
engine starts it inherits), so an engine is kept to one slot (``EnginePool``).
"""

from __future__ import annotations

import functools
import os
import sys
from contextvars import ContextVar

from arena.engine import cgroups

SLOT_CPUS: ContextVar[str | None] = ContextVar("SLOT_CPUS", default=None)
"""The cores (``cpuset.cpus`` text, ``"2-3"``) of the slot whose task this is;
``None``: no affinity (the bot runs on every core the arena has)."""


def machine_cores() -> list[int]:
    """The cores the arena may run on (its affinity mask, which a container may narrow)."""
    return sorted(os.sched_getaffinity(0))


def fits(concurrency: int, size: int, cores: int | None = None) -> bool:
    """Whether ``concurrency`` games of ``size`` cores each fit on the machine."""
    return concurrency * size <= (len(machine_cores()) if cores is None else cores)


def slot_cpus(slot: int, size: int) -> str:
    """The cores of slot ``slot`` (counted over the whole machine), as ``cpuset.cpus`` text."""
    cores = machine_cores()
    mine = cores[slot * size : (slot + 1) * size]
    if len(mine) < size:
        raise ValueError(f"slot {slot} of {size} cores is beyond the {len(cores)} cores here")
    return ",".join(map(str, mine))


@functools.cache
def v1_folder() -> str | None:
    """The arena's own folder in the v1 ``cpuset`` hierarchy, if it can make children there."""
    for root, point, kind, opts in cgroups._mounts():
        if kind == "cgroup" and "cpuset" in opts:
            own = cgroups._own_path("cpuset")
            folder = own and cgroups._folder(root, point, own)
            if folder and cgroups._probe([folder]):
                return folder
    return None


def missing() -> str | None:
    """Why bots cannot be kept to their slot's cores here (``None``: they can)."""
    found = cgroups.hierarchies()
    if isinstance(found, str):
        return found
    if found[0].version == 2:
        parent = found[0].folder
        try:
            offered = cgroups._read(os.path.join(parent, "cgroup.controllers")).split()
        except OSError:
            offered = []
        return None if "cpuset" in offered else "no cpuset controller delegated to the arena"
    return None if v1_folder() else "no writable cpuset cgroup for the arena"


def make_v1(name: str, cpus: str) -> str:
    """A v1 cpuset folder for one bot, on ``cpus`` (memory nodes: the arena's own)."""
    parent = v1_folder()
    assert parent is not None
    folder = os.path.join(parent, name)
    os.mkdir(folder)
    try:
        # A new v1 cpuset is empty, and a task cannot join an empty one: mems first.
        mems = cgroups._read(os.path.join(parent, "cpuset.mems")).strip()
        cgroups._write(os.path.join(folder, "cpuset.mems"), mems)
        cgroups._write(os.path.join(folder, "cpuset.cpus"), cpus)
    except OSError:
        os.rmdir(folder)
        raise
    return folder


def set_v2(folder: str, cpus: str) -> None:
    """``cpuset.cpus`` of a bot's v2 group, the controller enabled for the arena's children."""
    parent = os.path.dirname(folder)
    control = os.path.join(parent, "cgroup.subtree_control")
    if "cpuset" not in cgroups._read(control).split():
        cgroups._write(control, "+cpuset")
    cgroups._write(os.path.join(folder, "cpuset.cpus"), cpus)


_warned: list[str] = []


def warn_once(why: str) -> None:
    """Say once per process that the slots' cores are not enforced here, and why."""
    if not _warned:
        _warned.append(why)
        print(
            f"arena: warning: {why}: games are not kept to cores of their own (affinity)",
            file=sys.stderr,
            flush=True,
        )


__all__ = [
    "SLOT_CPUS",
    "fits",
    "machine_cores",
    "make_v1",
    "missing",
    "set_v2",
    "slot_cpus",
    "v1_folder",
    "warn_once",
]
