"""Looking at live processes through /proc, for tests that must prove nothing leaked."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import trio


def processes() -> Iterator[tuple[int, str, int, int, bytes]]:
    """``(pid, state, parent pid, process group, command line)`` of every process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # gone while we looked
        yield int(entry.name), fields[0], int(fields[1]), int(fields[2]), cmdline


def group_alive(pgid: int) -> bool:
    """Whether a non-zombie process of group ``pgid`` exists (zombies may wait for
    a reaper that is not ours to control)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return any(group == pgid and state != "Z" for _, state, _, group, _ in processes())


async def assert_group_dies(pgid: int, limit: float = 2) -> None:
    """SIGKILL reaches grandchildren asynchronously: poll, with a deadline."""
    with trio.move_on_after(limit):
        while group_alive(pgid):
            await trio.sleep(0.01)
    assert not group_alive(pgid), f"process group {pgid} survived"


def live_with(marker: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line mentions ``marker``."""
    needle = marker.encode()
    return [pid for pid, state, _, _, cmd in processes() if needle in cmd and state != "Z"]


def children_with(parent: int, marker: str) -> list[int]:
    needle = marker.encode()
    return [
        pid
        for pid, state, ppid, _, cmd in processes()
        if ppid == parent and needle in cmd and state != "Z"
    ]


def wait_none_with(marker: str, limit: float = 10) -> None:
    """Block (polling, bounded) until no live process mentions ``marker``."""
    deadline = time.monotonic() + limit
    while live_with(marker):
        assert time.monotonic() < deadline, f"processes left: {described(live_with(marker))}"
        time.sleep(0.02)


def described(pids: list[int]) -> list[str]:
    """Each process's pid, state, parent and command line: what a leak report needs."""
    lines = []
    for pid, state, ppid, _, cmd in processes():
        if pid in pids:
            args = cmd.replace(b"\0", b" ").decode("utf-8", "replace").strip()
            lines.append(f"{pid} {state} parent {ppid}: {args[:300]}")
    return lines


def listening_port(pid: int) -> int | None:
    """The TCP port process ``pid`` listens on (``None`` if none): its sockets'
    inodes (``/proc/PID/fd``) looked up among the listening ones (``/proc/net/tcp``,
    ``tcp6``). For a server that prints only another address (``--public-url``):
    a port picked beforehand and handed to it could be taken meanwhile."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed while we looked
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                return int(fields[1].rsplit(":", 1)[1], 16)
    return None
