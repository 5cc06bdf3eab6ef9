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

import msgspec
import needs
import pytest

from arena.match.record import GameRecord
from arena.storage.store import Store

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


# --------------------------------------------------------------------------- bounded by default


@pytest.fixture(scope="module")
def pressing(tmp_path_factory: pytest.TempPathFactory) -> list[GameRecord]:
    """One ``arena run`` under the default limits of bots pressing on the bounds
    (``tests/boundary_bot.py``) and the built-in random bot."""
    needs.sandbox()
    base = tmp_path_factory.mktemp("pressing")
    bot = HERE / "boundary_bot.py"
    bots = {"threads": "threads 2000", "kernel": "kernel", "info": "info 40000"}
    lines = ['name = "pressing"', 'variant = "single"', 'tc = "20+0.2"', "concurrency = 2"]
    for name, words in bots.items():
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{sys.executable} {bot} {words}"']
    lines += ["[[bots]]", 'name = "random"', 'command = "builtin:random"']
    (base / "t.toml").write_text("\n".join(lines) + "\n")
    done = arena(
        "run", "t.toml", "--results", "results", "-q", "--no-report", "--sandbox", "bwrap",
        cwd=base,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with Store.open_existing(base / "results" / "pressing") as store:
        return list(store.records())


def reports(records: list[GameRecord], bot: str) -> list[str]:
    return [
        line
        for r in records
        for name, tail in zip(r.players, r.stderr_tails, strict=True)
        if name == bot
        for line in tail.splitlines()
        if line.startswith("BOUND ")
    ]


def test_a_bot_starting_2000_threads_is_bounded_and_the_others_play(
    pressing: list[GameRecord],
) -> None:
    """No ``[limits] processes``: the bot's cgroup still bounds it (256, threads
    included), and every game of the others is played."""
    assert {s.bound for r in pressing for s in r.sandbox} == {"cgroup"}
    started = [int(line.split()[2]) for line in reports(pressing, "threads")]
    assert started and all(0 < n < 256 for n in started), started
    assert len(pressing) == 12 and all(r.faulty is None for r in pressing), [
        (r.players, r.reason, r.detail) for r in pressing
    ]


def test_io_uring_memfd_secret_and_other_socket_families_are_refused(
    pressing: list[GameRecord],
) -> None:
    said = dict(line.removeprefix("BOUND ").rsplit(" ", 1) for line in reports(pressing, "kernel"))
    assert said == {
        "io_uring_setup": "EPERM",
        "memfd_secret": "EPERM",
        "socket AF_VSOCK": "EAFNOSUPPORT",
        "socket AF_INET": "ok",  # the families a program needs still open
    }


def test_stored_info_is_bounded_per_action_and_per_game(pressing: list[GameRecord]) -> None:
    """40 KB of ``text`` and a 2000-step ``pv`` before every action: each stored
    ``info`` within 4 KiB, the bot's within 32 KiB a game, the cut said."""
    from arena.match.info import ACTION_BYTES, PLAYER_BYTES

    for record in pressing:
        if "info" not in record.players:
            continue
        seat = record.players.index("info")
        infos = [a.info for a in record.actions if a.player == seat and not a.forced]
        sizes = [len(msgspec.json.encode(i)) for i in infos]
        assert infos and all(i is not None and i.get("cut") is True for i in infos), infos[:2]
        assert max(sizes) <= ACTION_BYTES and sum(sizes) <= PLAYER_BYTES + 16 * len(infos)
        first = infos[0]
        assert first is not None and first["depth"] == 1 and first["text"].startswith("xxx")


def test_a_cut_info_fits_whatever_its_text_holds() -> None:
    """Escapes and multi-byte characters take more JSON than their count: still within
    4 KiB, valid text, the cut marked; a small info is kept as it is."""
    from arena.match.info import ACTION_BYTES, InfoBudget

    budget = InfoBudget()
    for text in ("\x01" * 9000, "é" * 9000, "x" * 9000):
        kept = budget.keep(0, {"depth": 3, "text": text, "pv": ["\x02" * 50] * 400})
        assert kept is not None and kept["cut"] is True and kept["depth"] == 3
        assert len(msgspec.json.encode(kept)) <= ACTION_BYTES and kept["text"], kept
    assert budget.keep(1, {"depth": 2, "score": 0.5}) == {"depth": 2, "score": 0.5}
    while budget.left[0] > 0:  # the game's share spent: only the marker is kept
        budget.keep(0, {"text": "x" * 3000})
    assert budget.keep(0, {"text": "y", "dropped": 3}) == {"cut": True, "dropped": 3}


def test_builtin_is_no_key_of_a_tournament_file(tmp_path: Path) -> None:
    """What makes a bot the arena's own is set at load from ``builtin:NAME`` alone."""
    from arena.plan.config import ConfigError, load_config

    toml = tmp_path / "t.toml"
    toml.write_text(
        entry(f"{sys.executable} {BOTS / 'alphabeta_bot.py'}", 'builtin = "alphabeta"\n')
    )
    with pytest.raises(ConfigError, match=r"bots\[0\] \(eve\): unknown key `builtin`"):
        load_config(toml)
    toml.write_text(entry(f"{sys.executable} {BOTS / 'alphabeta_bot.py'}"))
    assert [b.builtin for b in load_config(toml).bots] == [None, "random"]
