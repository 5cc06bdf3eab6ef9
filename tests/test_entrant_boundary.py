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


# --------------------------------------------------------------------------- a bot's own files


def two_entrants(base: Path) -> tuple[Path, Path]:
    """``bots/eve`` (a script, a symlink to rival's book, one to rival's folder and
    one to a file of its own) beside ``bots/rival``."""
    eve, rival = base / "bots" / "eve", base / "bots" / "rival"
    eve.mkdir(parents=True)
    rival.mkdir(parents=True)
    (rival / "book.txt").write_text("rival's opening book\n")
    (eve / "eve.py").write_text((BOTS / "random_bot.py").read_text())
    (eve / "book").symlink_to("../rival/book.txt")
    (eve / "data").symlink_to("../rival")
    (eve / "mine.txt").write_text("eve's own\n")
    (eve / "also-mine").symlink_to("mine.txt")
    return eve, rival


def entry(command: str, extra: str = "") -> str:
    return (
        'name = "own"\nvariant = "single"\n'
        f'[[bots]]\nname = "eve"\ncommand = "{command}"\n{extra}'
        '[[bots]]\nname = "random"\ncommand = "builtin:random"\n'
    )


def refused_in_one_line(done: subprocess.CompletedProcess[str], path: str, target: Path) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"'{path}' is a symbolic link leading out of the bot's folder" in lines[0], lines
    assert f"to '{target}'" in lines[0], lines
    return lines[0]


def test_a_symlink_to_another_entrants_folder_is_refused_at_load(tmp_path: Path) -> None:
    """On the command line (``arena run``, ``play``, ``check-bot``) and in a relative
    ``sandbox_ro``: one line naming the entry, the path and where it leads; no game."""
    eve, rival = two_entrants(tmp_path)
    toml = tmp_path / "t.toml"
    toml.write_text(entry("python3 bots/eve/eve.py --book bots/eve/book"))
    done = arena("run", str(toml), "-q", "--no-report", cwd=tmp_path, timeout=60)
    line = refused_in_one_line(done, str(eve / "book"), rival / "book.txt")
    assert "bots[0] (eve).command" in line
    toml.write_text(entry("python3 bots/eve/eve.py", 'sandbox_ro = ["bots/eve/data"]\n'))
    done = arena("run", str(toml), "-q", "--no-report", cwd=tmp_path, timeout=60)
    line = refused_in_one_line(done, str(eve / "data"), rival)
    assert "bots[0] (eve).sandbox_ro" in line
    assert not (tmp_path / "results").exists()  # refused before anything was made
    done = arena("play", "python3 bots/eve/eve.py bots/eve/book", "random", cwd=tmp_path)
    refused_in_one_line(done, str(eve / "book"), rival / "book.txt")
    done = arena("check-bot", "--", "python3", "bots/eve/eve.py", "bots/eve/data", cwd=tmp_path)
    refused_in_one_line(done, str(eve / "data"), rival)


def test_own_links_and_the_operators_absolute_grants_stay(tmp_path: Path) -> None:
    """A link inside the bot's own folder is its own; a link the operator names in an
    absolute grant is granted, and the run's start says where it resolved."""
    from arena.plan.config import load_config
    from arena.plan.own_files import grant_lines

    eve, rival = two_entrants(tmp_path)
    text = entry(
        "python3 bots/eve/eve.py bots/eve/also-mine",
        f'sandbox_ro = ["{eve / "data"}"]\nsandbox_rw = ["bots/eve"]\n',
    )
    (tmp_path / "t.toml").write_text(text)
    bot = load_config(tmp_path / "t.toml").bots[0]
    assert bot.command[-1] == str(eve / "also-mine") and bot.cwd == str(eve)
    assert bot.sandbox_ro == [str(rival)] and bot.sandbox_rw == [str(eve)]
    assert grant_lines(text) == [
        f"arena: eve reads '{eve / 'data'}' (resolved: '{rival}') (sandbox_ro)"
    ]
