"""``arena check-bot --from FILE.toml NAME``: a tournament entry checked as its
tournament starts it (issue 34): its command, ``cwd``, ``env``, grants,
``[limits]``, ``[sandbox]`` and user. The entry here is a bot that ends at once
unless it starts in its ``cwd``, sees its variable and reads its granted file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import needs
import pytest

HERE = Path(__file__).parent
ARENA = [sys.executable, "-m", "arena.cli"]
ROOT = os.geteuid() == 0


@pytest.fixture
def tournament(tmp_path: Path) -> tuple[Path, list[str]]:
    """A tournament file with the picky entry; its checks, for a run without ``--from``."""
    needs.sandbox()
    tmp_path.chmod(0o755)
    folder = tmp_path / "bots" / "picky"
    folder.mkdir(parents=True)
    shutil.copy(HERE / "runtime_bot.py", folder)
    book = tmp_path / "data" / "book.txt"
    book.parent.mkdir()
    book.write_text("the picky bot's book\n")
    checks = ["env=PICKY_SECRET", f"read={book}", f"cwd={folder}"]
    if ROOT:
        checks.append("user=daemon")
    command = [sys.executable, "runtime_bot.py", "strict", *checks]
    toml = tmp_path / "t.toml"
    toml.write_text(
        "\n".join(
            [
                'name = "picky"',
                "[limits]",
                "memory_mb = 1024",
                "[sandbox]",
                'mode = "bwrap"',
                'user = "daemon"',
                "[[bots]]",
                'name = "picky"',
                f"command = {msgspec.json.encode(command).decode()}",
                'cwd = "bots/picky"',
                'env = { PICKY_SECRET = "42" }',
                'sandbox_ro = ["data/book.txt"]',
                "[[bots]]",
                'name = "other"',
                'command = "builtin:random"',
            ]
        )
        + "\n"
    )
    return toml, [sys.executable, str(folder / "runtime_bot.py"), "strict", *checks]


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args], capture_output=True, text=True, timeout=120, check=False, cwd=cwd
    )


def test_an_entry_is_checked_with_its_cwd_env_grant_and_user(tournament) -> None:
    toml, _ = tournament
    done = arena("check-bot", "--from", str(toml), "picky", "--games", "0", cwd=toml.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "checking kamisado" in done.stdout and "all 13 checks passed" in done.stdout


def test_the_same_command_without_its_entry_fails_the_checks(tournament) -> None:
    """What ``--from`` adds: the bare command lacks its variable, grant and folder."""
    toml, command = tournament
    done = arena("check-bot", "--games", "0", "--", *command, cwd=toml.parent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL start" in done.stdout


def test_an_unknown_entry_or_a_limit_option_is_one_line(tournament) -> None:
    toml, _ = tournament
    done = arena("check-bot", "--from", str(toml), "nobody", cwd=toml.parent)
    assert done.returncode == 2 and "no entry 'nobody' (its entries: picky, other)" in done.stderr
    assert "Traceback" not in done.stderr
    done = arena("check-bot", "--from", str(toml), "picky", "--memory-mb", "10", cwd=toml.parent)
    assert done.returncode == 2 and "--memory-mb: with --from, the file's [limits] apply" in (
        done.stderr
    )
