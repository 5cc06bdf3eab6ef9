"""The built-in bots' preparation (``arena/plan/prepare.py``): run only for the arena's
own bots, only when their cache is not built, as a child that dies with the arena,
saying "compiling" only when it compiles."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio
from procs import children_with, live_with

from arena.plan import builtins
from arena.plan import prepare as prepare_module
from arena.plan.builtins import prepare_command
from arena.plan.prepare import COMPILING, prepare, up_to_date, write_stamp

BOTS = Path(__file__).resolve().parent.parent / "bots"


def test_the_built_in_searching_bots_are_prepared_and_no_other_command_is() -> None:
    """The arena runs a preparation outside the sandbox only for its own bots, named
    as such (``builtin:NAME``), with its own interpreter: never for a command, not
    even one naming a built-in's script (``tests/test_entrant_boundary.py`` runs one)."""
    warm = [sys.executable, str(BOTS / "prepare.py")]
    for name in ("alphabeta", "mcts"):  # one cache: one command, run once
        assert prepare_command(name) == warm
        assert prepare_command(f"builtin:{name}") == warm
    assert prepare_command("greedy") is None
    assert prepare_command(None) is None
    assert prepare_command(str(BOTS / "alphabeta_bot.py")) is None


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process has prepared nothing yet."""
    monkeypatch.setattr(prepare_module, "_done", {})


async def test_a_preparation_runs_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    """Concurrent first games of the same bot wait for one preparation."""
    count = tmp_path / "count"
    script = f"open({str(count)!r}, 'a').write('x')"
    command = [sys.executable, "-c", script]
    monkeypatch.setattr(prepare_module, "prepare_command", lambda c: command)
    monkeypatch.setattr(prepare_module, "up_to_date", lambda warm: False)
    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(prepare, "bot")
    assert await prepare("bot") is None
    assert count.read_text() == "x"


async def test_a_built_cache_starts_no_process(
    monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    """The session fixture prepared the bots as the arena does; now the stamp says
    there is nothing to do, and no process is started at all."""
    warm = prepare_command("alphabeta")
    assert warm is not None and up_to_date(warm)

    def no_spawn(*args: object, **kwargs: object) -> None:
        raise AssertionError("a preparation was started for a built cache")

    monkeypatch.setattr(prepare_module, "spawn", no_spawn)
    assert await prepare("mcts") is None  # how fast that is: bench/startup.py's figure


def test_the_stamp_holds_while_every_file_it_names_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamp = tmp_path / "cache" / "prepared.json"
    stamp.parent.mkdir()
    monkeypatch.setattr(builtins, "stamp_path", lambda: stamp)
    monkeypatch.setattr(prepare_module, "stamp_path", lambda: stamp)
    source = tmp_path / "kernels.py"
    source.write_text("x = 1\n")
    warm = [sys.executable, str(tmp_path / "prepare.py")]
    assert not up_to_date(warm)  # no stamp
    write_stamp(warm, [str(source)])
    assert up_to_date(warm)
    # The same environment under another name of its interpreter: still built.
    assert up_to_date([str(Path(sys.executable).with_name("python3")), warm[1]])
    assert not up_to_date(["/usr/bin/python3", warm[1]])  # another environment
    assert not up_to_date([warm[0], str(tmp_path / "other.py")])
    stat = source.stat()
    source.write_text("x = 2\n")  # same size, and the old modification time
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert not up_to_date(warm)  # the content hash tells
    write_stamp(warm, [str(source)])
    assert up_to_date(warm)
    source.unlink()
    assert not up_to_date(warm)
    stamp.write_text("{not json")
    assert not up_to_date(warm)
    write_stamp(warm, [str(source)])  # a file that is not there: no stamp at all
    assert not up_to_date(warm)
    # Files named absent (where a C compiler would appear): the stamp holds while
    # they stay absent, and a file already there is not absent.
    source.write_text("x = 3\n")
    compiler = tmp_path / "bin" / "cc"
    write_stamp(warm, [str(source)], [str(compiler)])
    assert up_to_date(warm)
    compiler.parent.mkdir()
    compiler.symlink_to("/nonexistent")  # even a dangling link is there
    assert not up_to_date(warm)
    stamp.unlink()
    write_stamp(warm, [str(source)], [str(compiler)])
    assert not stamp.exists()


def test_the_preparation_names_a_missing_compiler_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Built-in bots prepared on a machine without a C compiler: the report names
    where one would appear, so that installing it prepares again (and builds the
    ahead-of-time module) without anyone deleting the stamp."""
    from arena.bots import aot
    from arena.bots import prepare as bots_prepare

    here = tmp_path / "there"
    here.touch()
    wanted = [tmp_path / "cc", here, tmp_path / "Python.h"]
    monkeypatch.setattr(aot, "module_path", lambda folder: tmp_path / "kernels.so")
    monkeypatch.setattr(aot, "missing_tools", lambda: "no C compiler (cc or gcc) on PATH")
    monkeypatch.setattr(aot, "tool_paths", lambda: wanted)
    monkeypatch.setattr(aot, "build", lambda folder: pytest.fail("built without a compiler"))
    bots_prepare.main()
    out, err = capsys.readouterr()
    report = json.loads(out.splitlines()[-1])
    assert report["absent"] == [str(tmp_path / "cc"), str(tmp_path / "Python.h")]
    assert report["files"] and str(tmp_path / "kernels.so") not in report["files"]
    assert "prepare: no ahead-of-time kernels: no C compiler (cc or gcc) on PATH" in err
    assert prepare_module._reported_files([out.splitlines()[-1]]) == (
        report["files"],
        report["absent"],
    )


