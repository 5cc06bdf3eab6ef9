"""Bounded memory per bot: ``info`` floods, huge stderr lines, per-game tails.

Each test drives a real bot process (``tests/bad_bot.py``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.output import StderrTail
from arena.games import get_game
from arena.match.clock import Clock, TimeControl
from arena.match.referee import play_game
from arena.match.wire import clock_info
from arena.protocol.messages import Action, Go

HERE = Path(__file__).resolve().parent
BAD_BOT = [sys.executable, str(HERE / "bad_bot.py")]

# Runs the real CLI in-process and reports that process's own peak RSS, so the
# figure is the arena's alone (not the bot's, not pytest's other children). The
# peak is VmHWM of the process's own memory map: getrusage's ru_maxrss would not
# do, since Linux carries the high-water mark across fork and exec, so it would
# report pytest's own size (hundreds of MB late in the suite).
PEAK_RSS = """
import sys
from arena.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    with open("/proc/self/status") as status:
        hwm = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print("maxrss_kb", hwm, file=sys.stderr)
"""


def bot(mode: str, *extra: str, **kw: object) -> EngineConfig:
    return EngineConfig(name=mode, command=[*BAD_BOT, mode, *extra], quit_timeout=0.5, **kw)


def test_info_flood_of_1500_lines_of_1_mb_keeps_the_arena_under_150_mb() -> None:
    flooder = " ".join([*BAD_BOT, "info_flood", "1500"])
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK_RSS,
            "play",
            flooder,
            "random",
            "--seed",
            "1",
            "-q",
            "--tc",
            "120+1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("result "), result.stdout
    assert " protocol" not in result.stdout and " time" not in result.stdout
    peak_mb = int(result.stderr.split("maxrss_kb")[1].split()[0]) / 1024
    assert peak_mb < 150, f"arena peak RSS {peak_mb:.0f} MB"


async def test_only_the_latest_infos_are_kept_and_the_rest_counted() -> None:
    game = get_game("kamisado")
    tc = TimeControl.parse("60+1")
    configs = [bot("info_flood", "40", info_lines=3, info_bytes=1 << 22), bot("normal")]
    async with Engine(configs[0]) as a, Engine(configs[1]) as b:
        record = await play_game(game, game.new_state("single"), [a, b], [tc, tc], variant="single")
    first = record.actions[0]
    # 40 floods and the usual last info: the latest 3 kept, 38 dropped and counted.
    assert first.info == {"depth": 1, "score": 0.25, "pv": [first.action], "dropped": 38}
    second_of_a = next(r for r in record.actions[1:] if r.player == 0 and not r.forced)
    assert second_of_a.info is not None and "dropped" not in second_of_a.info


async def test_a_64_kib_stderr_line_is_cut_and_keeps_its_neighbours() -> None:
    async with Engine(bot("stderr_long_line")) as engine:
        await engine.start("kamisado", "standard")
        state = get_game("kamisado").new_state("single")
        ten = Clock(TimeControl.parse("10"))
        clock = clock_info((ten, ten), 0)
        go = Go(
            player=0,
            position=state.observation_text(0),
            observation={},
            history=[],
            legal=state.legal_actions(),
            clock=clock,
        )
        reply = await engine.go(go, timeout=10)
        assert isinstance(reply.answer, Action)
        tail = engine.stderr_tail()
    lines = tail.splitlines()
    assert lines[0] == "before the long line"
    assert lines[-1] == "after it"
    assert "[... " in lines[1] and " bytes cut]" in lines[1]
    assert len(tail.encode()) <= 8192


def test_stderr_tail_unit_bounds() -> None:
    tail = StderrTail(max_lines=3, max_bytes=1024)
    tail.feed(b"one\ntwo\nthr")
    tail.feed(b"ee\nfour\n")
    assert tail.text() == "[... 1 earlier lines dropped]\ntwo\nthree\nfour"
    tail.feed(b"z" * 100_000)  # a line still being written: bounded too
    assert tail.text().endswith("z" * 64)
    assert len(tail.text()) < 1024
    tail.feed(b"\n" * 10_000)
    assert tail.text().count("\n") == 3
    tail.clear()
    assert tail.text() == ""


async def test_each_game_tail_starts_empty() -> None:
    """bad_bot writes 'game over: ...' to stderr on gameover; that line belongs
    to the game that ended, not to the next game's record."""
    game = get_game("kamisado")
    tc = TimeControl.parse("60+1")
    async with Engine(bot("normal")) as a, Engine(bot("normal")) as b:
        records = [
            await play_game(game, game.new_state("single"), [a, b], [tc, tc], variant="single")
            for _ in range(3)
        ]
        assert a.starts == b.starts == 1
        await a.stop()  # drains stderr to its end
        assert "game over" in a.stderr_tail()  # the lines were written, and read
    for record in records:
        assert record.stderr_tails == ["", ""], record.stderr_tails
