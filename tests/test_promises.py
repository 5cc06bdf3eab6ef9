"""Promises of protocol.md and the config that had no test of their own, each with
real bot processes: the ``newgame`` deadline, a bot that stops reading its input,
a game with a time control per bot, the ``sandbox_net`` grant, ``scratch_mb`` and
``cpu_seconds``. (The skipped-games count is checked on every backend in
``tests/test_fault_policy.py``.)"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import needs
import pytest
import trio

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig, ResourceLimits
from arena.engine.errors import EngineError, EngineTimeout
from arena.engine.sandbox import Sandbox
from arena.games import get_game
from arena.match.clock import Clock, TimeControl
from arena.match.referee import RefereeSettings, play_game
from arena.match.wire import clock_info
from arena.protocol.messages import Go, NewGame
from arena.storage.store import Store

START = "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - single 0-0 1 -"

# A bot that plays the first legal action, except as its MODE says.
BOT = r"""
import json, sys, time
mode = sys.argv[1]
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        send({"type": "identity", "id": msg["id"], "protocol": msg["protocol"], "name": mode,
              "author": "tests", "version": "1", "games": ["kamisado"]})
    elif kind == "newgame":
        if mode == "no_ready":
            continue  # never ready
        send({"type": "ready", "id": msg["id"]})
        if mode == "deaf":
            time.sleep(600)  # never reads its input again
    elif kind == "go":
        if mode == "slow":
            time.sleep(float(sys.argv[2]))
        if mode == "spin":
            while True:
                pass
        send({"type": "action", "id": msg["id"], "action": msg["legal"][0]})
    elif kind == "quit":
        sys.exit(0)
"""


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    path = tmp_path / "promise_bot.py"
    path.write_text(BOT)
    return path


def engine(script: Path, mode: str, *args: str, **kw: object) -> Engine:
    settings: dict[str, object] = {"sandbox": Sandbox(mode="none"), "quit_timeout": 0.5}
    settings.update(kw)
    command = [sys.executable, str(script), mode, *args]
    return Engine(EngineConfig(name=mode, command=command, **settings))  # type: ignore[arg-type]


async def game(engines: list[Engine], tc: str = "60+0", **settings: float) -> object:
    kamisado = get_game("kamisado")
    control = TimeControl.parse(tc)
    async with engines[0], engines[1]:
        return await play_game(
            kamisado,
            kamisado.state_from_text(START),
            engines,
            [control, control],
            variant="single",
            settings=RefereeSettings(**settings),  # type: ignore[arg-type]
        )


async def test_a_bot_that_never_answers_newgame_loses_on_time_at_its_deadline(bot: Path) -> None:
    """``[protocol] newgame_timeout``: no ``ready`` in time is a time fault in
    ``newgame_timeout`` seconds (not the default 10, nor never)."""
    started = time.monotonic()
    with trio.fail_after(60):
        record = await game([engine(bot, "normal"), engine(bot, "no_ready")], newgame_timeout=0.5)
    took = time.monotonic() - started
    assert (record.reason, record.faulty) == ("time", 1), record.detail  # type: ignore[attr-defined]
    assert took < 6, took  # two starts and 0.5 s; the default would be 10 s


async def test_a_bot_that_stops_reading_its_input_cannot_hang_the_arena(bot: Path) -> None:
    """A request larger than the pipe to a bot that no longer reads: the write itself
    is bounded by the request's deadline (a time fault), and so is the quit on the way out."""
    deaf = engine(bot, "deaf")
    clock = Clock(TimeControl.parse("10+0.1"))
    big = Go(
        player=0,
        position=START,
        observation={"board": "x" * (4 << 20)},  # 4 MiB: far more than a pipe holds
        history=[],
        legal=["c1-c5"],
        clock=clock_info((clock, clock), 0),
    )
    started = time.monotonic()
    with trio.fail_after(60):
        async with deaf:
            await deaf.start("kamisado", "single")
            await deaf.new_game(
                NewGame(
                    game="kamisado",
                    variant="single",
                    player=0,
                    players=["deaf", "other"],
                    position=START,
                    time_control="10+0.1",
                ),
                timeout=10,
            )
            asked = time.monotonic()
            with pytest.raises(EngineTimeout):
                await deaf.go(big, timeout=1.0)
            assert time.monotonic() - asked < 4
    assert time.monotonic() - started < 30


