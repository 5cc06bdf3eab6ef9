"""``arena play`` and ``arena bots``: one game from the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.games import get_game


def test_bots_lists_the_builtin_ladder() -> None:
    result = CliRunner().invoke(main, ["bots"])
    assert result.exit_code == 0
    assert "random" in result.output.split()
    assert all("  " in line for line in result.output.splitlines())


def test_play_prints_actions_and_result() -> None:
    result = CliRunner().invoke(
        main, ["play", "random", "random", "--seed", "5", "--variant", "single", "--tc", "5+0.1"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("kamisado single, 5+0.1: random-1 (black) vs random-2 (gold)")
    assert lines[-1] in (
        "result 1-0 home-row",
        "result 0-1 home-row",
        "result 1-0 deadlock",
        "result 0-1 deadlock",
    )
    assert any(". " in line and "black" in line for line in lines[2:-2])


def test_play_reports_a_crashing_bot() -> None:
    result = CliRunner().invoke(main, ["play", "random", "python3 -c 'raise SystemExit(3)'", "-q"])
    assert result.exit_code == 0
    assert "result 1-0 start" in result.output  # it never started: a start fault
    assert "exited with code 3" in result.output


def test_play_missing_executable_is_one_line_error() -> None:
    result = CliRunner().invoke(main, ["play", "random", "/no/such/bot"])
    assert result.exit_code != 0
    assert (
        result.output.strip()
        == "arena: error: bot '/no/such/bot': executable '/no/such/bot' not found"
    )


AUTHOR_BOT = str(Path(__file__).with_name("author_bot.py"))


def test_play_names_a_command_bot_by_its_identity(tmp_path: Path) -> None:
    command = f"{sys.executable} {AUTHOR_BOT} --name plain-c"
    result = CliRunner().invoke(
        main, ["play", "random", command, "--seed", "1", "--variant", "single"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith("random (black) vs plain-c (gold)")
    assert "python" not in result.output.splitlines()[0]


def test_play_sends_no_opening_plies_in_history_like_run(tmp_path: Path) -> None:
    """protocol.md §2: ``history`` starts at the opening position in ``play`` as in
    ``run`` (which reads openings back from their position text)."""
    log = tmp_path / "log"
    command = f"{sys.executable} {AUTHOR_BOT} --log {log}"
    # Unconfined: the bot writes its log into tmp_path, which play cannot grant.
    args = [
        "play",
        "random",
        command,
        "--seed",
        "3",
        "--sandbox",
        "none",
        "--opening-plies",
        "3",
        "--variant",
        "single",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    moves = [
        line.split()[1:3]
        for line in result.output.splitlines()
        if line[:5].strip().rstrip(".").isdigit()
    ]  # "  1.  gold e8-f7 (3 ms)"
    mine = next(i for i, (role, _) in enumerate(moves) if role == "gold")
    first_go = next(json.loads(line) for line in log.read_text().splitlines() if '"go"' in line)
    assert first_go["history"] == [action for _, action in moves[:mine]]


def test_play_handshake_timeout_is_the_operators() -> None:
    slow = f"{sys.executable} -c 'import time; time.sleep(5)'"
    result = CliRunner().invoke(main, ["play", slow, slow, "-q", "--handshake-timeout", "0.5"])
    assert result.exit_code == 0, result.output
    assert "result 0-1 start" in result.output and "no answer within 0.500 s" in result.output


# Counts its starts (a line appended to a file of a folder it may write), then
# plays the first legal action, or with "hang" never answers at all.
COUNTING_BOT = """
import json, sys
with open(sys.argv[1], "a") as f:
    f.write("start\\n")
if sys.argv[2:] == ["hang"]:
    sys.stdin.read()
for line in sys.stdin:
    msg = json.loads(line)
    kind, out = msg["type"], None
    if kind == "hello":
        out = {"type": "identity", "protocol": 1, "name": "counter", "games": ["kamisado"]}
    elif kind in ("newgame", "ping"):
        out = {"type": "ready" if kind == "newgame" else "pong"}
    elif kind == "go":
        out = {"type": "action", "action": msg["legal"][0]}
    elif kind == "quit":
        break
    if out is not None:
        out["id"] = msg["id"]
        print(json.dumps(out), flush=True)
