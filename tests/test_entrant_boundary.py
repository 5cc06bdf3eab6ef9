"""What an entrant supplies never runs outside the sandbox, and shows it only its
own files (issue 33, the entrant's side).

Real files and real processes: an entrant's folder as a hostile author would
ship it, started by a real ``arena run``, ``play`` and ``check-bot`` (as root,
as here and in CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import needs
import pytest

HERE = Path(__file__).parent
BOTS = HERE.parent / "bots"
ARENA = [sys.executable, "-m", "arena.cli"]
SECRET = "arena-operator-secret-33"


@pytest.fixture
def working_sandbox() -> None:
    needs.sandbox()


def arena(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``arena ARGS`` with a secret in the operator's environment."""
    env = {**os.environ, "ARENA_OPERATOR_SECRET": SECRET}
    return subprocess.run(
        [*ARENA, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


# --------------------------------------------------------------------------- trusted code


class Eve:
    """An entrant whose "interpreter" is a shell script that leaves a mark (its pid and
    what it saw of the operator's environment) in a folder no sandbox shows, then runs
    the arena's own Python; ``bot.py`` is a symlink to the built-in alphabeta's script
    (whose path any earlier game shows)."""

    def __init__(self, base: Path, marks: Path) -> None:
        self.folder = base / "bots" / "eve"
        self.python = self.folder / "venv" / "bin" / "python"
        self.python.parent.mkdir(parents=True)
        self.mark = marks / "eve-ran-here"
        self.python.write_text(
            "#!/bin/sh\n"
            f'echo "pid $$ secret=$ARENA_OPERATOR_SECRET args $*" >> {self.mark} 2>/dev/null\n'
            f'exec {sys.executable} "$@"\n'
        )
        self.python.chmod(0o755)
        (self.folder / "bot.py").symlink_to(BOTS / "alphabeta_bot.py")

    def commands(self) -> list[list[str]]:
        """Its interpreter beside a symlink to the built-in, and on the built-in's script
        named by its path: each was taken for the built-in bot and prepared with it."""
        return [
            [str(self.python), "bots/eve/bot.py"],
            [str(self.python), str(BOTS / "alphabeta_bot.py")],
        ]

    def ran_outside(self) -> str:
        return self.mark.read_text() if self.mark.exists() else ""


@pytest.fixture
def eve(tmp_path: Path) -> Iterator[Eve]:
    marks = Path(tempfile.mkdtemp(prefix="arena-marks-", dir="/var/tmp"))  # no sandbox shows it
    try:
        yield Eve(tmp_path, marks)
    finally:
        shutil.rmtree(marks, ignore_errors=True)


def tournament(base: Path, command: list[str]) -> Path:
    words = ", ".join(f'"{w}"' for w in command)
    path = base / "t.toml"
    path.write_text(
        'name = "eve"\nvariant = "single"\ntc = "5+0.1"\nconcurrency = 1\n'
        f'[[bots]]\nname = "eve"\ncommand = [{words}]\n'
        '[[bots]]\nname = "random"\ncommand = "builtin:random"\n'
    )
    return path


@pytest.mark.usefixtures("working_sandbox")
def test_an_entrant_interpreter_never_runs_outside_the_sandbox_in_run(eve: Eve) -> None:
    base = eve.folder.parent.parent
    for number, command in enumerate(eve.commands()):
        results = base / f"results-{number}"
        done = arena(
            "run", str(tournament(base, command)), "--results", str(results),
            "--workers", "1", "-q", "--no-report", "--sandbox", "bwrap", cwd=base,
        )  # fmt: skip
        assert not eve.ran_outside(), (command, eve.ran_outside())
        assert "Traceback" not in done.stderr, done.stderr
        if command[1].endswith("alphabeta_bot.py"):  # played, by eve's interpreter, sandboxed
            assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.usefixtures("working_sandbox")
def test_an_entrant_interpreter_never_runs_outside_the_sandbox_in_play(eve: Eve) -> None:
    base = eve.folder.parent.parent
    for command in eve.commands():
        done = arena("play", " ".join(command), "random", "--sandbox", "bwrap", "-q", cwd=base)
        assert not eve.ran_outside(), (command, eve.ran_outside())
        assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.usefixtures("working_sandbox")
def test_an_entrant_interpreter_never_runs_outside_the_sandbox_in_check_bot(eve: Eve) -> None:
    base = eve.folder.parent.parent
    for command in eve.commands():
        done = arena(
            "check-bot", "--sandbox", "bwrap", "--game", "kamisado", "--games", "0",
            "--timeout", "12", "--", *command, cwd=base,
        )  # fmt: skip
        assert not eve.ran_outside(), (command, eve.ran_outside())
        assert "Traceback" not in done.stderr, done.stderr
