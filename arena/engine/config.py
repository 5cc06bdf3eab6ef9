"""How to run one bot: its command, environment, limits, sandbox and protocol bounds.

Plain values (msgspec Structs), built in one place (``arena/plan/launch.py``) from a
bot entry and a tournament's settings, whether from its file or the command line,
and handed to :class:`arena.engine.bot.Engine`.
"""

from __future__ import annotations

import os
import resource

import msgspec

from arena.engine.sandbox import Sandbox
from arena.protocol.messages import MAX_LINE, OptionValue

_KEPT_ENV = ("PATH", "HOME", "LANG")


class ResourceLimits(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``setrlimit`` limits applied in the child before ``exec``; ``None`` = inherit.

    ``processes`` is RLIMIT_NPROC, which Linux counts per *user*, not per bot,
    and ignores for root; a sandboxed bot under a root arena runs as an
    unprivileged user, and where a cgroup bounds the bot (``arena/engine/cgroups.py``)
    its ``pids.max`` replaces RLIMIT_NPROC and ``memory_bytes`` bounds its
    memory as a whole instead of each process's address space (RLIMIT_AS, which
    only the rlimit fallback and an unconfined bot get).
    ``core_bytes`` defaults to 0 so crashing bots leave no core files.
    """

    memory_bytes: int | None = None
    cpu_seconds: int | None = None
    processes: int | None = None
    file_size: int | None = None
    core_bytes: int | None = 0

    def pairs(self) -> list[tuple[int, int, int]]:
        """``(resource, soft, hard)`` triples, clamped to the arena's own hard limits.

        Computed in the parent so the pre-exec function does nothing but
        ``setrlimit`` calls (the child of a threaded parent must stay trivial).
        """
        wanted = [
            (resource.RLIMIT_AS, self.memory_bytes),
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_NPROC, self.processes),
            (resource.RLIMIT_FSIZE, self.file_size),
            (resource.RLIMIT_CORE, self.core_bytes),
        ]
        out = []
        for res, value in wanted:
            if value is None:
                continue
            hard = resource.getrlimit(res)[1]
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            soft = value
            if res == resource.RLIMIT_CPU and (hard == resource.RLIM_INFINITY or value < hard):
                value += 1  # SIGXCPU at the soft limit, SIGKILL a second later
            out.append((res, soft, value))
        return out


class EngineConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How to run one bot (outside the engine, built by ``arena/plan/launch.py`` only).

    Timeouts are seconds. ``env`` is added to a scrubbed environment holding only
    PATH, HOME and LANG, so bots see the same world on every machine. ``sandbox``
    confines the process (``arena/engine/sandbox.py``); by default bwrap when it works.
    """

    name: str
    command: list[str]
    cwd: str | None = None
    env: dict[str, str] = {}
    limits: ResourceLimits = msgspec.field(default_factory=ResourceLimits)
    sandbox: Sandbox = msgspec.field(default_factory=Sandbox)
    max_line: int = MAX_LINE
    handshake_timeout: float = 10.0
    quit_timeout: float = 1.0
    term_timeout: float = 0.5
    stderr_lines: int = 20
    stderr_bytes: int = 4096
    """The last lines of stderr kept (per game), within this many bytes."""
    stderr_line_bytes: int = 1024
    """Longest stderr line kept whole (a longer one keeps both ends around a mark)."""
    stderr_head_lines: int = 20
    stderr_head_bytes: int = 4096
    """The first lines of stderr kept besides its tail (``arena/engine/output.py``): where
    a runtime that cannot start says why."""
    options: dict[str, OptionValue] = {}
    """Engine options to set (``setoption``) before every ``newgame``; each must be
    declared in the bot's ``identity`` (checked at every start)."""
    info_lines: int = 64
    """``info`` lines kept per request (the latest ones); older ones are dropped, counted."""
    info_bytes: int = 65536
    """Bytes of ``info`` lines kept per request: a flood of 1 MiB lines costs no memory."""
    threads: int = 1
    """Cores the bot may use at once: its cgroup's CPU quota, told to it in ``hello``
    (``cores``); it has one CPU share whatever it asks (``arena/engine/cpu.py``)."""
    ponder: bool = False
    """Let the bot run between its answer and its next request; by default it is
    frozen then, so nothing it does runs on its opponent's time."""

    def environment(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _KEPT_ENV if k in os.environ}
        env.update(self.env)
        return env


__all__ = ["EngineConfig", "ResourceLimits"]
