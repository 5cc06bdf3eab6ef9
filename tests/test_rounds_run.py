"""Swiss and knockout tournaments end to end: the real ``arena run`` on every
backend, killed with SIGKILL mid-round and resumed, faults and exports."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import needs
import pytest
import trio
from procs import wait_none_with

from arena.plan.config import load_config, parse_config
from arena.plan.rounds import Rounds, StoredGame
from arena.storage.rounds import read_rounds
from arena.storage.store import Store
from arena.tournament import Tournament

BAD_BOT = Path(__file__).parent / "bad_bot.py"

SLOW_RANDOM = """
import random, sys, time
from arena.sdk import run
rng = random.Random(int(sys.argv[1]))
def choose(request):
    time.sleep(0.004)
    return rng.choice(request.legal)
run(choose, name="slow")
"""


def write(tmp_path: Path, top: str, bots: int, *, slow: bool = False) -> Path:
    lines = [f'name = "t"\nvariant = "single"\ntc = "5+0.1"\nseed = 4\n{top}\n']
    lines.append("[openings]\nplies = 2\n")
    if slow:
        (tmp_path / "slow_bot.py").write_text(SLOW_RANDOM)
    for i in range(bots):
        if slow:
            command = f'["{sys.executable}", "{tmp_path / "slow_bot.py"}", "{i}"]'
        else:
            command = '"builtin:random"'
        lines.append(f'[[bots]]\nname = "b{i}"\ncommand = {command}\nargs = []\n')
    toml = tmp_path / "t.toml"
    toml.write_text("".join(lines))
    return toml


def arena(toml: Path, results: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(toml), "--results", str(results)]
        + ["--quiet", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def stored(directory: Path) -> list[StoredGame]:
    with Store.open_existing(directory) as store:
        return [
            StoredGame(k, r.players[0], r.players[1], float(r.score), r.faulty)
            for k, r in store.items()
        ]


def check_complete(toml: Path, directory: Path) -> None:
    """Every drawn game stored exactly once, and the draw on record is the one the
    stored games give (rounds.json is what a fresh draw from the results says)."""
    config = load_config(toml)
    games = stored(directory)
    draw = Rounds(config).draw(games)
    assert draw.finished
    keys = [g.key for g in games]
    assert len(keys) == len(set(keys))
    assert set(keys) == {t.game_key(n) for t in draw.tasks for n in (1, 2)}
    assert read_rounds(directory) == draw.record


def game_count(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT count(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_swiss_killed_mid_round_resumes_with_the_same_pairings(tmp_path: Path) -> None:
    """Six entrants, three rounds: SIGKILL once round 2 is under way; the rerun
    keeps rounds 1 and 2 exactly as drawn, plays the rest, and a third run has
    nothing left. The report shows the rounds and the standings' tie-breaks."""
    toml = write(tmp_path, 'format = "swiss"\nrounds = 3\nconcurrency = 2', 6, slow=True)
    results = tmp_path / "results"
    directory = results / "t"
    proc = arena(toml, results, "--no-report")
    deadline = time.monotonic() + 120
    while game_count(directory / "games.sqlite") < 7:  # round 1 is 6 games
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_none_with(str(tmp_path / "slow_bot.py"))
    before = read_rounds(directory)
    assert before is not None and len(before.drawn) == 2
    games_before = stored(directory)
    assert 7 <= len(games_before) < 18

    proc = arena(toml, results)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    after = read_rounds(directory)
    assert after is not None and after.drawn[:2] == before.drawn
    assert len(after.drawn) == 3
    check_complete(toml, directory)
    assert len(stored(directory)) == 18
    assert stored(directory)[: len(games_before)] == games_before
    md = (directory / "report.md").read_text()
    assert "## Rounds" in md and "Buchholz" in md
    proc = arena(toml, results, "--no-report")
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert "18 of 18 games stored" in out.decode()


