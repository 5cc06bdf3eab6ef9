"""Tournaments end to end: the real ``arena run`` command, killed and resumed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from procs import children_with, live_with, wait_none_with

from arena.cli import main
from arena.games import get_game
from arena.match.record import FAULT_REASONS
from arena.plan.config import load_config
from arena.plan.schedule import build_schedule
from arena.storage.store import Store

BAD_BOT = Path(__file__).parent / "bad_bot.py"

# A random bot that thinks a few milliseconds per move, so that a tournament is
# still running when the test interrupts it.
SLOW_RANDOM = """
import random, sys, time
from arena.sdk import run
rng = random.Random(int(sys.argv[1]))
def choose(request):
    time.sleep(0.004)
    return rng.choice(request.legal)
run(choose, name="slow")
"""


def write_tournament(tmp_path: Path, games: int = 16, concurrency: int = 2) -> Path:
    bot = tmp_path / "slow_bot.py"
    bot.write_text(SLOW_RANDOM)
    toml = tmp_path / "t.toml"
    toml.write_text(
        f"""
name = "kill-test"
variant = "single"
tc = "5+0.1"
games_per_pairing = {games}
concurrency = {concurrency}
seed = 7
[openings]
plies = 2
[[bots]]
name = "a"
command = ["{sys.executable}", "{bot}", "1"]
[[bots]]
name = "b"
command = ["{sys.executable}", "{bot}", "2"]
[[bots]]
name = "c"
command = ["{sys.executable}", "{bot}", "3"]
"""
    )
    return toml


def arena_run(toml: Path, results: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "run",
            str(toml),
            "--results",
            str(results),
            "--quiet",
            "--no-report",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def stored_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT count(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


def wait_for_games(
    db: Path, at_least: int, proc: subprocess.Popen[bytes], limit: float = 60
) -> None:
    """Poll the database until ``at_least`` games are stored (bounded by ``limit``)."""
    deadline = time.monotonic() + limit
    while stored_count(db) < at_least:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the tournament stored too few games in time"
        time.sleep(0.02)


def snapshot(directory: Path) -> dict[str, bytes]:
    with Store.open_existing(directory) as store:
        import msgspec

        return {key: msgspec.json.encode(record) for key, record in store.items()}


@pytest.mark.slow
def test_sigkill_then_resume_stores_every_game_exactly_once(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path)
    results = tmp_path / "results"
    directory = results / "kill-test"
    db = directory / "games.sqlite"
    config = load_config(toml)
    expected = {task.game_key(n) for task in build_schedule(config) for n in (1, 2)}
    assert len(expected) == 3 * 16

    proc = arena_run(toml, results)
    wait_for_games(db, 5, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_none_with(str(tmp_path / "slow_bot.py"))
    before = snapshot(directory)
    assert 5 <= len(before) < len(expected)

    proc = arena_run(toml, results)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    assert f"{len(before)} already stored" in out.decode()

    after = snapshot(directory)
    assert set(after) == expected
    for key, record in before.items():
        assert after[key] == record, f"stored game {key} changed on resume"
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, count(*) FROM games GROUP BY key").fetchall()
        assert all(n == 1 for _, n in rows)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # A third run has nothing left to play.
    proc = arena_run(toml, results)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert f"{len(expected)} of {len(expected)} games stored" in out.decode()


@pytest.mark.slow
def test_ctrl_c_leaves_no_bot_and_no_half_game(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path)
    results = tmp_path / "results"
    directory = results / "kill-test"
    proc = arena_run(toml, results)
    wait_for_games(directory / "games.sqlite", 3, proc)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=15)
    assert time.monotonic() - started < 5, "Ctrl-C took too long to stop the arena"
    assert proc.returncode == 130
    assert "run the same command again to resume" in err.decode()
    assert "Traceback" not in err.decode()
    assert not live_with(str(tmp_path / "slow_bot.py"))
    game = get_game("kamisado")
    with Store.open_existing(directory) as store:
        assert store.integrity_check() == "ok"
        records = list(store.records())
    assert records
    for record in records:
        # Every stored game is whole: it reached the end of the rules or a verdict.
        final = game.state_from_text(record.final_position)
        assert final.is_terminal() or record.reason in FAULT_REASONS + ("adjudicated",)
        replay = game.state_from_text(record.opening)
        for action in record.actions:
            replay.apply_action(action.action)
        assert replay.to_text() == record.final_position


@pytest.mark.slow
def test_second_ctrl_c_exits_at_once(tmp_path: Path) -> None:
    # A bot that ignores SIGTERM and quit keeps the first shutdown busy for a while;
    # the second Ctrl-C must not wait for it.
    toml = write_tournament(tmp_path)
    results = tmp_path / "results"
    proc = arena_run(toml, results)
    wait_for_games(results / "kill-test" / "games.sqlite", 1, proc)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=10)
    assert proc.returncode == 130
    wait_none_with(str(tmp_path / "slow_bot.py"))


BAD_FILES = {
    "missing executable": (
        'name = "t"\n[[bots]]\nname = "a"\ncommand = "/no/such/bot"\n'
        '[[bots]]\nname = "b"\ncommand = "builtin:random"\n',
        "bots[0]",
    ),
    "bad time control": (
        'name = "t"\ntc = "fast"\n[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        '[[bots]]\nname = "b"\ncommand = "builtin:random"\n',
        "tc",
    ),
    "unknown key": (
        'name = "t"\ncolour = "red"\n[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        '[[bots]]\nname = "b"\ncommand = "builtin:random"\n',
        "colour",
    ),
    "wrong type": (
        'name = "t"\nseed = "x"\n[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        '[[bots]]\nname = "b"\ncommand = "builtin:random"\n',
        "seed",
    ),
    "duplicate bot names": (
        'name = "t"\n[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        '[[bots]]\nname = "a"\ncommand = "builtin:random"\n',
        "duplicate",
    ),
    "gauntlet without challenger": (
        'name = "t"\nformat = "gauntlet"\n[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        '[[bots]]\nname = "b"\ncommand = "builtin:random"\n',
        "challenger",
    ),
    "toml syntax": ('name = "t\n', "t.toml"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_tournament_file_is_one_readable_line(case: str, tmp_path: Path) -> None:
    text, words = BAD_FILES[case]
    toml = tmp_path / "t.toml"
    toml.write_text(text)
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(tmp_path / "r")])
    assert result.exit_code != 0
    output = result.output.strip()
    assert output.startswith("arena: error: "), output
    assert "\n" not in output, output
    assert words in output
    assert "Traceback" not in output
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_quick_example_runs_and_resumes(tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "examples" / "quick.toml"
    runner = CliRunner()
    result = runner.invoke(main, ["run", str(example), "--results", str(tmp_path), "-q", "-j", "2"])
    assert result.exit_code == 0, result.output
    with Store.open_existing(tmp_path / "quick") as store:
        total = store.count()
        assert total == 2 * len(build_schedule(load_config(example)))
        assert all(r.reason not in FAULT_REASONS for r in store.records())
    again = runner.invoke(main, ["run", str(example), "--results", str(tmp_path), "-q"])
    assert f"{total} already stored" in again.output
    exported = runner.invoke(main, ["export", str(tmp_path / "quick")])
    assert exported.exit_code == 0
    lines = (tmp_path / "quick" / "games.jsonl").read_text().splitlines()
    assert len(lines) == total


def test_no_process_of_ours_left(tmp_path: Path) -> None:
    """Sanity for the helpers above: the marker search finds a live process."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()", str(tmp_path)], stdin=subprocess.PIPE
    )
    try:
        assert live_with(str(tmp_path)) == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert live_with(str(tmp_path)) == []
    assert os.getpid() not in live_with(str(tmp_path))


