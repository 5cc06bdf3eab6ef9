"""The engine layer against REAL subprocesses: well-behaved and misbehaving bots.

Every bot is one small Python script (written to ``tmp_path``) whose behaviour
is chosen by its first argument. Each fault must surface as the right exception
within its deadline plus one second, measured here with ``time.monotonic``. What is
charged is tested exactly on the scripted transport under trio's mock clock
(``tests/scripted.py``; the referee's rules in ``test_referee_scripted.py``).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgspec
import pytest
import trio
from procs import assert_group_dies, group_alive
from scripted import honest, scripted, think

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig, ResourceLimits
from arena.engine.errors import EngineCrashed, EngineError, EngineProtocolError, EngineTimeout
from arena.engine.output import StderrTail
from arena.engine.sandbox import Sandbox
from arena.match.clock import Clock, TimeControl
from arena.match.wire import clock_info
from arena.protocol.messages import (
    Action,
    GameOver,
    Go,
    Identity,
    LineReader,
    NewGame,
    Ping,
    Pong,
    Ready,
)

START = "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -"
SLACK = 1.0  # every fault must be reported within its deadline plus this


@pytest.fixture
def bot_script() -> Path:
    """The misbehave-on-demand bot shared with the referee tests."""
    return Path(__file__).parent / "bad_bot.py"


def config(script: Path, mode: str, *extra: str, **kw) -> EngineConfig:
    defaults = dict(handshake_timeout=5.0, quit_timeout=0.5, term_timeout=0.3)
    defaults.update(kw)
    return EngineConfig(name=mode, command=[sys.executable, str(script), mode, *extra], **defaults)


def go_msg(legal=("c1-c5", "c1-c4")) -> Go:
    clock = Clock(TimeControl.parse("10+0.1"))
    return Go(
        player=0,
        position=START,
        observation={"board": START.split()[0]},
        history=[],
        legal=list(legal),
        clock=clock_info((clock, clock), 0),
    )


async def expect_fault(engine: Engine, exc_type, timeout: float, msg: Go | None = None):
    t0 = time.monotonic()
    with pytest.raises(exc_type) as info:
        await engine.go(msg or go_msg(), timeout=timeout)
    took = time.monotonic() - t0
    assert took < timeout + SLACK, f"{exc_type.__name__} took {took:.2f} s"
    assert engine.faulted is info.value
    assert not engine.running
    return info.value


# -- the happy path ----------------------------------------------------------


async def test_full_session_and_reuse_across_games(bot_script):
    async with Engine(config(bot_script, "normal")) as engine:
        ident = await engine.start("kamisado", "standard")
        assert isinstance(ident, Identity)
        assert (ident.name, ident.author, ident.games) == ("testbot", "tests", ["kamisado"])
        pgid = engine.pgid
        assert pgid == engine.pid and os.getpgid(engine.pid) == pgid
        for game in range(2):  # one process, two games
            ng = NewGame(
                game="kamisado",
                variant="standard",
                player=game % 2,
                players=["a", "b"],
                position=START,
                time_control="10+0.1",
            )
            assert isinstance((await engine.new_game(ng, timeout=2)).answer, Ready)
            reply = await engine.go(go_msg(), timeout=2)
            assert reply.answer == Action(id=reply.answer.id, action="c1-c5")
            assert [i.as_dict() for i in reply.infos] == [
                {"depth": 1, "score": 0.25, "pv": ["c1-c5"]}
            ]
            assert 0 <= reply.elapsed < 1 and reply.elapsed_ms == round(reply.elapsed * 1000)
            await engine.notify(GameOver(result="1-0", reason="home-row", winner=0))
        assert await engine.ping(timeout=2) < 1
        assert engine.pid == pgid  # never restarted
        t0 = time.monotonic()
        await engine.stop()
        assert time.monotonic() - t0 < 0.5  # a bot that obeys quit needs no signals
        assert engine.returncode == 0
        assert "game over: 1-0 home-row" in engine.stderr_tail()
        await assert_group_dies(pgid)


async def test_ids_are_echoed_and_increase(bot_script):
    async with Engine(config(bot_script, "normal")) as engine:
        await engine.start("kamisado", "standard")
        a = await engine.go(go_msg(), timeout=2)
        b = await engine.request(go_msg(), timeout=2)
        p = await engine.request(Ping(id=12345), timeout=2)  # the given id is replaced
        assert a.answer.id < b.answer.id < p.answer.id < 100


async def test_ping_answers_pong(bot_script):
    async with Engine(config(bot_script, "normal")) as engine:
        await engine.start("kamisado", "standard")
        reply = await engine.request(Ping(), timeout=2)
        assert isinstance(reply.answer, Pong)


async def test_env_is_scrubbed(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_SECRET", "leak")
    script = tmp_path / "envbot.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, os, sys
            line = sys.stdin.readline()
            msg = json.loads(line)
            print(json.dumps(sorted(os.environ)), file=sys.stderr, flush=True)
            print(json.dumps({"type": "identity", "id": msg["id"], "protocol": 1,
                              "name": "env", "games": ["kamisado"]}), flush=True)
            sys.stdin.readline()
            """
        )
    )
    cfg = EngineConfig(
        name="env", command=[sys.executable, str(script)], env={"BOT_LEVEL": "3"}, quit_timeout=1
    )
    async with Engine(cfg) as engine:
        await engine.start("kamisado", "standard")
        await engine.stop()
        names = set(eval(engine.stderr_tail().strip().splitlines()[-1]))
    assert "ARENA_SECRET" not in names and "BOT_LEVEL" in names
    # PWD: bwrap sets it to the bot's working directory inside the sandbox.
    assert names <= {"PATH", "HOME", "LANG", "BOT_LEVEL", "LC_CTYPE", "PWD"}