def test_each_bot_plays_on_its_own_time_control(bot: Path, tmp_path: Path) -> None:
    """A bot's ``tc`` overrides the tournament's for that bot alone: the slow bot with
    0.4 s for the game loses on time with either colour, the other, as slow but with
    60 s, never does; each game records both controls."""
    toml = tmp_path / "t.toml"
    toml.write_text(
        'name = "two-tc"\nvariant = "single"\ntc = "60+0"\ngames_per_pairing = 2\n'
        "concurrency = 1\n"
        f'[[bots]]\nname = "hurried"\ntc = "0.4+0"\n'
        f'command = ["{sys.executable}", "{bot}", "slow", "0.25"]\n'
        f'[[bots]]\nname = "leisurely"\n'
        f'command = ["{sys.executable}", "{bot}", "slow", "0.25"]\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "run", str(toml), "-q", "--no-report"]
        + ["--results", str(tmp_path / "results"), "--workers", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with Store.open_existing(tmp_path / "results" / "two-tc") as store:
        records = list(store.records())
    assert len(records) == 2
    for record in records:
        loser = record.players[record.faulty] if record.faulty is not None else None
        assert (record.reason, loser) == ("time", "hurried"), (record.reason, record.detail)
        assert set(record.time_control.split(" | ")) == {"0.4", "60"}, record.time_control


def _sandboxed_stderr(script: str, **box: object) -> str:
    """What a sandboxed ``bash -c script`` wrote to stderr (it exits: a failed start)."""

    async def run() -> str:
        sandbox = Sandbox(mode="bwrap", **box)  # type: ignore[arg-type]
        config = EngineConfig(name="probe", command=["/bin/bash", "-c", script], sandbox=sandbox)
        async with Engine(config) as probe:
            with pytest.raises(EngineError):
                await probe.start("kamisado", "single")
            return probe.stderr_tail()

    return trio.run(run)


@pytest.mark.parametrize("net", [True, False])
def test_only_a_bot_granted_the_network_reaches_a_socket_of_the_host(net: bool) -> None:
    """``sandbox_net``: with it the bot shares the arena's network (it reaches a socket
    listening on the host's loopback); without it, its own namespace holds nothing
    but its own loopback."""
    needs.sandbox()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        script = (
            f"if exec 3<>/dev/tcp/127.0.0.1/{port}; then echo reached >&2; "
            "else echo unreached >&2; fi; "
            "echo interfaces $(tail -n +3 /proc/net/dev | cut -d: -f1) >&2"
        )
        tail = _sandboxed_stderr(script, net=net)
    assert ("reached" if net else "unreached") in tail.split(), tail
    interfaces = next(line for line in tail.splitlines() if line.startswith("interfaces"))
    if not net:
        assert interfaces.split()[1:] == ["lo"], tail


def test_a_bot_writes_no_more_than_scratch_mb_to_its_tmp() -> None:
    """``[sandbox] scratch_mb``: the bot's own ``/tmp`` holds that much and no more."""
    needs.sandbox()
    script = (
        "head -c 1048576 /dev/zero > /tmp/small && echo small-written >&2; "
        "if head -c 3145728 /dev/zero > /tmp/big; then echo big-written >&2; "
        "else echo big-refused >&2; fi"
    )
    tail = _sandboxed_stderr(script, scratch_bytes=2 << 20)
    assert "small-written" in tail and "big-refused" in tail, tail
    assert "No space left on device" in tail, tail


async def test_a_bot_past_its_cpu_seconds_is_killed_and_charged_a_crash(bot: Path) -> None:
    """``[limits] cpu_seconds``: a bot that spins past it is killed by the kernel
    (SIGXCPU) long before its clock runs out, and the game says so."""
    spinner = engine(bot, "spin", limits=ResourceLimits(cpu_seconds=1))
    with trio.fail_after(60):
        record = await game([spinner, engine(bot, "normal")], tc="60+0")
    assert (record.reason, record.faulty) == ("crash", 0), record.detail  # type: ignore[attr-defined]
    assert "SIGXCPU" in record.detail, record.detail  # type: ignore[attr-defined]