async def test_compiling_is_said_only_when_the_preparation_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(prepare_module, "up_to_date", lambda warm: False)
    for says, name in ((False, "loads"), (True, "compiles")):
        monkeypatch.setattr(prepare_module, "_done", {})
        line = "print('compiling', flush=True); " if says else ""
        command = [sys.executable, "-c", f"{line}print('{{\"files\": []}}')", name]
        monkeypatch.setattr(prepare_module, "prepare_command", lambda c, command=command: command)
        assert await prepare("bot") is None
        assert (COMPILING in capfd.readouterr().err) is says


def test_the_real_preparation_with_its_cache_built_compiles_nothing() -> None:
    """Run as the arena runs it, after the session fixture built the cache: no
    ``compiling`` line, and a report naming the kernels' source and cache files."""
    warm = prepare_command("alphabeta")
    assert warm is not None
    done = subprocess.run(warm, capture_output=True, text=True, timeout=300, check=True)
    lines = done.stdout.splitlines()
    assert "compiling" not in lines
    files = json.loads(lines[-1])["files"]
    assert str(BOTS / "kamisado_jit.py") in files
    assert any(f.endswith(".nbi") for f in files) and sys.executable in files
    # The rules package's solver kernels, which the search calls: source and cache.
    solver = BOTS.parent / "arena" / "games" / "kamisado" / "solver.py"
    assert str(solver) in files
    assert any(Path(f).name.startswith("solver.") and f.endswith(".nbi") for f in files)
    # The module compiled ahead of time and what its name's digest is made of:
    # a change to any of them must start the preparation again.
    assert {str(BOTS / "aot.py"), str(solver.with_name("board.py"))} <= set(files)
    assert any(Path(f).name.startswith("kamisado_kernels_") for f in files)


async def test_a_cancelled_preparation_leaves_no_process(
    monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    marker = f"arena-prepare-cancel-{os.getpid()}"
    command = [sys.executable, "-c", "import time; time.sleep(60)", marker]
    monkeypatch.setattr(prepare_module, "prepare_command", lambda c: command)
    monkeypatch.setattr(prepare_module, "up_to_date", lambda warm: False)
    with trio.move_on_after(10) as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(prepare, "bot")
            while not live_with(marker):
                await trio.sleep(0.005)
            nursery.cancel_scope.cancel()
    assert not scope.cancelled_caught, "the preparation never started"
    assert not live_with(marker)  # killed and reaped before the call returned


# A real ``arena run`` whose preparation is a long sleep: the stand-in for a first
# compile, which takes 15 s and more, without touching the real cache.
SLOW_PREPARATION = """
import sys
from arena.plan import prepare
marker = sys.argv.pop(1)
prepare.up_to_date = lambda warm: False
prepare.prepare_command = lambda command: [
    sys.executable, "-c", "import time; time.sleep(120)", marker
]
from arena.cli import main
sys.argv[0] = "arena"
main()
"""

TOURNAMENT = """
name = "killed"
variant = "single"
tc = "10+0.1"
games_per_pairing = 2
[[bots]]
name = "a"
command = "builtin:random"
[[bots]]
name = "b"
command = "builtin:greedy"
"""


def test_a_sigkilled_arena_takes_its_preparation_along(tmp_path: Path) -> None:
    """SIGKILL leaves no ``finally`` to run: the kernel's parent-death signal must
    end the preparation (it used to go on compiling for seconds)."""
    marker = f"arena-prepare-{os.getpid()}-{time.monotonic_ns()}"
    toml = tmp_path / "t.toml"
    toml.write_text(TOURNAMENT)
    arena = subprocess.Popen(
        [sys.executable, "-c", SLOW_PREPARATION, marker, "run", str(toml), "-q"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (child := children_with(arena.pid, marker)):
            assert arena.poll() is None, arena.stderr.read() if arena.stderr else ""
            assert time.monotonic() < deadline, "no preparation started"
            time.sleep(0.005)
        os.kill(arena.pid, signal.SIGKILL)
        arena.wait(timeout=10)
        deadline = time.monotonic() + 10
        while live_with(marker):
            assert time.monotonic() < deadline, f"preparation {child} outlived the arena"
            time.sleep(0.01)
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
        for pid in live_with(marker):
            os.kill(pid, signal.SIGKILL)
        if arena.stderr is not None:
            arena.stderr.close()


async def test_the_preparation_runs_in_a_scrubbed_environment_in_the_bots_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    """Nothing of the operator's shell but ``PATH``, ``HOME`` and ``LANG`` reaches it,
    and it starts in the built-in bots' folder, not where the entrants' files lie."""
    seen = tmp_path / "seen.json"
    dump = "json.dumps([dict(os.environ), os.getcwd()])"
    script = f"import json, os; open({str(seen)!r}, 'w').write({dump})"
    monkeypatch.setattr(prepare_module, "prepare_command", lambda c: [sys.executable, "-c", script])
    monkeypatch.setattr(prepare_module, "up_to_date", lambda warm: False)
    monkeypatch.setenv("ARENA_OPERATOR_SECRET", "s3cret")
    monkeypatch.chdir(tmp_path)
    assert await prepare("alphabeta") is None
    env, cwd = json.loads(seen.read_text())
    assert set(env) <= {"PATH", "HOME", "LANG", "LC_CTYPE"}, env  # Python may set LC_CTYPE
    assert cwd == str(builtins.folder())
