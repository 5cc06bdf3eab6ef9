"""How the arena runs one bot: its :class:`~arena.engine.config.EngineConfig`, built
here and nowhere else.

A tournament's game slots and pre-flight, ``arena play``, ``check-bot`` (and its
opponents), ``sprt``'s naming start and ``openings generate`` all start bots; each
built its own ``EngineConfig`` once, and the copies drifted (the naming start
applied no ``[limits]``, check-bot's opponents took the checked bot's grants).
Every path gives a bot entry and the tournament's ``[limits]``, ``[sandbox]`` and
``[protocol]`` settings (a tournament file's defaults when there is no file) to
:func:`engine_config`.
"""

from __future__ import annotations

from arena.engine.config import EngineConfig, ResourceLimits
from arena.engine.sandbox import MB, Sandbox, SandboxSettings
from arena.plan.config import BotConfig, Limits, ProtocolSettings, TournamentConfig

__all__ = ["engine_config", "entry_config", "resource_limits"]


def resource_limits(limits: Limits) -> ResourceLimits:
    """The engine's rlimits for a ``[limits]`` table."""
    return ResourceLimits(
        memory_bytes=None if limits.memory_mb is None else limits.memory_mb * MB,
        cpu_seconds=limits.cpu_seconds,
        processes=limits.processes,
        file_size=None if limits.file_size_mb is None else limits.file_size_mb * MB,
    )


def engine_config(
    bot: BotConfig,
    *,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
    protocol: ProtocolSettings | None = None,
    ponder: bool = False,
) -> EngineConfig:
    """``bot`` (a ``[[bots]]`` entry, or one made for a command line) run under the
    tournament's settings; each left out is a tournament file's default."""
    limits = Limits() if limits is None else limits
    box = SandboxSettings() if sandbox is None else sandbox
    protocol = ProtocolSettings() if protocol is None else protocol
    return EngineConfig(
        name=bot.name,
        command=bot.argv,
        cwd=bot.cwd,
        env=dict(bot.env),
        options=dict(bot.options),
        max_line=protocol.max_line,
        handshake_timeout=protocol.handshake_timeout,
        limits=resource_limits(limits),
        threads=bot.threads,
        ponder=ponder,
        sandbox=Sandbox(
            mode=box.mode,
            ro=list(bot.sandbox_ro),
            rw=list(bot.sandbox_rw),
            net=bot.sandbox_net,
            hide=list(box.hide),
            scratch_bytes=box.scratch_mb * MB,
            user=box.user,
        ),
    )


def entry_config(config: TournamentConfig, name: str) -> EngineConfig:
    """Entry ``name`` of a loaded tournament file, as its games start it."""
    return engine_config(
        config.bot(name),
        limits=config.limits,
        sandbox=config.sandbox,
        protocol=config.protocol,
        ponder=config.ponder,
    )
