"""The arena's start-up (issue 23): what it no longer does before its first game.

The figures are ``bench/startup.py``'s; these tests hold the behaviour that made
them: the path of ``arena run`` to its first game imports no scientific stack,
the sandbox's ``/etc`` view is made where it is cheap to make, and once per
arena: its worker processes take it (and the arena's bwrap probe) from it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine import sandbox

RUN_PATH = (
    "arena.cli",
    "arena.cli.run",
    "arena.cli.live",
    "arena.plan.config",
    "arena.tournament",
    "arena.backends.workers",
)
"""What ``arena run`` and its worker processes import before their first game."""

HEAVY = ("scipy", "numpy", "numba", "jinja2", "starlette")


def test_the_path_of_arena_run_to_its_first_game_imports_no_scientific_stack() -> None:
    """scipy alone (the rating fit, through the report) was a second of every start."""
    code = (
        f"import importlib, json, sys\nfor m in {RUN_PATH!r}: importlib.import_module(m)\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(done.stdout) == []


def test_arena_run_loads_no_other_verb() -> None:
    """Every verb registered at import (the analysis's worker pool, the web
    server...) was a fifth of a second of each ``arena run``; ``--analyze`` loads
    the analysis when the games are played."""
    code = (
        "import sys\nfrom arena.cli import main\n"
        "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('arena.cli.', 'arena.analysis'))"
        " or m == 'multiprocessing'), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    loaded = done.stderr.strip()
    assert loaded == "['arena.analysis', 'arena.cli.app', 'arena.cli.common', 'arena.cli.run']"


def test_every_verb_is_registered_by_the_module_the_group_names() -> None:
    """The group imports a verb's module when the verb is asked for: a verb
    missing from ``VERBS`` would be unknown to ``arena``, one misplaced would fail."""
    import importlib

    from arena.cli import main
    from arena.cli.app import VERBS

    for verb, module in VERBS.items():
        importlib.import_module(f"arena.cli.{module}")
        assert verb in main.commands, (verb, module)
    assert set(main.commands) == set(VERBS)
    assert main.list_commands(None) == sorted(VERBS)  # type: ignore[arg-type]


def test_the_etc_view_is_made_in_memory() -> None:
    """On a disk each of its 700 links is a journalled write (0.5 to 0.9 s a view)."""
    code = "from arena.engine import sandbox; print(sandbox.etc_view())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    view = done.stdout.strip()
    assert view.startswith("/dev/shm/arena-etc-") and view.endswith("/etc")
    assert not os.path.exists(os.path.dirname(view))  # removed when its process ended


# A random bot that says, on stderr, which folder was bound in as its /etc: the
# root of that mount in its own mount table (the arena's view, by the arena's pid).
ETC_BOT = """
import random, sys
from arena.sdk import run
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    if fields[4] == "/etc":
        print("etc from", fields[3], file=sys.stderr, flush=True)