"""


def test_play_starts_each_bot_once(tmp_path: Path) -> None:
    """A command bot is started once, to learn its name, and plays with that process."""
    bot = tmp_path / "counting_bot.py"
    bot.write_text(COUNTING_BOT)
    first, second = tmp_path / "first.starts", tmp_path / "second.starts"
    # Unconfined: the bots write into tmp_path, which play cannot grant.
    args = ["play", f"{sys.executable} {bot} {first}", f"{sys.executable} {bot} {second}"]
    result = CliRunner().invoke(main, [*args, "-q", "--sandbox", "none", "--variant", "single"])
    assert result.exit_code == 0, result.output
    assert "home-row" in result.output or "deadlock" in result.output, result.output
    assert first.read_text() == "start\n" and second.read_text() == "start\n"


def test_play_pays_a_hanging_bots_handshake_deadline_once(tmp_path: Path) -> None:
    """A bot that never answers ``hello`` loses on its one start: it is not started
    again for the game, so its deadline is paid once (it used to be twice)."""
    bot = tmp_path / "counting_bot.py"
    bot.write_text(COUNTING_BOT)
    starts = tmp_path / "hang.starts"
    timeout = 2.0
    args = ["play", f"{sys.executable} {bot} {starts} hang", "random", "-q", "--sandbox", "none"]
    began = time.monotonic()
    result = CliRunner().invoke(main, [*args, "--handshake-timeout", str(timeout)])
    took = time.monotonic() - began
    assert result.exit_code == 0, result.output
    assert "result 0-1 start" in result.output and "no answer within 2.000 s" in result.output
    assert starts.read_text() == "start\n"
    assert timeout <= took < 2 * timeout, took


ARENA = [sys.executable, "-m", "arena.cli"]


def _play_through_a_pipe(*args: str) -> list[str]:
    done = subprocess.run(
        [*ARENA, "play", *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    return done.stdout.splitlines()


def test_play_ends_a_battle_with_its_impacts_and_casualties() -> None:
    """The figures the report shows, on the result line, through a pipe: a tie at the
    end needs no adding up by hand to see that the defender won it."""
    lines = _play_through_a_pipe(
        "battle-greedy", "battle-greedy", "--game", "sekigahara", "--seed", "1"
    )
    final = get_game("sekigahara").state_from_text(lines[-4].removeprefix("final: "))
    outcome = final.outcome()
    assert outcome is not None
    impacts, casualties = outcome.details["impacts"], outcome.details["casualties"]
    a, d = impacts["attacker"], impacts["defender"]
    assert lines[-1] == (
        f"result {'1-0' if a > d else '0-1'} battle; impact {a}-{d}, "
        f"casualties {casualties['attacker']}-{casualties['defender']} (attacker-defender)"
    )
    # the rules' arithmetic (7 impact a block, one more for the loser), from the line alone
    numbers = re.fullmatch(
        r"result (\S+) battle; impact (\d+)-(\d+), casualties (\d+)-(\d+) .*", lines[-1]
    )
    assert numbers is not None
    result, a, d, lost_a, lost_d = numbers[1], *map(int, numbers.groups()[1:])
    assert result == ("1-0" if a > d else "0-1")  # a tie goes to the defender
    assert (lost_a, lost_d) == (d // 7 + (result == "0-1"), a // 7 + (result == "1-0"))
    quiet = _play_through_a_pipe(
        "battle-greedy", "battle-greedy", "--game", "sekigahara", "--seed", "1", "-q"
    )
    assert quiet == [lines[-1]]


def test_play_ends_a_kamisado_match_with_its_round_score() -> None:
    lines = _play_through_a_pipe("greedy", "random", "--seed", "2", "--tc", "5+0.1", "-q")
    figures = re.fullmatch(
        r"result (1-0|0-1) (home-row|deadlock); points (\d)-(\d), rounds won (\d)-(\d) "
        r"\(black-gold\)",
        lines[-1],
    )
    assert figures is not None, lines[-1]
    points, rounds = [int(figures[3]), int(figures[4])], [int(figures[5]), int(figures[6])]
    winner = 0 if figures[1] == "1-0" else 1
    assert points[winner] >= 3 > points[1 - winner]  # a standard match is to 3 points
    assert all(r <= p for r, p in zip(rounds, points, strict=True)) and rounds[winner] >= 1
    single = _play_through_a_pipe("greedy", "random", "--seed", "2", "--variant", "single", "-q")
    assert "; " not in single[-1]  # one round: no round score to show