@pytest.mark.slow
def test_a_killed_worker_loses_nothing(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path)
    results = tmp_path / "results"
    directory = results / "kill-test"
    proc = arena_run(toml, results)
    wait_for_games(directory / "games.sqlite", 3, proc)
    # Forked by the arena, its workers carry its command line (the file's path).
    workers = children_with(proc.pid, str(toml))
    assert len(workers) == 2
    os.kill(workers[0], signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    config = load_config(toml)
    expected = {task.game_key(n) for task in build_schedule(config) for n in (1, 2)}
    assert set(snapshot(directory)) == expected
    wait_none_with(str(tmp_path / "slow_bot.py"))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_relative_bot_paths_resolve_from_the_tournament_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """A bot named relative to the tournament file runs wherever ``arena run`` is
    started from, in this process and in worker processes alike."""
    folder = tmp_path / "club"
    (folder / "bots").mkdir(parents=True)
    bot = folder / "bots" / "mybot"
    bot.write_text(f"#!{sys.executable}\n" + SLOW_RANDOM.replace("time.sleep(0.004)", "pass"))
    bot.chmod(0o755)
    (folder / "t.toml").write_text(
        'name = "rel"\nvariant = "single"\ngames_per_pairing = 4\nconcurrency = 2\n'
        '[[bots]]\nname = "a"\ncommand = "./bots/mybot 1"\n'
        '[[bots]]\nname = "b"\ncommand = "bots/mybot 2"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = CliRunner().invoke(
        main, ["run", str(folder / "t.toml"), "-q", "--no-report", "--workers", workers]
    )
    assert result.exit_code == 0, result.output
    with Store.open_existing(elsewhere / "results" / "rel") as store:
        records = list(store.records())
    assert len(records) == 4
    assert all(r.reason not in FAULT_REASONS for r in records), [r.detail for r in records]


@pytest.mark.parametrize(
    ("faults", "played_by_crashy"),
    [
        ("disqualify_after = 0.5\nmin_games = 3", 3),  # out after 3 games, all faulted
        ("restart = false", 1),  # out after its first fault
    ],
)
def test_fault_policy_disqualifies_a_crashing_bot(
    tmp_path: Path, faults: str, played_by_crashy: int
) -> None:
    import trio

    from arena.plan.config import parse_config
    from arena.tournament import Tournament

    text = (
        'name = "dq"\nvariant = "single"\ntc = "5+0.1"\ngames_per_pairing = 6\nconcurrency = 1\n'
        f"[faults]\n{faults}\n"
        '[[bots]]\nname = "a"\ncommand = "builtin:random"\nargs = ["--seed", "1"]\n'
        '[[bots]]\nname = "b"\ncommand = "builtin:random"\nargs = ["--seed", "2"]\n'
        # It starts (the pre-flight passes), then exits at its first decision.
        f'[[bots]]\nname = "crashy"\ncommand = ["{sys.executable}", "{BAD_BOT}", "exit"]\n'
    )
    path = tmp_path / "dq.toml"
    path.write_text(text)
    for _ in range(2):  # the second run resumes and still skips the disqualified bot
        t = Tournament(
            parse_config(text, path), text, results_root=tmp_path, config_path=path, workers=1
        )
        outcome = trio.run(t.run)
        t.close()
        crashy = outcome.progress.standings["crashy"]
        assert crashy.disqualified
        assert crashy.games == played_by_crashy == crashy.faults
        assert not outcome.complete
    with Store.open_existing(tmp_path / "dq") as store:
        records = list(store.records())
    # Every game between the two healthy bots was played; crashy's stopped early
    # (one game at a time here: with more, games already running also finish).
    assert sum("crashy" not in r.players for r in records) == 6
    assert sum("crashy" in r.players for r in records) == played_by_crashy