@pytest.mark.parametrize("mode", ["none", "auto"])
async def test_resource_limits_are_applied(tmp_path, mode):
    """Every rlimit, but the address space only where no cgroup counts the bot's
    memory as a whole (a JVM reserves far more than it uses: issue 34)."""
    tmp_path.chmod(0o755)  # a root arena's sandboxed bot runs as nobody
    script = tmp_path / "limits.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, resource, sys
            msg = json.loads(sys.stdin.readline())
            lim = [resource.getrlimit(r)[0] for r in
                   (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_FSIZE,
                    resource.RLIMIT_CORE)]
            print(json.dumps({"type": "identity", "id": msg["id"], "protocol": 1,
                              "name": "lim", "version": json.dumps(lim),
                              "games": ["kamisado"]}), flush=True)
            sys.stdin.readline()
            """
        )
    )
    limits = ResourceLimits(memory_bytes=2 << 30, cpu_seconds=100, file_size=1 << 20)
    cfg = EngineConfig(
        name="lim",
        command=[sys.executable, str(script)],
        limits=limits,
        sandbox=Sandbox(mode=mode),
    )
    async with Engine(cfg) as engine:
        ident = await engine.start("kamisado", "standard")
        bound = engine.sandbox_bound
    address_space = resource.RLIM_INFINITY if bound == "cgroup" else 2 << 30
    assert eval(ident.version) == [address_space, 100, 1 << 20, 0]


# -- faults at start ---------------------------------------------------------


async def test_bot_that_exits_at_start_is_a_crash(bot_script):
    async with Engine(config(bot_script, "exit_at_start", handshake_timeout=2)) as engine:
        t0 = time.monotonic()
        with pytest.raises(EngineCrashed) as info:
            await engine.start("kamisado", "standard")
        assert time.monotonic() - t0 < 2 + SLACK
        assert info.value.returncode == 3 and info.value.signal is None
        assert "exited with code 3" in str(info.value)
        assert info.value.reason == "crash"


async def test_missing_executable_is_a_crash(tmp_path):
    cfg = EngineConfig(name="ghost", command=[str(tmp_path / "no-such-bot")])
    async with Engine(cfg) as engine:
        with pytest.raises(EngineCrashed, match="cannot start"):
            await engine.start("kamisado", "standard")


async def test_wrong_protocol_version_and_unsupported_game(bot_script):
    for mode, fragment in [("bad_version", "protocol version 2"), ("unsupported", "support")]:
        async with Engine(config(bot_script, mode)) as engine:
            with pytest.raises(EngineProtocolError, match=fragment):
                await engine.start("kamisado", "standard")
            assert not engine.running


# -- faults during a game ----------------------------------------------------


async def test_bot_that_dies_mid_game_reports_exit_code(bot_script):
    async with Engine(config(bot_script, "exit")) as engine:
        await engine.start("kamisado", "standard")
        err = await expect_fault(engine, EngineCrashed, timeout=2)
        assert err.returncode == 7 and "exited with code 7" in str(err)


async def test_bot_killed_by_a_signal_reports_the_signal(bot_script):
    async with Engine(config(bot_script, "abort")) as engine:
        await engine.start("kamisado", "standard")
        err = await expect_fault(engine, EngineCrashed, timeout=2)
        assert err.signal == "SIGABRT" and "killed by SIGABRT" in str(err)


async def test_bot_that_never_answers_times_out(bot_script):
    async with Engine(config(bot_script, "never_answer")) as engine:
        await engine.start("kamisado", "standard")
        pgid = engine.pgid
        err = await expect_fault(engine, EngineTimeout, timeout=0.5)
        assert err.reason == "time" and err.elapsed == pytest.approx(0.5, abs=0.1)
        await assert_group_dies(pgid)


async def test_late_answer_is_a_timeout_and_engine_restarts(bot_script):
    async with Engine(config(bot_script, "sleep_each", "1.0")) as engine:
        await engine.start("kamisado", "standard")
        first_pid = engine.pid
        await expect_fault(engine, EngineTimeout, timeout=0.5)
        await engine.restart("kamisado", "standard")
        assert engine.running and engine.faulted is None and engine.pid != first_pid
        reply = await engine.go(go_msg(), timeout=3)  # with time enough it answers
        assert reply.elapsed == pytest.approx(1.0, abs=0.2)
        assert engine.starts == 2


async def test_non_json_output_is_a_protocol_error(bot_script):
    async with Engine(config(bot_script, "garbage")) as engine:
        await engine.start("kamisado", "standard")
        err = await expect_fault(engine, EngineProtocolError, timeout=2)
        assert "malformed" in str(err) and "bestmove" in str(err)
        assert err.reason == "protocol"


async def test_ten_megabyte_line_is_rejected_at_the_limit(bot_script):
    cfg = config(bot_script, "long_line", max_line=1 << 20)
    async with Engine(cfg) as engine:
        await engine.start("kamisado", "standard")
        err = await expect_fault(engine, EngineProtocolError, timeout=2)
        assert "longer than 1048576 bytes" in str(err)


async def test_stderr_flood_is_bounded_and_does_not_block(bot_script):
    """~5 MB of stderr: the bot is not blocked, and only the tail is kept."""
    cfg = config(bot_script, "stderr_flood", stderr_lines=64, stderr_bytes=8192)
    async with Engine(cfg) as engine:
        await engine.start("kamisado", "standard")
        reply = await engine.go(go_msg(), timeout=10)
        assert isinstance(reply.answer, Action)
        # stderr is another pipe: its last chunk may still be in flight when the
        # answer arrives; stop() waits (bounded) for the drain to reach EOF.
        await engine.stop()
        tail = engine.stderr_tail()
        # The tail's bound, and the head's (the first lines, kept besides the tail).
        assert len(tail.encode()) <= 8192 + cfg.stderr_head_bytes + 100
        assert tail.count("\n") <= 64 + cfg.stderr_head_lines + 1
        assert "debug line 99999 " in tail and "earlier lines dropped" in tail


async def test_wrong_message_type_is_a_protocol_error(bot_script):
    async with Engine(config(bot_script, "wrong_type")) as engine:
        await engine.start("kamisado", "standard")
        err = await expect_fault(engine, EngineProtocolError, timeout=2)
        assert "answered go with pong, expected action" in str(err)


async def test_wrong_id_is_a_protocol_error(bot_script):
    async with Engine(config(bot_script, "wrong_id")) as engine:
        await engine.start("kamisado", "standard")
        err = await expect_fault(engine, EngineProtocolError, timeout=2)
        assert "expected id" in str(err)


async def test_closed_stdout_while_running_is_a_protocol_error(bot_script):
    async with Engine(config(bot_script, "close_stdout")) as engine:
        await engine.start("kamisado", "standard")
        pgid = engine.pgid
        err = await expect_fault(engine, EngineProtocolError, timeout=2)
        assert "closed its stdout" in str(err)
        await assert_group_dies(pgid)


async def test_bot_that_stops_reading_its_input_times_out_on_the_write(bot_script):
    """The request cannot even be written (a line longer than the pipe holds, to a bot
    that reads no more): a time fault of its own, at the deadline."""
    async with Engine(config(bot_script, "stop_reading")) as engine:
        await engine.start("kamisado", "standard")
        await engine.go(go_msg(), timeout=2)
        long_go = msgspec.structs.replace(go_msg(), history=["c1-c5"] * 50_000)  # ~400 KB
        err = await expect_fault(engine, EngineTimeout, timeout=0.5, msg=long_go)
        assert "did not read its input for 0.500 s" in str(err)


async def test_crash_is_seen_although_a_child_holds_stdout_and_group_is_killed(bot_script):
    """The parent dies; its SIGTERM-ignoring helper keeps stdout open (no EOF).

    The crash is still reported promptly (exit watch), and after the kill no
    process of the group remains.
    """
    async with Engine(config(bot_script, "child_ignores_term")) as engine:
        await engine.start("kamisado", "standard")
        pgid = engine.pgid
        err = await expect_fault(engine, EngineCrashed, timeout=2)
        assert err.returncode == 5
        await assert_group_dies(pgid)


async def test_bot_ignoring_quit_and_sigterm_is_killed(bot_script):
    # Unconfined, to see the escalation itself: in the sandbox SIGTERM already
    # ends bwrap, and with it the bot, whatever the bot does with the signal.
    cfg = config(
        bot_script, "ignore_quit", quit_timeout=0.5, term_timeout=0.3, sandbox=Sandbox(mode="none")
    )
    async with Engine(cfg) as engine:
        await engine.start("kamisado", "standard")
        pgid = engine.pgid
        t0 = time.monotonic()
        await engine.stop()
        assert time.monotonic() - t0 < 0.5 + 0.3 + SLACK
        assert engine.returncode == -9  # neither quit nor SIGTERM worked
        await assert_group_dies(pgid)


async def test_context_manager_kills_group_on_cancellation(bot_script):
    """Cancelled mid-request, leaving the block still kills the helper too."""
    pgid = None
    t0 = time.monotonic()
    with trio.move_on_after(1.0):
        async with Engine(config(bot_script, "child_ignores_term")) as engine:
            await engine.start("kamisado", "standard")
            pgid = engine.pgid
            await engine.ping(timeout=2)
            await trio.sleep_forever()
    assert pgid is not None
    assert time.monotonic() - t0 < 1.0 + SLACK
    await assert_group_dies(pgid)


async def test_context_manager_kills_on_exception_and_reraises_it(bot_script):
    pgid = None
    with pytest.raises(KeyError):
        async with Engine(config(bot_script, "ignore_quit")) as engine:
            await engine.start("kamisado", "standard")
            pgid = engine.pgid
            raise KeyError("referee bug")
    await assert_group_dies(pgid)


async def test_request_after_fault_requires_restart(bot_script):
    async with Engine(config(bot_script, "exit")) as engine:
        await engine.start("kamisado", "standard")
        with pytest.raises(EngineError):
            await engine.go(go_msg(), timeout=2)
        with pytest.raises(RuntimeError, match="restart"):
            await engine.go(go_msg(), timeout=2)


# -- fair timing -------------------------------------------------------------


async def test_think_time_is_charged_exactly(autojump_clock):
    """On the scripted transport under the mock clock: a bot thinking 0.25 s is
    charged 0.25 s, to the bit, each time (the clock starts just before the write)."""
    async with scripted(honest(think(0.25, 0.5, 0.125))) as (engine,):
        await engine.start("kamisado", "standard")
        charged = [(await engine.go(go_msg(), timeout=2)).elapsed for _ in range(3)]
    assert charged == [0.25, 0.5, 0.125]


async def test_answer_inside_margin_is_not_flagged_end_to_end(autojump_clock):
    """Remaining 0.25 s, margin 0.25 s, bot thinks 0.375 s: late but tolerated."""
    clock = Clock(TimeControl.parse("0.25 margin=0.25"))
    async with scripted(honest(think(0.375))) as (engine,):
        await engine.start("kamisado", "standard")
        reply = await engine.go(go_msg(), timeout=clock.budget(0))
    clock.start(0, reply.sent_at)
    assert clock.stop(0, reply.received_at) == (375, False)
    assert clock.remaining_ms(0) == 0


# -- stderr tail unit ---------------------------------------------------------


def test_stderr_tail_bounds():
    tail = StderrTail(max_lines=3, max_bytes=20)
    tail.feed(b"one\ntwo\nthr")
    tail.feed(b"ee\nfour\n")
    assert tail.text() == "[... 1 earlier lines dropped]\ntwo\nthree\nfour"
    tail.feed(b"z" * 100)  # an endless line keeps its start and its end
    assert tail.text().endswith("z" * 16 + " [... 68 bytes cut] " + "z" * 16)
    tail.clear()
    assert tail.text() == ""


# -- the arena dies ------------------------------------------------------------

ARENA_THAT_DIES = r"""
import sys, trio
from arena.engine.bot import Engine
from arena.engine.config import EngineConfig

