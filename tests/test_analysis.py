"""``arena analyze`` on real tournaments: blunders found at their ply, games
without mistakes showing none, resuming after SIGKILL without touching the
games, and bad input as one line."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from procs import children_with
from test_store import as_version_1

from arena.analysis.figures import Figures, Mistake, game_calls
from arena.analysis.store import ANALYSIS_NAME, AnalysisStore, GamesReader
from arena.analysis.values import UNKNOWN, PlyValue
from arena.cli import main
from arena.match.record import ActionRecord, GameRecord
from arena.report import fmt
from arena.storage.store import Store

TESTS = Path(__file__).resolve().parent
WON_FOR_BLACK = "ob3r2/3y2n1/GN5g/6p1/2v5/8/2R1V3/3YP1BO b b single 0-0 1 -"
"""Black wins this round in 5 plies (g1-g4 first); g1-h2 gives Gold a move onto
rank 1, so Black playing it throws the won round away."""
BLUNDER = "g1-h2"


def run_ok(args: list[str]) -> str:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.output


def blunder_tournament(tmp_path: Path) -> Path:
    """The scripted bot and alphabeta play the opening above, sides swapped:
    as Black the scripted bot blunders at once; as Black alphabeta wins."""
    (tmp_path / "openings.txt").write_text(WON_FOR_BLACK + "\n")
    script = [sys.executable, str(TESTS / "scripted_bot.py"), WON_FOR_BLACK, BLUNDER]
    toml = tmp_path / "t.toml"
    toml.write_text(
        f"""
