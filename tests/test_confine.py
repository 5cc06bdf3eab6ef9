"""The allow-list sandbox, tried by hostile entrants of one tournament (issue 22).

Every attempt is a real bot (``tests/escape_bot.py``, copied into each
entrant's own folder as an entrant would bring it) in a real ``arena run``, in a
subprocess, with the arena as it runs here and in CI: as root. Each bot reports
its attempts on stderr, which the game records keep.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from arena.engine.sandbox import probe
from arena.match.record import GameRecord
from arena.storage.store import Store

HERE = Path(__file__).parent
ESCAPE = HERE / "escape_bot.py"
ARENA = [sys.executable, "-m", "arena.cli"]
ROOT = os.geteuid() == 0


class Run(msgspec.Struct):
    base: Path
    output: str
    tails: dict[str, list[str]]
    records: list[GameRecord]


def tournament(
    base: Path, name: str, bots: dict[str, tuple[list[str], dict[str, str]]], extra: str = ""
) -> Run:
    """Play ``bots`` (name -> (words after ``python bots/NAME/NAME.py``, env)) in ``base``."""
    lines = [f'name = "{name}"', 'variant = "single"', 'tc = "20+0.2"', "concurrency = 1"]
    for bot, (words, env) in bots.items():
        folder = base / "bots" / bot
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(ESCAPE, folder / f"{bot}.py")
        command = [sys.executable, f"bots/{bot}/{bot}.py", *words]
        lines += [
            "[[bots]]",
            f'name = "{bot}"',
            f"command = {msgspec.json.encode(command).decode()}",
            "env = {"
            + ", ".join(f"{k} = {msgspec.json.encode(v).decode()}" for k, v in env.items())
            + "}",
        ]
    path = base / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n" + extra)
    results = base / "results"
    done = subprocess.run(
        [
            *ARENA,
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
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with Store.open_existing(results / name) as store:
        records = list(store.records())
    tails: dict[str, list[str]] = {bot: [] for bot in bots}
    for record in records:
        for player, tail in zip(record.players, record.stderr_tails, strict=True):
            tails[player].append(tail)
    return Run(base, done.stdout + done.stderr, tails, records)


def attempts(run: Run, bot: str) -> list[str]:
    return [
        line for tail in run.tails[bot] for line in tail.splitlines() if line.startswith("ESCAPE")
    ]


@pytest.fixture(scope="module")
def hostile() -> Iterator[tuple[Run, str, socket.socket]]:
    """One tournament of hostile entrants, in a folder outside ``/tmp``: every bot's
    ``/tmp`` is its own, so a folder in the real one would be out of sight anyway,
    and the allow-list (not the private ``/tmp``) must be what hides the others."""
    if probe() is not None:
        pytest.fail(f"bubblewrap cannot run here: {probe()}")
    base = Path(tempfile.mkdtemp(prefix="arena-hostile-", dir="/var/tmp"))
    base.chmod(0o755)  # the entrants' own folders are in it, for their users to read
    (base / "bots" / "alice").mkdir(parents=True)
    (base / "bots" / "alice" / "book.txt").write_text("alice's secret opening book\n")
    key = f"arena-test-{uuid.uuid4().hex[:12]}"
    sock_path = base / "arena.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    server.listen()
    server.setblocking(False)
    book = str(base / "bots" / "alice" / "book.txt")
    bots = {
        "alice": (["addkey", key, "collude"], {}),
        "bob": (["read"], {"ESCAPE_PATHS": f"{book}:/etc/shadow:/etc/gshadow:/etc/sudoers"}),
        "carol": (["readkey", key], {}),
        "dave": (["unix"], {"ESCAPE_SOCKET": str(sock_path)}),
    }
    try:
        yield tournament(base, "hostile", bots), key, server
    finally:
        server.close()
        shutil.rmtree(base, ignore_errors=True)


def test_games_finish_and_record_the_user_and_the_bound(hostile) -> None:
    run, _, _ = hostile
    assert len(run.records) == 12, run.output
    assert {r.reason for r in run.records} <= {"home-row", "deadlock"}, run.output
    for record in run.records:
        assert [s.mode for s in record.sandbox] == ["bwrap", "bwrap"]
        assert {s.user for s in record.sandbox} == {"nobody" if ROOT else ""}
        assert {s.bound for s in record.sandbox} <= {"cgroup", "rlimit"}


def test_another_entrants_folder_is_out_of_sight(hostile) -> None:
    run, _, _ = hostile
    lines = [line for line in attempts(run, "bob") if "book.txt" in line]
    assert lines and all("failed: [Errno 2] No such file" in line for line in lines), lines


def test_the_systems_secrets_are_out_of_sight(hostile) -> None:
    run, _, _ = hostile
    for secret in ("/etc/shadow", "/etc/gshadow", "/etc/sudoers"):
        lines = [line for line in attempts(run, "bob") if f"read {secret} " in line]
        assert lines and all("failed" in line for line in lines), (secret, lines)


def test_no_keyring_channel_between_entrants(hostile) -> None:
    run, key, _ = hostile
    added = [line for line in attempts(run, "alice") if "addkey" in line]
    assert added and all("failed: Operation not permitted" in line for line in added), added
    read = [line for line in attempts(run, "carol") if "readkey" in line]
    assert read and not [line for line in read if "succeeded" in line or "gave" in line], read


def test_a_unix_socket_in_the_tournament_folder_is_unreachable(hostile) -> None:
    run, _, server = hostile
    lines = [line for line in attempts(run, "dave") if "unix" in line]
    assert lines and all("failed: [Errno 2]" in line for line in lines), lines
    with pytest.raises(BlockingIOError):  # no connection ever arrived
        server.accept()


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Processes past ``processes``, memory past ``memory_mb`` through children and a memfd."""
    limits = "[limits]\nprocesses = 20\nmemory_mb = 200\n"
    bots = {
        "forker": (["fork", "60"], {}),
        "hoarder": (["hoard", "90", "3"], {}),
        "waiter": (["fork", "0"], {}),
    }
    return tournament(tmp_path_factory.mktemp("bounded"), "bounded", bots, extra=limits)


