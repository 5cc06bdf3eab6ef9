"""The bubblewrap sandbox, tried as a hostile bot author would (issue 11).

Every escape is a real bot process (``tests/escape_bot.py``) started by a real
``arena run`` or ``arena play`` in a subprocess, so that the arena's own
environment (with a secret in it), its results folder and its home are the
ones a bot would attack. Each bot reports its attempt on stderr, which the game
record keeps; the games themselves must finish normally.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import needs
import pytest
from procs import live_with, wait_none_with

from arena.engine.sandbox import Sandbox, wrap
from arena.match.record import GameRecord
from arena.storage.store import Store

HERE = Path(__file__).parent
ESCAPE = HERE / "escape_bot.py"
EXAMPLES = HERE.parent / "bots" / "examples"
ARENA = [sys.executable, "-m", "arena.cli"]


@pytest.fixture
def working_sandbox() -> None:
    needs.sandbox()


needs_bwrap = pytest.mark.usefixtures("working_sandbox")


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 60):
    return subprocess.run(
        [*ARENA, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def escape(*args: str) -> list[str]:
    return [sys.executable, str(ESCAPE), *args]


def kill_all(marker: str) -> None:
    for pid in live_with(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# --------------------------------------------------------------------------- one hostile tournament


class Escapes(msgspec.Struct):
    base: Path
    results: Path
    home: Path
    tmp_file: Path
    marker: str
    secret: str
    server: socket.socket
    output: str
    tails: dict[str, list[str]]
    """bot name -> the stderr tails of its games."""
    records: list[GameRecord]


@pytest.fixture(scope="module")
def escapes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Escapes]:
    needs.sandbox()
    base = tmp_path_factory.mktemp("escapes")
    results, home = base / "results", base / "home"
    home.mkdir()
    tag = uuid.uuid4().hex[:12]
    marker, secret = f"escape-marker-{tag}", f"arena-secret-{tag}"
    tmp_file = Path("/tmp") / f"escape-{tag}.txt"
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    own = results / "escapes"
    bots = {
        "writer": escape(
            "write", f"{own}/games.sqlite", f"{own}/escape.txt", f"{home}/escape.txt", str(tmp_file)
        ),
        "connector": escape("connect", str(port)),
        "snoop": escape("environ", secret),
        "spawner": escape("setsid", marker),
        "random": [sys.executable, str(HERE.parent / "bots" / "random_bot.py"), "--seed", "1"],
    }
    lines = ['name = "escapes"', 'variant = "single"', 'tc = "10+0.1"', "concurrency = 1"]
    for name, command in bots.items():
        lines += [
            "[[bots]]",
            f'name = "{name}"',
            f"command = {msgspec.json.encode(command).decode()}",
        ]
    path = base / "escapes.toml"
    path.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "HOME": str(home), "ARENA_SECRET": secret}
    try:
        done = arena(
            "run",
            str(path),
            "--results",
            str(results),
            "--workers",
            "1",
            "-q",
            "--no-report",
            "--sandbox",
            "bwrap",
            env=env,
        )
        assert done.returncode == 0, done.stderr
        with Store.open_existing(own) as store:
            records = list(store.records())
        tails: dict[str, list[str]] = {name: [] for name in bots}
        for record in records:
            for name, tail in zip(record.players, record.stderr_tails, strict=True):
                tails[name].append(tail)
        yield Escapes(
            base,
            results,
            home,
            tmp_file,
            marker,
            secret,
            server,
            done.stdout + done.stderr,
            tails,
            records,
        )
    finally:
        server.close()
        kill_all(marker)
        tmp_file.unlink(missing_ok=True)


def attempts(escapes: Escapes, bot: str) -> list[str]:
    return [
        line
        for tail in escapes.tails[bot]
        for line in tail.splitlines()
        if line.startswith("ESCAPE")
    ]


def test_every_game_finishes_normally_and_records_its_sandbox(escapes: Escapes) -> None:
    assert len(escapes.records) == 20  # 10 pairings, 2 games each: nothing lost
    assert {r.reason for r in escapes.records} <= {"home-row", "deadlock"}, escapes.output
    for record in escapes.records:
        assert [s.mode for s in record.sandbox] == ["bwrap", "bwrap"]


def test_writes_reach_neither_results_nor_home_nor_the_real_tmp(escapes: Escapes) -> None:
    lines = attempts(escapes, "writer")
    own = escapes.results / "escapes"
    for path in (own / "games.sqlite", own / "escape.txt", escapes.home / "escape.txt"):
        assert any(f"write {path} failed" in line for line in lines), lines
    assert not (own / "escape.txt").exists() and not (escapes.home / "escape.txt").exists()
    assert b"escaped" not in (own / "games.sqlite").read_bytes()
    # /tmp is the bot's private scratch: its write lands there, not in the real /tmp.
    assert any(f"write {escapes.tmp_file} succeeded" in line for line in lines), lines
    assert not escapes.tmp_file.exists()


def test_a_loopback_server_cannot_be_reached(escapes: Escapes) -> None:
    lines = attempts(escapes, "connector")
    assert lines and all("failed" in line for line in lines), lines
    escapes.server.setblocking(False)
    with pytest.raises(BlockingIOError):  # no connection ever arrived
        escapes.server.accept()


def test_the_arenas_environment_is_out_of_reach(escapes: Escapes) -> None:
    lines = attempts(escapes, "snoop")
    assert any(line.startswith("ESCAPE environ") and "failed" in line for line in lines), lines
    visible = [int(line.rsplit(" ", 1)[1]) for line in lines if "procs visible" in line]
    assert visible and visible[0] <= 3, lines  # bwrap's init and the bot itself


def test_a_setsid_grandchild_ignoring_sigterm_does_not_outlive_the_arena_run(
    escapes: Escapes,
) -> None:
    assert any("setsid" in line for line in attempts(escapes, "spawner"))
    wait_none_with(f"{escapes.marker}-orphan", limit=5)


@needs_bwrap
def test_a_setsid_grandchild_ignoring_sigterm_dies_with_its_game(tmp_path: Path) -> None:
    """Not with the arena: the arena plays on after the game.

    The spawner never answers once its grandchild runs, so each of its games
    ends on time after a second and the next one starts. The first game's
    grandchild must be gone before the next game's grandchild appears (a
    grandchild kept to the arena's end dies with all the others, and none
    appears after it). Then the arena is killed in mid-game, and nothing of
    its bots survives that either.
    """
    marker = f"escape-marker-{uuid.uuid4().hex[:12]}"
    spawner = escape("setsid", marker, "hang")
    random_bot = [sys.executable, str(HERE.parent / "bots" / "random_bot.py"), "--seed", "1"]
    toml = tmp_path / "t.toml"
    toml.write_text(
        'name = "orphans"\nvariant = "single"\ntc = "1+0"\ngames_per_pairing = 4\n'
        "concurrency = 1\n"
        f'[[bots]]\nname = "spawner"\ncommand = {msgspec.json.encode(spawner).decode()}\n'
        f'[[bots]]\nname = "random"\ncommand = {msgspec.json.encode(random_bot).decode()}\n'
    )
    results = tmp_path / "results"
    command = ["run", str(toml), "--results", str(results), "-q", "--no-report"]
    arena_proc = subprocess.Popen(
        [*ARENA, *command, "--workers", "1", "--sandbox", "bwrap"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    orphan = f"{marker}-orphan"
    try:
        deadline = time.monotonic() + 30
        while not (first := set(live_with(orphan))):
            assert arena_proc.poll() is None, "the arena ended before any grandchild started"
            assert time.monotonic() < deadline, "no grandchild appeared"
            time.sleep(0.02)
        deadline = time.monotonic() + 20
        while first & set(live_with(orphan)):
            assert arena_proc.poll() is None, "the arena ended first: its game's end is not seen"
            assert time.monotonic() < deadline, f"grandchildren {first} outlived their game"
            time.sleep(0.02)
        deadline = time.monotonic() + 20
        while not set(live_with(orphan)) - first:  # the next game, by the same spawner
            assert arena_proc.poll() is None, "no game came after: its end is not told apart"
            assert time.monotonic() < deadline, "no grandchild appeared in the next game"
            time.sleep(0.02)
        arena_proc.kill()  # in mid-game
        arena_proc.wait(timeout=10)
        wait_none_with(orphan, limit=5)
        wait_none_with(marker, limit=5)  # the bots too
    finally:
        arena_proc.kill()
        arena_proc.wait(timeout=10)
        kill_all(marker)


@needs_bwrap
def test_a_setsid_grandchild_dies_when_the_arena_is_killed(tmp_path: Path) -> None:
    marker = f"escape-marker-{uuid.uuid4().hex[:12]}"
    bot = " ".join(escape("setsid", marker, "hang"))
    arena_proc = subprocess.Popen(
        [*ARENA, "play", bot, "random", "--tc", "60+0", "-q", "--sandbox", "bwrap"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not live_with(f"{marker}-orphan"):  # not the bot: its own command has the marker
            assert arena_proc.poll() is None, "the game ended before the grandchild started"
            assert time.monotonic() < deadline, "no grandchild appeared"
            time.sleep(0.02)
        arena_proc.kill()
        arena_proc.wait(timeout=10)
        wait_none_with(f"{marker}-orphan", limit=5)
        wait_none_with(marker, limit=5)  # the bot too
    finally:
        arena_proc.kill()
        arena_proc.wait(timeout=10)
        kill_all(marker)


@needs_bwrap
def test_a_killed_arena_leaves_no_process_of_a_bwrap_killed_while_starting(
    tmp_path: Path,
) -> None:
    """bwrap killed between its ``clone`` and its child's set-up leaves that child
    waiting forever, outside the sandbox and with no parent-death signal
    (bubblewrap issue #633); an arena SIGKILLed while a bot starts did leave one
    (seen in CI). The race itself is a matter of microseconds, so a bwrap stand-in
    leaves such a process behind on purpose: a ``sleep`` in the bot's process
    group that nothing but its group's death ends. The arena is killed in
    mid-game, and the sleep must go with it."""
    real = shutil.which("bwrap")
    assert real is not None
    draw = uuid.uuid4().int
    nap = f"{100_000 + draw % 800_000}.{draw % 10**9:09d}"  # seconds, and a unique word
    folder = tmp_path / "bin"
    folder.mkdir()
    stand_in = folder / "bwrap"
    stand_in.write_text(
        f'#!/bin/sh\ncase "$*" in *bad_bot.py*) sleep {nap} & ;; esac\nexec {real} "$@"\n'
    )
    stand_in.chmod(0o755)
    bot = f"{sys.executable} {HERE / 'bad_bot.py'} sleep_each 600"
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    arena_proc = subprocess.Popen(
        [*ARENA, "play", bot, "random", "--tc", "600+0", "-q", "--sandbox", "bwrap"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    left = nap  # the sleep's command line (its words are NUL-separated)
    try:
        deadline = time.monotonic() + 30
        while not live_with(left):
            assert arena_proc.poll() is None, "the arena ended before the bot started"
            assert time.monotonic() < deadline, "the stand-in never ran for the bot"
            time.sleep(0.02)
        arena_proc.kill()
        arena_proc.wait(timeout=10)
        wait_none_with(left, limit=5)
        wait_none_with(str(HERE / "bad_bot.py"), limit=5)  # the bot too
    finally:
        arena_proc.kill()
        arena_proc.wait(timeout=10)
        kill_all(left)


# --------------------------------------------------------------------------- limits under play


def test_unbounded_allocation_under_play_is_a_crash_for_memory() -> None:
    done = arena("play", " ".join(escape("alloc")), "random", "--tc", "5+0.1", "-q")
    assert done.returncode == 0, done.stderr
    result = done.stdout.strip().splitlines()[-1]
    assert result.startswith("result 0-1 crash"), done.stdout
    assert "out of memory: limit 2048 MB" in result, result


# --------------------------------------------------------------------------- modes


def test_sandbox_bwrap_without_bwrap_fails_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no bwrap (nor anything else) on it
    done = arena("play", "random", "random", "-q", "--sandbox", "bwrap", env=env)
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert "bwrap is not installed" in done.stderr and "apt-get install bubblewrap" in done.stderr


def test_sandbox_auto_without_bwrap_warns_once_and_plays(tmp_path: Path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}
    done = arena("play", "random", "random", "-q", "--seed", "1", env=env)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "unconfined" in line]
    assert len(warnings) == 1 and "apt-get install bubblewrap" in warnings[0], done.stderr
    assert done.stdout.startswith("result ")


def test_old_records_without_a_sandbox_field_still_decode() -> None:
    record = GameRecord(
        game="kamisado",
        variant="single",
        players=["a", "b"],
        opening="x",
        actions=[],
        score=1.0,
        reason="home-row",
    )
    raw = msgspec.json.encode(record)
    old = msgspec.json.decode(raw.replace(b',"sandbox":[]', b""), type=GameRecord)
    assert b"sandbox" not in raw.replace(b',"sandbox":[]', b"") and old.sandbox == []


@needs_bwrap
def test_grants_are_visible_inside_and_recorded(tmp_path: Path) -> None:
    """``sandbox_rw`` is writable, ``sandbox_ro`` readable only, and both are recorded."""
    ro, rw = tmp_path / "ro", tmp_path / "rw"
    ro.mkdir(), rw.mkdir()
    (ro / "book.txt").write_text("opening book")
    argv = wrap(
        Sandbox(mode="bwrap", ro=[str(ro)], rw=[str(rw)]),
        ["/bin/sh", "-c", f"cat {ro}/book.txt > {rw}/copy; touch {ro}/x"],
        "/",
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    assert (rw / "copy").read_text() == "opening book"
    assert not (ro / "x").exists() and "Read-only" in done.stderr


# The engine starts a bot that shows its signal dispositions and mask on stderr and
# exits; its parent (the engine's process) ignores SIGINT and SIGQUIT and blocks
# SIGUSR1 and SIGTERM, as an arena started in the background (``cmd &``, ``nohup``,
# a job runner) or by such a parent does, whatever started this test.
SIGNALS_SCRIPT = """
import sys, trio
from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.errors import EngineError
from arena.engine.sandbox import Sandbox
with open("/proc/self/status") as status:
    print("".join("parent " + line for line in status if line.startswith(("SigIgn", "SigBlk"))))
show = "exec grep -E '^Sig(Ign|Blk):' /proc/self/status >&2"
async def main():
    sandbox = Sandbox(mode=sys.argv[1])
    config = EngineConfig(name="sig", command=["/bin/sh", "-c", show], sandbox=sandbox)
    async with Engine(config) as engine:
        try:
            await engine.start("kamisado", "standard")
        except EngineError:
            pass
        print(engine.stderr_tail())
trio.run(main)
"""
INHERITED_IGNORED = {signal.SIGINT, signal.SIGQUIT}
INHERITED_BLOCKED = {signal.SIGUSR1, signal.SIGTERM}


def _from_a_background_parent() -> None:
    for number in INHERITED_IGNORED:
        signal.signal(number, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, INHERITED_BLOCKED)


def _signal_masks(mode: str) -> dict[str, int]:
    """``SigIgn``/``SigBlk`` of the engine's process ("parent ...") and of its bot."""
    done = subprocess.run(
        [sys.executable, "-c", SIGNALS_SCRIPT, mode],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_from_a_background_parent,
    )
    assert done.returncode == 0, done.stderr
    # The bot's stderr tail shows a tab as \\x09.
    found = re.findall(r"(parent )?(SigIgn|SigBlk):(?:\s|\\x09)*([0-9a-f]{16})", done.stdout)
    masks = {parent + name: int(value, 16) for parent, name, value in found}
    assert set(masks) == {"parent SigIgn", "parent SigBlk", "SigIgn", "SigBlk"}, done.stdout
    return masks


def _bits(numbers: set[signal.Signals]) -> int:
    return sum(1 << (n - 1) for n in numbers)


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_bot_starts_with_the_default_signal_actions(mode: str) -> None:
    """Ignored signals and the signal mask survive ``exec``: the engine gives its bot
    default actions and an empty mask (sandboxed, through the wrapper shell and
    bwrap too), and in the sandbox the reaper beside bwrap (``_WATCHED``) runs in
    the background, not bwrap (a shell starts a background command with SIGINT
    and SIGQUIT ignored)."""
    if mode == "bwrap":
        needs.sandbox()
    masks = _signal_masks(mode)
    # The engine's own process had them, so the test shows what the bot was spared.
    assert masks["parent SigIgn"] & _bits(INHERITED_IGNORED) == _bits(INHERITED_IGNORED)
    assert masks["parent SigBlk"] & _bits(INHERITED_BLOCKED) == _bits(INHERITED_BLOCKED)
    assert masks["SigIgn"] == 0, hex(masks["SigIgn"])
    assert masks["SigBlk"] == 0, hex(masks["SigBlk"])


# --------------------------------------------------------------------------- same results


def _tournament(base: Path, mode: str, bots: dict[str, list[str]]) -> dict[str, tuple]:
    lines = [
        'name = "same"',
        'variant = "standard"',
        'tc = "20+0.5"',
        "concurrency = 1",
        "games_per_pairing = 2",
    ]
    for name, command in bots.items():
        lines += [
            "[[bots]]",
            f'name = "{name}"',
            f"command = {msgspec.json.encode(command).decode()}",
        ]
    path = base / f"{mode}.toml"
    path.write_text("\n".join(lines) + "\n")
    results = base / f"results-{mode}"
    done = arena(
        "run",
        str(path),
        "--results",
        str(results),
        "--workers",
        "1",
        "-q",
        "--no-report",
        "--sandbox",
        mode,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with Store.open_existing(results / "same") as store:
        return {
            key: (
                r.players,
                [a.action for a in r.actions],
                r.score,
                r.reason,
                r.detail,
                [s.mode for s in r.sandbox],
            )
            for key, r in store.items()
        }


@needs_bwrap
def test_sandbox_on_and_off_give_the_same_games(tmp_path: Path) -> None:
    bots = {
        "random": [sys.executable, str(HERE.parent / "bots" / "random_bot.py"), "--seed", "3"],
        "greedy": [sys.executable, str(HERE.parent / "bots" / "greedy_bot.py"), "--seed", "4"],
    }
    node = needs.if_present(needs.node)
    if node is not None:
        bots["js"] = [node, str(EXAMPLES / "js" / "kamisado_bot.js"), "--seed", "5"]
    cc = needs.if_present(needs.c_compiler)
    if cc is not None:
        exe = tmp_path / "cbot"
        source = EXAMPLES / "c" / "kamisado_bot.c"
        subprocess.run([cc, "-std=c99", "-O2", "-o", str(exe), str(source)], check=True)
        bots["c"] = [str(exe), "--seed", "6"]
    on = _tournament(tmp_path, "bwrap", bots)
    off = _tournament(tmp_path, "none", bots)
    assert len(on) == len(off) == len(bots) * (len(bots) - 1)
    assert {k: v[:5] for k, v in on.items()} == {k: v[:5] for k, v in off.items()}
    assert {m for v in on.values() for m in v[5]} == {"bwrap"}
    assert {m for v in off.values() for m in v[5]} == {"none"}