name = "blunder"
variant = "single"
tc = "10+0.1"
games_per_pairing = 2
seed = 1
[openings]
file = "openings.txt"
[[bots]]
name = "scripted"
command = {script!r}
[[bots]]
name = "alphabeta"
command = "builtin:alphabeta"
""".replace("'", '"')
    )
    output = run_ok(
        ["run", str(toml), "--results", str(tmp_path / "results"), "-q", "--workers", "1"]
        + ["--analyze", "--budget-ms", "500"]
    )
    assert "analysed 2 games" in output
    # Through a pipe the standings end with the analysis as plain lines.
    lines = output.splitlines()
    lead = next(i for i, line in enumerate(lines) if line.startswith("analysis: 2 of 2 games"))
    assert " ".join(lines[lead + 1].split()) == " ".join(fmt.ANALYSIS_HEADERS)
    scripted = next(line for line in lines[lead + 2 :] if line.startswith("scripted"))
    assert scripted.split()[3] == "1"  # its blunder
    return tmp_path / "results" / "blunder"


def test_a_thrown_away_round_is_a_blunder_at_its_ply(tmp_path: Path) -> None:
    """``arena run --analyze``: the blunder at the ply it was played, the round
    decided by it; the other game, played without a mistake, shows none."""
    results = blunder_tournament(tmp_path)
    with Store.open_existing(results) as store, AnalysisStore.open_readonly(results) as analysis:
        games = {record.players[0]: record for _, record in store.items()}
        keys = {record.players[0]: key for key, record in store.items()}
        assert analysis is not None
        thrown = games["scripted"]
        values = analysis.values(keys["scripted"])
        assert values is not None
        assert thrown.actions[0].action == BLUNDER
        calls = game_calls(thrown, values.values)
        assert values.values[0].winner == 0 and values.values[0].distance == 5
        assert calls.mistakes == [Mistake(0, 0, True, values.values[0].best)]
        (part,) = calls.parts
        assert (part.winner, part.decided, part.decisive) == (1, 1, 0)  # decided by the blunder
        clean = games["alphabeta"]
        values = analysis.values(keys["alphabeta"])
        assert values is not None
        calls = game_calls(clean, values.values)
        assert calls.mistakes == [] and calls.proven_decisions[0] > 0
        (part,) = calls.parts
        # Won from the first position on: decided before the first move.
        assert (part.winner, part.decided, part.decisive) == (0, 0, None)
    report = (results / "report.md").read_text()
    assert "## Analysis" in report
    assert "ply 1" in report and BLUNDER in report
    assert "2 rounds ended, 1 of them decided from their first position" in report
    assert "1 blunder, 1 missed win." in report


def ply(player: int, winner: int, best: str = "x", choices: int = 3, part: int = 1) -> PlyValue:
    return PlyValue(part, player, winner, 3, best, choices)


def record_of(players: list[int], forced: set[int] = frozenset()) -> GameRecord:  # type: ignore[assignment]
    actions = [ActionRecord(p, f"a{i}", forced=i in forced) for i, p in enumerate(players)]
    return GameRecord(
        game="kamisado",
        variant="standard",
        players=["A", "B"],
        opening="",
        actions=actions,
        score=1.0,
        reason="score",
    )


def test_definitions_on_hand_made_values() -> None:
    """Blunders and missed wins count decisions only (not forced or single
    actions, not regroup choices); a push gives the same player two plies in a
    row; a round is decided where the value last changes."""
    U = UNKNOWN
    values = [
        ply(0, U),  # 0: A to move, unknown
        ply(1, 1),  # 1: B proven won; B pushes...
        ply(1, 1),  # 2: ...and moves again, still won
        ply(0, U),  # 3: after B's move the win is not proven: a missed win
        ply(0, 0),  # 4: A's move made it a proven win for A; A pushes
        ply(1, 0, choices=1),  # 5: B lost, a single action (forced)
        ply(0, 0),  # 6: A wins the round with its move
        PlyValue(1, 0, 0, 0, "", 0),  # 7: round 1 over (A won): A's regroup choice
        ply(1, U, part=2),  # 8: round 2, B to move, unknown
        ply(0, 0, part=2),  # 9: A proven won...
        ply(1, 1, part=2),  # 10: ...A's move made it B's: a blunder
        PlyValue(2, 1, 1, 0, "", 0),  # 11: round 2 over, B won (B's regroup choice)
        ply(0, U, part=3),  # 12: round 3, nothing proven...
        ply(1, U, part=3),  # 13
        PlyValue(3, 0, 0, 0, "", 0),  # 14: ...until A won it
    ]
    record = record_of([0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1], forced={5})
    calls = game_calls(record, values)
    assert calls.mistakes == [Mistake(2, 1, False, "x"), Mistake(9, 0, True, "x")]
    assert (calls.blunders, calls.missed) == (1, 2)  # every blunder is a missed win too
    assert calls.decisions == [6, 5]  # ply 5 was forced, plies 7 and 11 regroups
    assert calls.proven_decisions == [3, 3]
    round1, round2, round3 = calls.parts
    assert (round1.first, round1.end, round1.winner) == (0, 7, 0)
    assert (round1.decided, round1.decisive) == (4, 3)
    assert (round2.first, round2.end, round2.winner) == (8, 11, 1)
    assert (round2.decided, round2.decisive) == (10, 9)
    assert (round3.winner, round3.decided, round3.decisive) == (0, 14, 13)
    figures = Figures()
    figures.add(record, calls, values)
    a, b = figures.bots["A"], figures.bots["B"]
    # Each was proven to win a round it then lost, and won one from a lost position;
    # A's round 3, never proven before it ended, is not a proven-won round.
    assert (a.parts_won_proven, a.converted, a.wins_from_lost) == (2, 1, 1)
    assert (b.parts_won_proven, b.converted, b.wins_from_lost) == (2, 1, 1)
    assert (a.blunders, a.missed, b.blunders, b.missed) == (1, 1, 0, 1)
    assert (figures.parts, figures.decided_at_start, figures.plies_after_decision) == (3, 0, 4)
    unfinished = game_calls(record_of([0, 1, 1]), values[:4])
    assert [(p.end, p.decided) for p in unfinished.parts] == [(None, None)]


@pytest.mark.parametrize("kill", ["SIGKILL", "SIGINT", "a worker"])
def test_a_killed_analysis_resumes_and_never_changes_the_games(tmp_path: Path, kill: str) -> None:
    """Killed (SIGKILL), interrupted (SIGINT, a terminal's Ctrl-C) or losing a
    worker (SIGKILL to one): its workers go with it, the games it finished are
    kept, a rerun does the rest, and the games' database is byte for byte what
    it was."""
    toml = tmp_path / "t.toml"
    toml.write_text(
        """
name = "kill"
variant = "single"
tc = "10+0.1"
games_per_pairing = 8
seed = 3
[openings]
plies = 2
[[bots]]
name = "greedy"
command = "builtin:greedy"
[[bots]]
name = "random"
command = "builtin:random"
"""
    )
    run_ok(["run", str(toml), "--results", str(tmp_path), "-q", "--no-report"])
    results = tmp_path / "kill"
    games_db = results / "games.sqlite"
    before = hashlib.sha256(games_db.read_bytes()).hexdigest()
    command = [sys.executable, "-m", "arena.cli", "analyze", str(results)]
    command += ["--budget-ms", "150", "--workers", "2", "--no-report"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_ctrl_c_heard
    )
    db = results / ANALYSIS_NAME
    deadline = time.monotonic() + 120
    analysed = 0
    while time.monotonic() < deadline and process.poll() is None:
        if db.exists():
            try:
                with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                    analysed = conn.execute("SELECT count(*) FROM games").fetchone()[0]
            except sqlite3.Error:
                analysed = 0
            if analysed:
                break
        time.sleep(0.05)
    assert process.poll() is None, "the analysis ended before it could be killed"
    assert 0 < analysed < 8
    workers = children_with(process.pid, "multiprocessing")
    assert workers  # the worker processes (and multiprocessing's resource tracker)
    # Held still while the signal goes in: on a loaded machine the last games
    # could otherwise be solved between the count above and the signal, and the
    # run would end as a finished one instead of an interrupted one.
    solving = children_with(process.pid, "spawn_main")
    for pid in solving:
        os.kill(pid, signal.SIGSTOP)
    if kill == "a worker":
        os.kill(solving[0], signal.SIGKILL)
    else:
        os.kill(process.pid, getattr(signal, kill))
    for pid in solving:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    _, err = process.communicate(timeout=60)
    last = (err.decode().strip().splitlines() or [""])[-1]
    if kill == "SIGINT":
        assert process.returncode == 130 and last.startswith("interrupted: ")
    elif kill == "a worker":
        assert process.returncode == 1 and "a worker process died" in last, err
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)  # they died with it
    output = run_ok(["analyze", str(results), "--workers", "2", "--budget-ms", "150"])
    done = int(output.split("(")[1].split()[0])
    assert done >= analysed and "analysed" in output
    with AnalysisStore.open_readonly(results) as analysis:
        assert analysis is not None and len(analysis.done()) == 8
    assert hashlib.sha256(games_db.read_bytes()).hexdigest() == before


def _ctrl_c_heard() -> None:
    """SIGINT as a terminal's shell leaves it. A shell starts a background job with
    SIGINT ignored, and a child inherits that: pytest run as ``cmd &`` (as a CI
    runner may) would start an analysis deaf to Ctrl-C, which then finishes."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def one_line_error(args: list[str], *expected: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code not in (0,), result.output
    assert result.output.strip().count("\n") == 0, result.output
    assert "Traceback" not in result.output
    for text in expected:
        assert text in result.output, result.output


def fake_store(directory: Path, game: str) -> None:
    with Store.open(directory, name="x", config_text="", fingerprint="f") as store:
        store.add_game(
            "p/1",
            "p",
            GameRecord(
                game=game,
                variant="battle",
                players=["a", "b"],
                opening="",
                actions=[],
                score=1.0,
                reason="battle",
            ),
        )


def test_a_store_of_schema_version_1_is_read_as_it_is(tmp_path: Path) -> None:
    # Results stored before the rating list's columns: the same records, read
    # without being migrated or written.
    fake_store(tmp_path, "kamisado")
    db = tmp_path / "games.sqlite"
    as_version_1(db)
    before = db.read_bytes(), db.stat().st_mtime_ns
    with GamesReader(tmp_path) as games:
        assert games.count() == 1 and games.first_game() == "kamisado"
        assert [key for key, _ in games.rows()] == ["p/1"]
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    one_line_error(["analyze", str(tmp_path / "none")], "no such results folder")
    one_line_error(["analyze", str(tmp_path)], "no results", "run a tournament first")
    one_line_error(["analyze", str(tmp_path), "--budget-ms", "60001"], "--budget-ms")
    battle = tmp_path / "battle"
    fake_store(battle, "sekigahara")
    one_line_error(["analyze", str(battle)], "sekigahara games cannot be analysed", "hidden")
    old = tmp_path / "old"
    fake_store(old, "kamisado")
    with sqlite3.connect(old / "games.sqlite") as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    one_line_error(["analyze", str(old)], "games.sqlite", "another arena version")
    other = tmp_path / "other"
    fake_store(other, "kamisado")
    with sqlite3.connect(other / ANALYSIS_NAME) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '99')")
    before = (other / ANALYSIS_NAME).read_bytes()
    one_line_error(["analyze", str(other)], ANALYSIS_NAME, "delete it")
    assert (other / ANALYSIS_NAME).read_bytes() == before  # not touched
    battle_file = Path(__file__).resolve().parents[1] / "examples" / "battle.toml"
    one_line_error(  # before any game is played
        ["run", str(battle_file), "--analyze", "--results", str(tmp_path / "r")],
        "--analyze: sekigahara games cannot be analysed",
    )
    assert not (tmp_path / "r").exists()
    busy = tmp_path / "busy"
    fake_store(busy, "kamisado")
    with AnalysisStore.open(busy):  # another arena analyze of the same folder
        one_line_error(["analyze", str(busy)], "being written by another arena analyze")