async def main():
    cfg = EngineConfig(name="orphan", command=[sys.executable, sys.argv[1], "ignore_quit"])
    async with Engine(cfg) as engine:
        await engine.start("kamisado", "standard")
        print(engine.pid, flush=True)
        await trio.sleep_forever()

trio.run(main)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
async def test_bot_dies_when_the_arena_is_sigkilled(bot_script, tmp_path):
    """SIGKILL gives the arena no chance to clean up: the kernel must kill the bot.

    The bot ignores the end of its stdin and SIGTERM, so only PR_SET_PDEATHSIG
    can end it.
    """
    arena_script = tmp_path / "arena_that_dies.py"
    arena_script.write_text(ARENA_THAT_DIES)
    arena = await trio.lowlevel.open_process(
        [sys.executable, str(arena_script), str(bot_script)], stdout=subprocess.PIPE
    )
    try:
        with trio.fail_after(10):
            line = await LineReader(arena.stdout).receive_line()
        bot_pid = int(line)
        assert group_alive(bot_pid)  # the bot leads its own group
    finally:
        arena.kill()
        await arena.wait()
        await arena.stdout.aclose()
    assert arena.returncode == -signal.SIGKILL
    await assert_group_dies(bot_pid)


ARENA_WITH_IDLE_THREADS = r"""
import sys, trio
import trio._core._thread_cache as thread_cache
thread_cache.IDLE_TIMEOUT = 0.1  # trio's idle worker threads exit after this (10 s normally)
from arena.engine.bot import Engine
from arena.engine.config import EngineConfig

async def main():
    cfg = EngineConfig(name="idle", command=[sys.executable, sys.argv[1], "normal"])
    async with Engine(cfg) as engine:
        await engine.start("kamisado", "standard")
        # Idleness is the scenario here: trio's worker threads time out meanwhile.
        await trio.to_thread.run_sync(lambda: None)
        await trio.sleep(1.0)
        print("alive" if engine.running else f"dead: {engine.returncode}", flush=True)
        await engine.ping(timeout=2)
        print("answers", flush=True)

trio.run(main)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
async def test_bot_outlives_the_thread_pool_worker_that_spawned_it(bot_script, tmp_path):
    """PR_SET_PDEATHSIG fires when the *thread* that forked exits. trio forks in
    an idle-expiring worker thread, so the arena forks from the thread running
    trio instead (arena/engine/process.py), or every bot would die after 10 s of idleness."""
    script = tmp_path / "idle_arena.py"
    script.write_text(ARENA_WITH_IDLE_THREADS)
    with trio.fail_after(15):
        result = await trio.run_process(
            [sys.executable, str(script), str(bot_script)], capture_stdout=True, check=False
        )
    assert result.stdout.decode().split() == ["alive", "answers"], result
