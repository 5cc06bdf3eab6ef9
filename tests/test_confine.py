"""The allow-list sandbox, tried by hostile entrants of one tournament (issue 22).

Every attempt is a real bot (``tests/escape_bot.py``, copied into each
entrant's own folder as an entrant would bring it) in a real ``arena run``, in a
subprocess, with the arena as it runs here and in CI: as root. Each bot reports
its attempts on stderr, which the game records keep.

What differs between machines is a named test each, which says which branch it
checks: a root arena (bots run as ``nobody``) or not (bots run as the arena's
user), bots bounded by a cgroup each or by rlimits. The rlimit fallback runs
everywhere: the arena is started with the cgroup check answering "none"
(``ARENA_WITHOUT_CGROUPS``), as on a machine without a writable hierarchy.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import needs
import pytest

from arena.match.record import GameRecord
from arena.storage.store import Store

HERE = Path(__file__).parent
ESCAPE = HERE / "escape_bot.py"
ARENA = [sys.executable, "-m", "arena.cli"]
ARENA_WITHOUT_CGROUPS = [
    sys.executable,
    "-c",
    "import sys; from arena.engine import cgroups; cgroups.available = lambda: False; "
    "sys.argv[0] = 'arena'; from arena.cli import main; main()",
]
"""The arena on a machine where bots get no cgroup: the rlimit fallback."""
BOUNDS = {"cgroup": ARENA, "rlimit": ARENA_WITHOUT_CGROUPS}


class Run(msgspec.Struct):
    base: Path
    output: str
    tails: dict[str, list[str]]
    records: list[GameRecord]


def tournament(
    base: Path,
    name: str,
    bots: dict[str, tuple[list[str], dict[str, str]]],
    extra: str = "",
    arena: list[str] = ARENA,
) -> Run:
    """Play ``bots`` (name -> (words after ``python bots/NAME/NAME.py``, env)) in ``base``."""
    needs.sandbox()
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
            *arena,
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
    needs.sandbox()
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


def test_games_finish_sandboxed(hostile) -> None:
    run, _, _ = hostile
    assert len(run.records) == 12, run.output
    assert {r.reason for r in run.records} <= {"home-row", "deadlock"}, run.output
    for record in run.records:
        assert [s.mode for s in record.sandbox] == ["bwrap", "bwrap"]


def test_a_root_arena_runs_its_bots_as_nobody(hostile) -> None:
    """Branch: the arena is root, so each bot switches to ``[sandbox] user``."""
    needs.root()
    run, _, _ = hostile
    assert {s.user for r in run.records for s in r.sandbox} == {"nobody"}


def test_with_a_writable_cgroup_hierarchy_each_bot_is_bounded_by_a_cgroup(hostile) -> None:
    """Branch: this machine gives each bot a cgroup (as root with cgroup v1 here)."""
    needs.cgroups()
    run, _, _ = hostile
    assert {s.bound for r in run.records for s in r.sandbox} == {"cgroup"}


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


@pytest.fixture(scope="module", params=list(BOUNDS))
def bounded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """Processes past ``processes``, memory past ``memory_mb`` through children and a
    memfd; bounded by a cgroup each (where the machine has them) or by rlimits."""
    if request.param == "cgroup":
        needs.cgroups()
    limits = "[limits]\nprocesses = 20\nmemory_mb = 200\n"
    bots = {
        "forker": (["fork", "60"], {}),
        "hoarder": (["hoard", "90", "3"], {}),
        "waiter": (["fork", "0"], {}),
    }
    base = tmp_path_factory.mktemp(f"bounded-{request.param}")
    run = tournament(base, "bounded", bots, extra=limits, arena=BOUNDS[request.param])
    assert {s.bound for r in run.records for s in r.sandbox} == {request.param}
    return run


def test_a_bot_forks_no_further_than_its_processes(bounded: Run) -> None:
    forks = attempts(bounded, "forker")
    started = [
        int(line.split("failed: ")[1].split()[0])
        for line in forks
        if line.startswith("ESCAPE fork 60")
    ]
    assert started and max(started) < 20, forks


@pytest.mark.parametrize("bounded", ["cgroup"], indirect=True)
def test_in_a_cgroup_a_bot_holds_no_more_than_its_memory_with_its_children(bounded: Run) -> None:
    """Branch: a cgroup each: the whole bot, children and memfd too, within ``memory_mb``
    (or killed on the way)."""
    hoards = attempts(bounded, "hoarder")
    held = [int(line.split()[3]) for line in hoards if "hoard held" in line]
    assert hoards and all(mb <= 200 for mb in held), hoards


@pytest.mark.parametrize("bounded", ["rlimit"], indirect=True)
def test_under_rlimits_a_bot_gets_no_memfd(bounded: Run) -> None:
    """Branch: rlimits bound each process only, and a memfd's pages count against
    none, so the filter refuses memfd (what children hold themselves is theirs)."""
    hoards = attempts(bounded, "hoarder")
    memfd = [line for line in hoards if "hoard memfd" in line]
    assert memfd and all("Operation not permitted" in line for line in memfd), hoards


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


def statically_linked(path: Path) -> bool:
    """An ELF executable without a program interpreter (``PT_INTERP``): nothing is
    loaded beside it at start, as ``file`` says "statically linked"."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2, "a 64-bit ELF file"  # ELFCLASS64
    order = "<" if data[5] == 1 else ">"  # EI_DATA
    (phoff,) = struct.unpack_from(order + "Q", data, 32)
    phentsize, phnum = struct.unpack_from(order + "HH", data, 54)
    types = [struct.unpack_from(order + "I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    return 3 not in types  # PT_INTERP


def compile_static(exe: Path, source: Path) -> None:
    compiler = needs.static_c_compiler()
    subprocess.run(
        [compiler, "-static", "-std=c99", "-O2", "-o", str(exe), str(source)], check=True
    )
    assert statically_linked(exe)


def test_a_statically_linked_bot_passes_check_bot(tmp_path: Path) -> None:
    needs.sandbox()
    exe = tmp_path / "static" / "cbot"
    exe.parent.mkdir()
    compile_static(exe, HERE.parent / "bots" / "examples" / "c" / "kamisado_bot.c")
    done = check_bot(str(exe))
    assert done.returncode == 0 and "all 13 checks passed" in done.stdout, done.stdout


def test_a_bot_under_a_virtualenvs_interpreter_passes_check_bot(tmp_path: Path) -> None:
    needs.sandbox()
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


def sandbox_lines(arena: list[str]) -> list[str]:
    """``arena play``'s line for each bot: who ran it and what bounded it."""
    bot = f"{sys.executable} {BOTS / 'random_bot.py'}"
    done = subprocess.run(
        [*arena, "play", bot, f"{bot} --seed 2", "--variant", "single", "--sandbox", "bwrap"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("sandbox of ")]
    assert len(lines) == 2, done.stdout
    return lines


def test_arena_play_says_a_root_arena_ran_its_bots_as_nobody_in_a_cgroup() -> None:
    """Branch: root, with a writable cgroup hierarchy (this machine, CI)."""
    needs.sandbox()
    needs.root()
    needs.cgroups()
    for line in sandbox_lines(ARENA):
        assert "user nobody" in line and "bounded by a cgroup" in line, line


def test_arena_play_says_bots_without_a_cgroup_were_bounded_by_rlimits() -> None:
    """Branch: no cgroup for bots (forced here), so rlimits."""
    needs.sandbox()
    for line in sandbox_lines(ARENA_WITHOUT_CGROUPS):
        assert "bounded by rlimits" in line, line


def test_arena_play_says_a_non_root_arena_ran_its_bots_as_itself() -> None:
    """Branch: the arena is not root, so its bots run as its own user and, with no
    cgroup it may write, are bounded by rlimits. A root test run starts the arena in
    a user namespace of its own as user 1000 (``unshare``): no privilege outside it,
    while the interpreter and the tree stay readable wherever they are."""
    needs.sandbox()
    prefix = []
    if os.geteuid() == 0:
        prefix = [needs.tool("unshare", what="unshare (util-linux)")]
        prefix += ["--user", "--map-user=1000", "--map-group=1000"]
    for line in sandbox_lines([*prefix, *ARENA]):
        assert "the arena's user" in line and "bounded by rlimits" in line, line


def test_the_sandbox_user_of_the_tournament_file_runs_its_bots(tmp_path: Path) -> None:
    """Branch: a root arena (only root switches users)."""
    needs.root()
    run = tournament(
        tmp_path,
        "daemon",
        {"a": (["fork", "0"], {}), "b": (["fork", "0"], {})},
        extra='[sandbox]\nuser = "daemon"\n',
    )
    assert {s.user for r in run.records for s in r.sandbox} == {"daemon"}


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
        [needs.c_compiler(), "-std=c99", "-O2", "-o", str(tmp_path / "cbot"), str(source)],
        check=True,
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
    compile_static(exe, BOTS / "examples" / "c" / "kamisado_bot.c")
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
