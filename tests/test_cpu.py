"""Fair compute (``arena/engine/cpu.py``): one CPU share per bot, ``threads`` cores at
most, and nothing on the opponent's time. Real sandboxed bots (``tests/cpu_bot.py``),
their CPU time read from their own cgroups.

Fairness is measured relatively: a machine shared with other work changes every
figure, so each comparison is between runs interleaved in the same test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import needs
import trio

from arena.engine import cgroups
from arena.engine.bot import Engine, EngineConfig

HERE = Path(__file__).resolve().parent
CPU_BOT = [sys.executable, str(HERE / "cpu_bot.py")]
MEASURE = 1.0
"""Seconds of wall time over which a bot's CPU use is measured."""


def bot(mode: str, *args: object, **kw: object) -> EngineConfig:
    return EngineConfig(
        name=f"{mode}{''.join(map(str, args))}",
        command=[*CPU_BOT, mode, *map(str, args)],
        quit_timeout=0.5,
        **kw,  # type: ignore[arg-type]
    )


def need_cgroups() -> None:
    needs.sandbox()
    if not cgroups.available():
        needs.missing(f"no cgroup for bots here: {cgroups.hierarchies()}")


async def cores_used(engine: Engine, seconds: float = MEASURE) -> float:
    """The bot's CPU seconds per wall second, from its cgroup, over ``seconds``."""
    used, start = engine.cpu_seconds(), trio.current_time()
    assert used is not None, "no CPU usage counted for the bot"
    await trio.sleep(seconds)  # a measured interval, not a wait for an event
    now = engine.cpu_seconds()
    assert now is not None
    return (now - used) / (trio.current_time() - start)


async def test_eight_busy_processes_with_threads_1_use_at_most_one_core() -> None:
    need_cgroups()
    async with Engine(bot("hog", 8, threads=1)) as engine:
        ident = await engine.start("kamisado", "standard")
        assert ident.name == "cpu-bot cores=1"
        await trio.sleep(0.2)  # the helpers start
        used = await cores_used(engine)
    # Eight spinning processes in sessions of their own take every core the machine
    # gives them without the quota (about 1.9 of 2 on a quiet machine).
    assert used <= 1.1, f"the bot used {used:.2f} cores"
    assert used >= 0.1, f"the bot ran at {used:.2f} cores: the measure is not its CPU"


async def test_threads_is_the_quota_and_the_cores_in_hello() -> None:
    need_cgroups()
    async with Engine(bot("quiet", threads=3)) as engine:
        ident = await engine.start("kamisado", "standard")
        assert ident.name == "cpu-bot cores=3"
        group = engine._cgroup
        assert group is not None and group.cpu is not None
        cpu_folder = next(f for f in group.cpu.folders if "/cpu/" in f or "cpu," in f)
        quota = Path(cpu_folder, "cpu.cfs_quota_us").read_text().split()[0]
        period = Path(cpu_folder, "cpu.cfs_period_us").read_text().split()[0]
        shares = Path(cpu_folder, "cpu.shares").read_text().split()[0]
    assert (int(quota), int(period), int(shares)) == (300_000, 100_000, 1024)
    assert not os.path.exists(cpu_folder), "the bot's CPU group outlived it"


def test_a_tournament_entry_declares_its_threads(tmp_path: Path) -> None:
    from arena.backends.slots import engine_config
    from arena.plan.config import ConfigError, load_config

    text = """name = "t"
[[bots]]
name = "a"
command = "builtin:random"
threads = 2
[[bots]]
name = "b"
command = "builtin:random"
"""
    path = tmp_path / "t.toml"
    path.write_text(text)
    config = load_config(path)
    assert [engine_config(config, n).threads for n in ("a", "b")] == [2, 1]
    path.write_text(text.replace("threads = 2", "threads = 0"))
    try:
        load_config(path)
    except ConfigError as exc:
        assert "bots[0] (a).threads" in str(exc) and ">= 1" in str(exc)
    else:
        raise AssertionError("threads = 0 was accepted")
