"""Every path that starts a bot builds its ``EngineConfig`` in one place
(``arena/plan/launch.py``), so every path confines it alike."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
import trio
from test_openings import Stop, capture_configs

import arena.plan.entrants as entrants
from arena.engine.sandbox import Sandbox, SandboxSettings
from arena.plan.config import BotConfig, Limits, ProtocolSettings
from arena.plan.launch import engine_config, resource_limits

ARENA = Path(__file__).resolve().parent.parent / "arena"
BUILDER = ARENA / "plan" / "launch.py"


def test_an_engine_config_is_built_only_by_the_builder() -> None:
    """The engine defines it; everything else asks ``engine_config`` (play, check-bot,
    openings and sprt's naming each once built their own, one with no limits)."""
    built = [
        f"{path.relative_to(ARENA.parent)}:{node.lineno}"
        for path in sorted(ARENA.rglob("*.py"))
        if path != BUILDER and ARENA / "engine" not in path.parents
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("EngineConfig")
    ]
    assert built == []


def test_the_builder_applies_the_entry_and_every_setting() -> None:
    bot = BotConfig(
        name="b",
        command=["/bin/bot", "-x"],
        args=["--y"],
        cwd="/home/b",
        env={"K": "v"},
        options={"Hash": 64},
        sandbox_ro=["/data"],
        sandbox_net=True,
        threads=2,
    )
    config = engine_config(
        bot,
        limits=Limits(memory_mb=300, cpu_seconds=5, processes=7, file_size_mb=None),
        sandbox=SandboxSettings(mode="none", scratch_mb=8, hide=["/r"], user="u"),
        protocol=ProtocolSettings(handshake_timeout=3.0, max_line=1 << 17),
        ponder=True,
    )
    assert (config.name, config.command, config.cwd) == ("b", ["/bin/bot", "-x", "--y"], "/home/b")
    assert (config.env, config.options, config.threads, config.ponder) == (
        {"K": "v"},
        {"Hash": 64},
        2,
        True,
    )
    assert (config.handshake_timeout, config.max_line) == (3.0, 1 << 17)
    limits = config.limits
    assert (limits.memory_bytes, limits.cpu_seconds, limits.processes, limits.file_size) == (
        300 << 20,
        5,
        7,
        None,
    )
    assert config.sandbox == Sandbox(
        mode="none", ro=["/data"], net=True, hide=["/r"], scratch_bytes=8 << 20, user="u"
    )


def test_learning_a_command_bots_name_confines_it_as_a_tournament_does(monkeypatch) -> None:
    """``sprt`` starts a command bot once to learn its name: under a tournament file's
    default ``[limits]`` and ``[sandbox]``, not unbounded (it once had no limits)."""
    seen: list = []
    capture_configs(monkeypatch, seen, entrants)
    bot = entrants.entrant(f"{sys.executable} -c pass")
    with pytest.raises(Stop):
        trio.run(entrants.identity_name, bot, "kamisado", "standard")
    wanted = resource_limits(Limits())
    assert wanted.memory_bytes is not None
    assert [(c.command, c.limits, c.sandbox) for c in seen] == [(bot.command, wanted, Sandbox())]
