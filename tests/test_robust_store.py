"""The results folder under a hostile disk: read-only, deleted or replaced
mid-run, and two runs of the same folder at once. All through the real
``arena run`` command, as real processes."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import needs
import pytest

from arena.plan.config import load_config
from arena.plan.schedule import build_schedule
from arena.storage.store import DB_NAME, LOCK_NAME, Store

ARENA = [sys.executable, "-m", "arena.cli"]

# Each start appends a line to STARTS, so a test can tell that no bot started.
SLOW_BOT = """
import random, sys, time
with open(sys.argv[2], "a") as f:
    f.write("started\\n")
from arena.sdk import run
rng = random.Random(int(sys.argv[1]))
def choose(request):
    time.sleep(float(sys.argv[3]))
    return rng.choice(request.legal)
run(choose, name="slow")
"""


def tournament(tmp_path: Path, games: int = 8, think: float = 0.004) -> Path:
    bot = tmp_path / "slow_bot.py"
    bot.write_text(SLOW_BOT)
    starts = tmp_path / "starts"
    # Bots run as nobody under a root arena: the folder it writes STARTS in is theirs
    # too (else every bot failed to start, and the pre-flight now says so).
    tmp_path.chmod(0o777)
    toml = tmp_path / "t.toml"
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = ["{sys.executable}", "{bot}", "{i}", "{starts}", '
        f'"{think}"]\nsandbox_rw = ["{tmp_path}"]\n'  # the sandbox lets it write STARTS
        for i, n in enumerate("ab")
    )
    toml.write_text(
        f'name = "disk"\nvariant = "single"\ntc = "5+0.1"\ngames_per_pairing = {games}\n'
        f"concurrency = 2\nseed = 3\n[openings]\nplies = 2\n{bots}"
    )
    return toml


def run(toml: Path, results: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*ARENA, "run", str(toml), "--results", str(results), "-q", "--no-report", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stored(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return conn.execute("SELECT count(*) FROM games").fetchone()[0]
    except sqlite3.Error:
        return 0


def wait_until(condition, proc: subprocess.Popen[str], limit: float = 60) -> None:  # noqa: ANN001
    deadline = time.monotonic() + limit
    while not condition():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("arena: error: ")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def all_keys(toml: Path) -> set[str]:
    return {t.game_key(n) for t in build_schedule(load_config(toml)) for n in (1, 2)}


def stored_keys(directory: Path) -> set[str]:
    with Store.open_existing(directory) as store:
        assert store.integrity_check() == "ok"
        return store.finished_keys()


def bwrap_read_only(path: Path) -> list[str]:
    """A command prefix running the rest with ``path`` mounted read-only (EROFS,
    which root cannot write through either)."""
    bwrap = needs.tool("bwrap", what="bubblewrap (bwrap)")
    probe = subprocess.run([bwrap, "--dev-bind", "/", "/", "true"], capture_output=True)
    if probe.returncode != 0:
        needs.missing(f"bwrap cannot create a mount namespace here: {probe.stderr.decode()}")
    return [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(path), str(path)]


@pytest.mark.parametrize("what", ["folder", "database"])
def test_read_only_results_are_refused_before_any_bot_starts(tmp_path: Path, what: str) -> None:
    toml = tournament(tmp_path, games=2)
    results = tmp_path / "results"
    directory = results / "disk"
    directory.mkdir(parents=True)  # an empty folder, where a database must be created...
    if what == "database":  # ...or a database that must be written (resumed with --force)
        Store.open(directory, name="disk", config_text="", fingerprint="x").close()
        for extra in ("-wal", "-shm"):
            (directory / (DB_NAME + extra)).unlink(missing_ok=True)
    target = directory if what == "folder" else directory / DB_NAME
    prefix = bwrap_read_only(target)
    result = subprocess.run(
        [
            *prefix,
            *ARENA,
            "run",
            str(toml),
            "--results",
            str(results),
            "-q",
            "--no-report",
            "--force",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    line = one_error_line(result.stderr)
    assert "Read-only file system" in line or "readonly database" in line, line
    assert not (tmp_path / "starts").exists(), "a bot was started"


def test_a_second_run_of_the_same_folder_stops_naming_the_first(tmp_path: Path) -> None:
    toml = tournament(tmp_path, games=40, think=0.02)
    results = tmp_path / "results"
    first = run(toml, results)
    try:
        lock = results / "disk" / LOCK_NAME
        wait_until(lambda: lock.exists() and lock.read_text().strip(), first)
        second = run(toml, results)
        _, err = second.communicate(timeout=60)
        assert second.returncode == 1
        line = one_error_line(err)
        assert f"is in use by another arena run (pid {first.pid})" in line, line
        assert first.poll() is None  # the first run goes on
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    # The lock died with its holder: a third run takes it (its pid in the lock
    # file, written once it holds the lock) and goes on, until stopped.
    again = run(toml, results)
    try:
        wait_until(lambda: lock.read_text().strip() == str(again.pid), again)
    finally:
        again.send_signal(signal.SIGINT)
        _, err = again.communicate(timeout=60)
    assert "in use" not in err


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_database_deleted_or_replaced_mid_run_loses_no_game(tmp_path: Path, how: str) -> None:
    toml = tournament(tmp_path, games=10)
    results = tmp_path / "results"
    directory = results / "disk"
    proc = run(toml, results)
    wait_until(lambda: stored(directory / DB_NAME) >= 2, proc)
    if how == "deleted":
        shutil.rmtree(directory)
    else:
        intruder = tmp_path / "intruder"
        intruder.write_text("not a database")
        os.replace(intruder, directory / DB_NAME)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    line = one_error_line(err)
    assert f"{directory / DB_NAME} was {'deleted' if how == 'deleted' else 'replaced'}" in line
    reported = int(line.split("; its ")[1].split()[0])
    assert reported >= 2
    if how == "deleted":
        # Games that ended while the run stopped went into the restored file too.
        assert len(stored_keys(directory)) >= reported
        rerun = run(toml, results)
        assert rerun.wait(timeout=120) == 0, rerun.communicate()
        assert stored_keys(directory) == all_keys(toml)
    else:
        assert (directory / DB_NAME).read_text() == "not a database"  # left alone
        (recovered,) = directory.glob("games.recovered-*.sqlite")
        with sqlite3.connect(recovered) as conn:
            assert conn.execute("SELECT count(*) FROM games").fetchone()[0] >= reported
        assert f"written again to {recovered}" in line


def test_any_sqlite_error_becomes_one_store_error(tmp_path: Path) -> None:
    from arena.storage.store import StoreError

    store = Store.open(tmp_path, name="t", config_text="", fingerprint="f")
    store._conn.close()  # any sqlite3.Error will do: here "closed database"
    with pytest.raises(StoreError, match=r"games.sqlite: Cannot operate on a closed database"):
        store.count()
    with pytest.raises(StoreError, match="closed database"):
        list(store.items())
    store.close()