def test_a_bot_forks_no_further_than_its_processes(bounded: Run) -> None:
    forks = attempts(bounded, "forker")
    started = [
        int(line.split("failed: ")[1].split()[0])
        for line in forks
        if line.startswith("ESCAPE fork 60")
    ]
    assert started and max(started) < 20, forks


def test_a_bot_holds_no_more_than_its_memory_through_children_and_memfd(bounded: Run) -> None:
    hoards = attempts(bounded, "hoarder")
    held = [int(line.split()[3]) for line in hoards if "hoard held" in line]
    bound = {s.bound for r in bounded.records for s in r.sandbox}
    if bound == {"rlimit"}:  # per process only, but no memfd: what its children hold themselves
        memfd = [line for line in hoards if "hoard memfd" in line]
        assert memfd and all("Operation not permitted" in line for line in memfd), hoards
    else:  # a cgroup: the whole bot within memory_mb (or killed on the way)
        assert bound == {"cgroup"} and hoards, (bound, hoards)
        assert all(mb <= 200 for mb in held), hoards


def check_bot(*command: str) -> subprocess.CompletedProcess[str]:
    """The protocol checks only: these entrants play whole games sandboxed (and the
    same ones unconfined) in ``test_a_static_binary_..._play_the_same_games...``."""
    return subprocess.run(
        [*ARENA, "check-bot", "--sandbox", "bwrap", "--games", "0", "--", *command],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_statically_linked_bot_passes_check_bot(tmp_path: Path) -> None:
    exe = tmp_path / "static" / "cbot"
    exe.parent.mkdir()
    source = HERE.parent / "bots" / "examples" / "c" / "kamisado_bot.c"
    subprocess.run(["gcc", "-static", "-std=c99", "-O2", "-o", str(exe), str(source)], check=True)
    assert b"statically linked" in subprocess.run(["file", str(exe)], capture_output=True).stdout
    done = check_bot(str(exe))
    assert done.returncode == 0 and "all 13 checks passed" in done.stdout, done.stdout


def test_a_bot_under_a_virtualenvs_interpreter_passes_check_bot(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    # arena.sdk and msgspec, as if installed there (the arena's own are visible to every bot)
    libs = sysconfig.get_paths()["purelib"]
    (site / "arena_tree.pth").write_text(f"{HERE.parent}\n{libs}\n")
    bot = tmp_path / "mine" / "bot.py"
    bot.parent.mkdir()
    bot.write_text((HERE.parent / "bots" / "random_bot.py").read_text())
    done = check_bot(f"{venv}/bin/python", str(bot))
    # random declares both games: 21 checks of Kamisado, 15 of Sekigahara
    assert done.returncode == 0 and "FAIL" not in done.stdout, done.stdout


def test_arena_play_says_who_ran_each_bot_and_how_it_was_bounded() -> None:
    done = subprocess.run(
        [*ARENA, "play", "random", "greedy", "--sandbox", "bwrap"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("sandbox of ")]
    assert len(lines) == 2, done.stdout
    for line in lines:
        assert ("user nobody" if ROOT else "the arena's user") in line, line
        assert "bounded by a cgroup" in line or "bounded by rlimits" in line, line


def test_the_sandbox_user_of_the_tournament_file_runs_its_bots(tmp_path: Path) -> None:
    run = tournament(
        tmp_path,
        "daemon",
        {"a": (["fork", "0"], {}), "b": (["fork", "0"], {})},
        extra='[sandbox]\nuser = "daemon"\n',
    )
    assert {s.user for r in run.records for s in r.sandbox} == {"daemon" if ROOT else ""}


def test_no_bot_creates_a_user_namespace(tmp_path: Path) -> None:
    """Nested user namespaces are attack surface nothing needs: ``unshare`` and a
    ``clone`` into a new one are refused (the seccomp filter)."""
    run = tournament(tmp_path, "userns", {"erin": (["userns"], {}), "waiter": (["fork", "0"], {})})
    tried = attempts(run, "erin")
    for call in ("unshare", "clone"):
        lines = [line for line in tried if line.startswith(f"ESCAPE userns {call} ")]
        assert lines and all("failed: Operation not permitted" in line for line in lines), tried


# --------------------------------------------------------------------------- every kind of entrant

BOTS = HERE.parent / "bots"
SCHEMA = [sys.executable, str(HERE / "schema_bot.py"), str(HERE.parent / "docs" / "schema")]


@pytest.mark.parametrize(
    ("game", "name"),
    [
        ("kamisado", "random"),
        ("kamisado", "greedy"),
        ("kamisado", "alphabeta"),
        ("kamisado", "mcts"),
        ("sekigahara", "battle-greedy"),
    ],
)
def test_every_built_in_bot_passes_check_bot_in_the_sandbox(game: str, name: str) -> None:
    """Named as built-in bots are (``builtin:NAME``: the searching ones are prepared
    first). A generous ``--timeout``: the compiled bots load their machine code at
    start, seconds on a loaded machine."""
    done = subprocess.run(
        [*ARENA, "check-bot", "--sandbox", "bwrap", "--game", game, "--games", "0"]
        + ["--timeout", "12", "--", f"builtin:{name}"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and "checks passed" in done.stdout, done.stdout + done.stderr


def test_check_bot_takes_commands_relative_to_the_current_folder(tmp_path: Path) -> None:
    """``arena check-bot -- python3 bot.py`` from the bot's folder, as its author runs
    it: the sandbox starts the bot in its program's folder, not in its private /tmp."""
    (tmp_path / "bot.py").write_text((BOTS / "random_bot.py").read_text())
    source = BOTS / "examples" / "c" / "kamisado_bot.c"
    subprocess.run(
        ["gcc", "-std=c99", "-O2", "-o", str(tmp_path / "cbot"), str(source)], check=True
    )
    for command in ([sys.executable, "bot.py"], ["./cbot"]):
        done = subprocess.run(
            [*ARENA, "check-bot", "--sandbox", "bwrap", "--games", "0", "--", *command],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0 and "checks passed" in done.stdout, done.stdout


def _same(base: Path, mode: str, game: str, bots: dict[str, list[str]]) -> dict[str, tuple]:
    """Every stored game of a round robin of ``bots``, run with ``--sandbox mode``."""
    lines = [f'name = "same-{game}"', f'game = "{game}"', 'tc = "30+0.3"', "concurrency = 1"]
    if game == "kamisado":
        lines.append('variant = "single"')
    for name, command in bots.items():
        lines += [
            "[[bots]]",
            f'name = "{name}"',
            f"command = {msgspec.json.encode(command).decode()}",
        ]
    path = base / f"{game}-{mode}.toml"
    path.write_text("\n".join(lines) + "\n")
    results = base / f"results-{mode}"
    done = subprocess.run(
        [*ARENA, "run", str(path), "--results", str(results), "--workers", "1", "-q"]
        + ["--no-report", "--sandbox", mode],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with Store.open_existing(results / f"same-{game}") as store:
        assert {s.mode for r in store.records() for s in r.sandbox} == {mode}
        return {
            key: (r.players, [a.action for a in r.actions], r.score, r.reason, r.detail)
            for key, r in store.items()
        }


def test_a_static_binary_a_virtualenv_and_the_schema_bot_play_the_same_games_sandboxed_or_not(
    tmp_path: Path,
) -> None:
    """``tests/test_sandbox.py`` compares the built-in and example bots; these are the
    issue's other entrants, all deterministic: the sandbox changes no move."""
    exe = tmp_path / "static" / "cbot"
    exe.parent.mkdir()
    source = BOTS / "examples" / "c" / "kamisado_bot.c"
    subprocess.run(["gcc", "-static", "-std=c99", "-O2", "-o", str(exe), str(source)], check=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "arena_tree.pth").write_text(f"{HERE.parent}\n{sysconfig.get_paths()['purelib']}\n")
    mine = tmp_path / "mine" / "bot.py"
    mine.parent.mkdir()
    mine.write_text((BOTS / "random_bot.py").read_text())
    bots = {
        "static": [str(exe), "--seed", "6"],
        "venv": [f"{venv}/bin/python", str(mine), "--seed", "3"],
        "schema": [*SCHEMA, "kamisado/single"],
    }
    on = _same(tmp_path, "bwrap", "kamisado", bots)
    assert len(on) == 6 and on == _same(tmp_path, "none", "kamisado", bots)


def test_the_battle_bots_play_the_same_games_sandboxed_or_not(tmp_path: Path) -> None:
    bots = {
        "greedy-1": [sys.executable, str(BOTS / "battle_greedy_bot.py"), "--seed", "1"],
        "greedy-2": [sys.executable, str(BOTS / "battle_greedy_bot.py"), "--seed", "2"],
    }
    on = _same(tmp_path, "bwrap", "sekigahara", bots)
    assert len(on) == 2 and on == _same(tmp_path, "none", "sekigahara", bots)