@pytest.mark.parametrize("workers", [1, 2])
def test_knockout_of_five_runs_to_a_champion(tmp_path: Path, workers: int) -> None:
    """In the arena's process and on worker processes; byes to the top three seeds;
    the export holds every game and the Markdown report the bracket as text."""
    toml = write(tmp_path, 'format = "knockout"\nseeds = ["b0", "b1", "b2", "b3", "b4"]', 5)
    results = tmp_path / "results"
    proc = arena(toml, results, "--workers", str(workers), "-j", "2")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    directory = results / "t"
    check_complete(toml, directory)
    record = read_rounds(directory)
    assert record is not None and record.champion is not None
    lines = out.decode().splitlines()
    assert "round 1 of 3 (quarter-finals): [4] b3 – [5] b4; bye: [1] b0, [2] b1, [3] b2" in lines
    assert any(line.startswith("round 3 of 3 (final): ") for line in lines)
    assert any(line.endswith(f"champion: {record.champion}") for line in lines)
    first = record.drawn[0].boards
    assert [(b.a, b.how) for b in first if b.how == "bye"] == [
        ("b0", "bye"),
        ("b1", "bye"),
        ("b2", "bye"),
    ]
    md = (directory / "report.md").read_text()
    assert "## Bracket" in md and f"champion: {record.champion}" in md
    export = subprocess.run(
        [sys.executable, "-m", "arena.cli", "export", str(directory), "-o", "-"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert export.returncode == 0, export.stderr
    lines = [json.loads(line) for line in export.stdout.splitlines() if line.strip()]
    assert [line["key"] for line in lines] == [g.key for g in stored(directory)]


def test_swiss_disqualifies_and_stops_pairing_a_crashing_bot(tmp_path: Path) -> None:
    text = (
        'name = "dq"\nvariant = "single"\ntc = "5+0.1"\nconcurrency = 1\nformat = "swiss"\n'
        "rounds = 3\n[faults]\nrestart = false\n"
        + "".join(
            f'[[bots]]\nname = "r{i}"\ncommand = "builtin:random"\nargs = ["--seed", "{i}"]\n'
            for i in range(3)
        )
        # It starts (the pre-flight passes) and exits at its first decision.
        + f'[[bots]]\nname = "crashy"\ncommand = ["{sys.executable}", "{BAD_BOT}", "exit"]\n'
    )
    path = tmp_path / "dq.toml"
    path.write_text(text)
    for _ in range(2):  # the second run resumes and still leaves crashy out
        t = Tournament(
            parse_config(text, path), text, results_root=tmp_path, config_path=path, workers=1
        )
        trio.run(t.run)
        t.close()
    record = read_rounds(tmp_path / "dq")
    assert record is not None and len(record.drawn) == 3
    assert record.withdrawn == ["crashy"]
    for later in record.drawn[1:]:
        assert all("crashy" not in (b.a, b.b) for b in later.boards)
        assert sum(b.how == "bye" for b in later.boards) == 1
    games = stored(tmp_path / "dq")
    assert sum("crashy" in (g.player0, g.player1) for g in games) == 1


def test_swiss_on_ray(tmp_path: Path) -> None:
    """The Ray backend plays a Swiss round by round on one local instance it keeps
    between the rounds and ends with the run."""
    needs.module("ray", "install the 'ray' extra: pip install -e '.[ray]'")
    toml = write(tmp_path, 'format = "swiss"\nrounds = 2\nconcurrency = 2', 4)
    ray_tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["RAY_TMPDIR"] = str(ray_tmp)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "arena.cli", "run", str(toml), "--backend", "ray", "-q"]
            + ["--no-report", "--results", str(tmp_path / "results")],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "8 of 8 games stored" in proc.stdout
        check_complete(toml, tmp_path / "results" / "t")
        sessions = sorted(p.name for p in (ray_tmp / "ray").glob("session_2*"))
        assert len(sessions) == 1, sessions  # one instance for both rounds
        wait_none_with(str(ray_tmp), limit=30)
    finally:
        subprocess.run(["rm", "-rf", str(ray_tmp)], check=False)


def test_rounds_json_from_elsewhere_is_data(tmp_path: Path) -> None:
    (tmp_path / "rounds.json").write_text('{"format": 3}')
    assert read_rounds(tmp_path) is None
    (tmp_path / "other.json").write_text(
        json.dumps({"format": "swiss", "entrants": [], "rounds": 1})
    )
    (tmp_path / "rounds.json").unlink()
    os.symlink(tmp_path / "other.json", tmp_path / "rounds.json")
    assert read_rounds(tmp_path) is None  # a symlink is not followed


def test_knockout_stopped_mid_round_resumes_to_the_same_bracket(tmp_path: Path) -> None:
    """Eight entrants: the run stops after five games (inside round 1), the rerun
    keeps the bracket drawn so far and finishes it; every game stored once."""
    toml = write(tmp_path, 'format = "knockout"\nconcurrency = 2\nextra_pairs = 1', 8)
    text = toml.read_text()
    stored_games: list[str] = []

    def stop(key: str, pair_key: str, record: object) -> bool:
        stored_games.append(key)
        return len(stored_games) >= 5

    first = Tournament(
        parse_config(text, toml), text, results_root=tmp_path, config_path=toml, stop_when=stop
    )
    outcome = trio.run(first.run)
    first.close()
    assert not outcome.complete
    before = read_rounds(tmp_path / "t")
    assert before is not None and before.champion is None
    games_before = stored(tmp_path / "t")
    assert 5 <= len(games_before) < 14
    second = Tournament(parse_config(text, toml), text, results_root=tmp_path, config_path=toml)
    outcome = trio.run(second.run)
    second.close()
    assert outcome.complete
    after = read_rounds(tmp_path / "t")
    assert after is not None and after.champion is not None
    assert [(b.a, b.b) for b in after.drawn[0].boards] == [
        (b.a, b.b) for b in before.drawn[0].boards
    ]
    assert stored(tmp_path / "t")[: len(games_before)] == games_before
    check_complete(toml, tmp_path / "t")