@pytest.mark.parametrize("workers", [1])
def test_analysis_of_an_empty_tournament_says_so(tmp_path: Path, workers: int) -> None:
    with Store.open(tmp_path, name="x", config_text="", fingerprint="f"):
        pass
    one_line_error(["analyze", str(tmp_path), "--workers", str(workers)], "no games")


ARENA_WITH_A_SOLVER = r"""
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from arena.analysis.run import _worker_init

def long_solve():
    print(os.getpid(), flush=True)
    time.sleep(600)  # busy: only the kernel ends it once its parent is gone

if __name__ == "__main__":
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        1, mp_context=context, initializer=_worker_init, initargs=("kamisado",)
    ) as pool:
        pool.submit(long_solve).result()
"""


async def test_a_solver_dies_when_the_arena_is_sigkilled(tmp_path: Path) -> None:
    """The analysis's worker processes die with the arena (``die_with_parent``, as
    bots do), even in the middle of a long solve, when no ``finally`` runs."""
    import trio
    from procs import processes

    script = tmp_path / "arena_that_dies.py"
    script.write_text(ARENA_WITH_A_SOLVER)
    arena = await trio.lowlevel.open_process(
        [sys.executable, str(script)], stdout=subprocess.PIPE, cwd=tmp_path
    )
    try:
        line = b""
        with trio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await arena.stdout.receive_some(64)
        worker = int(line)
    finally:
        arena.kill()
        await arena.wait()
        await arena.stdout.aclose()

    def alive() -> bool:
        return any(pid == worker and state != "Z" for pid, state, *_ in processes())

    with trio.move_on_after(5):
        while alive():
            await trio.sleep(0.01)
    survived = alive()
    if survived:
        os.kill(worker, signal.SIGKILL)  # leaves nothing behind
    assert not survived, f"solver {worker} outlived the arena"
