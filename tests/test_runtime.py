"""What a language runtime needs at start-up, inside the default sandbox (issue 34).

Each test starts ``tests/runtime_bot.py`` as a tournament would (the default
``[limits]`` and ``[sandbox]``, as root here and in CI), lets it try what
runtimes do before their first line (reserve address space, take a
``multiprocessing`` lock, read their configuration in ``/etc``) and reads its
report from its stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path

import needs
import pytest
import trio

from arena.backends.slots import resource_limits
from arena.engine.bot import Engine, EngineConfig
from arena.engine.sandbox import Sandbox
from arena.plan.config import Limits

HERE = Path(__file__).parent
BOT = [sys.executable, str(HERE / "runtime_bot.py")]


@pytest.fixture(autouse=True)
def working_sandbox() -> None:
    needs.sandbox()


def attempt(*checks: str, sandbox: Sandbox | None = None, limits: Limits | None = None) -> dict:
    """``{check: "ok" or "failed: why"}`` from one sandboxed start of the runtime bot,
    and the bound in force under ``"bound"``."""
    config = EngineConfig(
        name="runtime",
        command=[*BOT, *checks],
        limits=resource_limits(limits or Limits()),
        sandbox=sandbox or Sandbox(mode="bwrap"),
    )

    async def run() -> tuple[str, str]:
        async with Engine(config) as engine:
            await engine.start("kamisado", "standard")
            await engine.stop()
            return engine.stderr_tail(), engine.sandbox_bound

    tail, bound = trio.run(run)
    out = {"bound": bound}
    for line in tail.splitlines():
        if line.startswith("RUNTIME "):
            word, _, outcome = line.removeprefix("RUNTIME ").partition(" ")
            out[word] = outcome
    assert set(out) == {"bound", *checks}, tail
    return out


def test_under_a_cgroup_a_runtime_may_reserve_more_address_space_than_its_memory() -> None:
    """A JVM reserves its heap and class space up front (``java -jar`` did not start
    under the default 2048 MB); under a cgroup only the memory in use counts."""
    got = attempt("reserve=3072")
    if got["bound"] != "cgroup":
        needs.missing("no cgroup for the bots here: memory is bounded per process")
    assert got["reserve=3072"] == "ok", got


def test_address_space_is_bounded_without_a_sandbox() -> None:
    """Where nothing counts the bot's memory as a whole, ``memory_mb`` is each
    process's address space: the same reservation fails (the rlimit fallback)."""
    got = attempt("reserve=3072", sandbox=Sandbox(mode="none"))
    assert got["reserve=3072"].startswith("failed: OSError"), got