rng = random.Random(1)
run(lambda request: rng.choice(request.legal), name="etc")
"""


def three_bots(tmp_path: Path, source: str, name: str, mode: str) -> list[str]:
    """``arena run`` of a round robin of three copies of the bot ``source`` on two
    workers (sandbox ``mode``), its results in ``tmp_path/r/name``."""
    bot = tmp_path / f"{name}_bot.py"
    bot.write_text(source)
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = ["{sys.executable}", "{bot}"]\n' for n in "abc"
    )
    toml = tmp_path / "t.toml"
    toml.write_text(
        f'name = "{name}"\nvariant = "single"\ntc = "5+0.1"\nconcurrency = 2\nseed = 1\n'
        f'[sandbox]\nmode = "{mode}"\n{bots}'
    )
    return [sys.executable, "-m", "arena.cli", "run", str(toml), "--results"] + [
        str(tmp_path / "r"),
        "--quiet",
        "--no-report",
        "--workers",
        "2",
    ]


def stored_records(tmp_path: Path, name: str) -> list[dict]:
    with sqlite3.connect(tmp_path / "r" / name / "games.sqlite") as db:
        return [json.loads(r) for (r,) in db.execute("SELECT record FROM games")]


def test_the_workers_of_an_arena_bind_its_etc_view_and_it_goes_with_the_arena(
    tmp_path: Path,
) -> None:
    """Every bot of two worker processes sees the view the arena process made
    (named by its pid, not a worker's), and the view is removed when the arena ends."""
    if sandbox.probe() is not None:
        pytest.fail(f"bubblewrap cannot run here: {sandbox.probe()}")
    arena = subprocess.Popen(
        three_bots(tmp_path, ETC_BOT, "etc", "bwrap"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, err = arena.communicate(timeout=120)
    assert arena.returncode == 0, err
    records = stored_records(tmp_path, "etc")
    tails = "\n".join(t for record in records for t in record["stderr_tails"])
    roots = re.findall(r"etc from (\S+)", tails)
    assert len(roots) >= 3  # three pair tasks over two workers: a bot started in each
    pids = {re.fullmatch(r".*/arena-etc-(\d+)-[^/]+/etc", r) for r in roots}
    assert {m.group(1) if m else None for m in pids} == {str(arena.pid)}, roots
    assert not [n for n in os.listdir("/dev/shm") if n.startswith(f"arena-etc-{arena.pid}-")]


def test_the_view_of_a_killed_arena_is_swept_by_the_next_one() -> None:
    """An arena killed outright cannot remove its view: the next arena's removes it."""
    code = "import os, signal\nfrom arena.engine import sandbox\n"
    code += "print(sandbox.etc_view(), flush=True)\nos.kill(os.getpid(), signal.SIGKILL)"
    killed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL
    left = os.path.dirname(killed.stdout.strip())
    assert os.path.isdir(left)
    code = "from arena.engine import sandbox; print(sandbox.etc_view())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() != killed.stdout.strip()
    assert not os.path.exists(left)


def test_a_tournament_file_imports_its_own_game_only() -> None:
    """Each process of a tournament (the arena, every worker) reads the file: the
    other games' packages were a tenth of a second and more of each start."""
    code = (
        "import json, sys\nfrom arena.plan.config import load_config\n"
        "load_config('examples/quick.toml')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('arena.games.')"
        " and m.count('.') == 2)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert json.loads(done.stdout) == ["arena.games.base", "arena.games.kamisado"]


# A random bot that says, on stderr, the command lines of its ancestors: its
# worker process's and the arena's (the sandbox is off, so it sees them).
ANCESTRY_BOT = """
import os, random, sys
from arena.sdk import run
pid, chain = os.getppid(), []
while pid > 1 and len(chain) < 4:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        line = f.read().replace(b"\\0", b" ").decode().strip()
    files = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            files.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    chain.append([line[:300], [f for f in files if f.endswith("games.sqlite")]])
    with open(f"/proc/{pid}/stat") as f:
        pid = int(f.read().rsplit(")", 1)[1].split()[1])
print("ancestry", repr(chain), file=sys.stderr, flush=True)
rng = random.Random(1)
run(lambda request: rng.choice(request.legal), name="ancestry")
"""


def test_arena_run_forks_its_workers_with_its_modules_loaded(tmp_path: Path) -> None:
    """A spawned worker spent 0.3 s importing what the arena had loaded already:
    ``arena run`` forks its workers before trio starts, so a worker's command line
    is the arena's own (and not its open files), and every game is still played
    and stored."""
    command = three_bots(tmp_path, ANCESTRY_BOT, "forked", "none")
    arena = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert arena.returncode == 0, arena.stderr
    assert "6 of 6 games stored" in arena.stdout
    records = stored_records(tmp_path, "forked")
    chains = [
        eval(m)  # noqa: S307 - the test's own bot wrote it
        for record in records
        for tail in record["stderr_tails"]
        for m in re.findall(r"ancestry (\[.*\])", tail)
    ]
    assert len(chains) >= 3
    for chain in chains:
        run = [i for i, (line, _) in enumerate(chain) if " run " in line and "t.toml" in line]
        assert len(run) >= 2, chain  # the worker and the arena: one command line
        assert not any("arena.backends.workers" in line for line, _ in chain), chain
        worker, arena_files = chain[run[0]][1], chain[run[1]][1]
        # The arena's store stays the arena's: the fork closed its descriptors.
        assert any(f.endswith("games.sqlite") for f in arena_files), arena_files
        assert not any("games.sqlite" in f for f in worker), worker


def test_a_forked_worker_given_no_work_leaves_quietly() -> None:
    """Workers forked ahead and not needed (a run with nothing left to play on
    them) end when their input closes: exit code 0, no traceback."""
    code = (
        "import trio\nfrom arena.backends.workers import fork_workers, release\n"
        "forked = fork_workers(2)\npids = [p.pid for p in forked]\n"
        "trio.run(release, forked)\n"
        "print([p.returncode for p in forked])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[0, 0]"
    assert "Traceback" not in done.stderr, done.stderr
