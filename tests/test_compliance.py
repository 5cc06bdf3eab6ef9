"""The compliance checker against real bots: the built-in one passes, broken ones
fail exactly the checks they break, and a failure does not stop later checks."""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import pytest
from fake_game import fake_registered  # noqa: F401  (fixture)

from arena.engine.sandbox import SandboxSettings
from arena.games import get_game
from arena.tools.compliance import Check, check_bot, decisions, run_checks

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = [sys.executable, str(ROOT / "bots" / "random_bot.py"), "--seed", "1"]
AUTHOR_BOT = [sys.executable, str(Path(__file__).with_name("author_bot.py"))]

BROKEN = r"""
import json, sys, time

mode = sys.argv[1]
if mode == "exit_at_start":
    sys.exit(2)

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    msg = json.loads(line)
    t = msg["type"]
    if t == "hello":
        send({"type": "identity", "id": msg["id"],
              "protocol": 2 if mode == "bad_identity" else 1,
              "name": "broken", "author": "tests", "version": "0",
              "games": ["chess"] if mode == "bad_identity" else ["kamisado"]})
    elif t == "newgame":
        send({"type": "ready", "id": msg["id"]})
    elif t == "ping":
        send({"type": "pong", "id": msg["id"]})
    elif t == "gameover":
        if mode == "chatty_gameover":
            send({"type": "pong", "id": 0})
    elif t == "quit":
        if mode != "never_quit":
            sys.exit(0)
    elif t == "go":
        legal = msg["legal"]
        if mode == "crash_on_regroup" and legal == ["left", "right"]:
            sys.exit(4)
        action = "z9-z9" if mode == "illegal" else legal[-1]
        send({"type": "action", "id": msg["id"], "action": action})
if mode == "never_quit":
    time.sleep(600)
"""


@pytest.fixture
def broken(tmp_path: Path):
    script = tmp_path / "broken.py"
    script.write_text(textwrap.dedent(BROKEN))
    return lambda mode: [sys.executable, str(script), mode]


def failed(checks: list[Check]) -> set[str]:
    return {c.name for c in checks if not c.passed}


GO_CHECKS = {
    "go: start position",
    "go: second player",
    "go: Sumo push available",
    "go: regroup choice",
    "go: marathon match",
}
ALL_CHECKS = [
    "start",
    "identity",
    "protocol version",
    "supports kamisado",
    "ping",
    "newgame",
    *sorted(GO_CHECKS, key=lambda n: [p.name for p in decisions(get_game("kamisado"))].index(n)),
    "gameover",
    "quit",
]


async def test_random_bot_passes_every_check():
    checks = await check_bot(RANDOM_BOT)
    assert [c.name for c in checks] == ALL_CHECKS
    assert failed(checks) == set(), [c.line() for c in checks]
    details = {c.name: c.detail for c in checks}
    assert "'random'" in details["identity"]
    assert "150 actions of history" in details["go: marathon match"]
    assert "status 0" in details["quit"]


def test_positions_cover_the_tricky_cases():
    """The push and regroup decisions offer what their names promise, and every
    position is a real decision of its player."""
    by_name = {p.name: p for p in decisions(get_game("kamisado"))}
    assert "d4-d5" in by_name["go: Sumo push available"].state.legal_actions()
    assert by_name["go: regroup choice"].state.legal_actions() == ["left", "right"]
    assert by_name["go: second player"].state.current_player() == 1
    marathon = by_name["go: marathon match"]
    assert marathon.variant == "marathon" and len(marathon.state.history(0)) >= 100
    for p in by_name.values():
        assert not p.state.is_terminal() and len(p.state.legal_actions()) >= 2


@pytest.mark.parametrize(
    ("mode", "expected_failures", "fragment"),
    [
        ("illegal", GO_CHECKS, "illegal action 'z9-z9'"),
        ("never_quit", {"quit"}, "still running 1 s after quit"),
        ("crash_on_regroup", {"go: regroup choice"}, "crash: exited with code 4"),
        ("bad_identity", {"protocol version", "supports kamisado"}, "version 2"),
        ("chatty_gameover", {"gameover"}, "protocol"),
        ("exit_at_start", set(ALL_CHECKS), "exited with code 2"),
    ],
)
async def test_broken_bot_fails_the_right_checks(broken, mode, expected_failures, fragment):
    checks = await check_bot(broken(mode), timeout=3.0)
    assert [c.name for c in checks] == ALL_CHECKS
    assert failed(checks) == set(expected_failures), [c.line() for c in checks]
    first_failure = next(c for c in checks if not c.passed)
    assert fragment in first_failure.detail, first_failure.line()


def test_run_checks_prints_one_line_per_check_and_returns_status(broken):
    lines: list[str] = []
    assert run_checks(RANDOM_BOT, game="kamisado", echo=lines.append) == 0
    assert lines[0] == "checking kamisado, as --game says"
    assert len(lines) == len(ALL_CHECKS) + 2 and lines[-1].startswith("all 13 checks passed")
    lines.clear()
    assert run_checks(broken("illegal"), echo=lines.append, timeout=3.0) == 1
    assert lines[0].startswith("checking kamisado, the game the bot declares")
    assert lines[7].startswith("FAIL go: start position: illegal action 'z9-z9'")
    assert "5 of 13 checks failed" in lines[-2]


def test_without_game_a_sekigahara_only_bot_is_checked_for_sekigahara_and_passes():
    """An outside author's bot that plays only the battle: ``arena check-bot -- BOT``
    with no ``--game`` checks Sekigahara, says so, and every check passes; the whole
    games say they check legality, results by seat, not strength."""
    lines: list[str] = []
    bot = [*AUTHOR_BOT, "--games", "sekigahara"]
    assert run_checks(bot, games=2, echo=lines.append) == 0, lines
    assert lines[0] == (
        "checking sekigahara, the game the bot declares "
        "(games ['sekigahara']; --game G for another)"
    )
    checks = lines[1:-1]
    assert all(line.startswith("PASS ") for line in checks), lines
    assert "PASS supports sekigahara: declared games ['sekigahara']" in checks
    assert not any("kamisado" in line or "Sumo" in line for line in checks)
    stage = [line for line in checks if line.startswith("PASS games: ")]
    assert len(stage) == 4  # battle and siege, against random and battle-greedy
    for line in stage:
        assert "2 games, all legal, no fault; by seat (not a strength test): " in line, line
        assert "as attacker +" in line and "as defender +" in line, line
    assert lines[-1].startswith(f"all {len(checks)} checks passed")


def test_without_game_a_bot_of_both_games_is_checked_for_each():
    lines: list[str] = []
    assert (
        run_checks([*AUTHOR_BOT, "--games", "sekigahara/battle,kamisado"], echo=lines.append) == 0
    )
    declared = "(games ['sekigahara/battle', 'kamisado'])"
    headers = [line for line in lines if line.startswith("checking ")]
    assert headers == [
        f"checking sekigahara, game 1 of the 2 the bot declares {declared}",
        f"checking kamisado, game 2 of the 2 the bot declares {declared}",
    ]
    assert "PASS supports sekigahara: declared games ['sekigahara/battle', 'kamisado']" in lines
    assert "PASS supports kamisado: declared games ['sekigahara/battle', 'kamisado']" in lines
    total = len(lines) - len(headers) - 1
    # Sekigahara's siege is not declared: its decision is not asked, and says so.
    skipped = [line for line in lines if line.startswith("SKIP ")]
    assert skipped == [
        "SKIP go: siege game: sekigahara/siege is not declared (games: sekigahara/battle, kamisado)"
    ], lines
    assert lines[-1].startswith(f"all {total - 1} checks run passed, 1 skipped, in ")


async def test_an_undeclared_game_names_the_one_to_check_instead():
    checks = await check_bot([*AUTHOR_BOT, "--games", "sekigahara"], game="kamisado")
    supports = next(c for c in checks if c.name == "supports kamisado")
    assert not supports.passed
    assert supports.detail == (
        "declared games ['sekigahara']: 'kamisado' missing, so it would never be offered it "
        "(it declares sekigahara: check with --game sekigahara)"
    )


def test_a_command_relative_to_the_current_folder_runs_as_typed(tmp_path, monkeypatch):
    """``arena check-bot -- python3 mybot.py`` from the bot's folder: the script is
    found although the sandbox starts the bot elsewhere (its program's folder, as
    ``arena play`` does), not looked up in its private /tmp."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "mybot.py").write_text(Path(AUTHOR_BOT[1]).read_text())
    monkeypatch.chdir(folder)
    lines: list[str] = []
    status = run_checks(
        [sys.executable, "mybot.py", "--games", "sekigahara"],
        echo=lines.append,
        sandbox=SandboxSettings(mode="bwrap"),
    )
    assert status == 0, lines
    assert lines[1].startswith("PASS start: started and answered hello")


async def test_whole_games_catch_a_bot_that_fails_only_after_a_regroup():
    """The bot answers every single request of the earlier checks, but nonsense when
    it must open a later round with a free choice: only whole games show it."""
    bot = [*AUTHOR_BOT, "--late-free-choice", "--games", "kamisado/standard"]
    checks = await check_bot(bot, games=2)
    assert failed(checks) == {"games: standard vs random"}, [c.line() for c in checks]
    detail = next(c.detail for c in checks if not c.passed)
    assert "illegal action 'z9-z9'" in detail and "game 1 (as black, player 0)" in detail
    position = detail.split("position: ")[1].split(";")[0]
    state = get_game("kamisado").state_from_text(position)  # the position it faced
    obs = state.observation(0)
    assert obs["round"] > 1 and obs["required_colour"] is None and len(state.legal_actions()) > 2
    assert len([c for c in checks if c.name.startswith("go:")]) == len(GO_CHECKS)
    assert all(c.passed for c in checks if c.name.startswith("go:"))
    marathon = next(c for c in checks if c.name == "go: marathon match")
    assert marathon.skipped and marathon.line().startswith(
        "SKIP go: marathon match: kamisado/marathon is not declared"
    )


def test_a_series_not_played_is_a_skip_with_its_reason(
    fake_registered,  # noqa: F811  (the fixture)
    monkeypatch,
) -> None:
    """A game whose strongest built-in bot does not play it: that series is not run,
    and says SKIP and why, not PASS; the built-in random plays the game (any game it
    is offered), so its series is played."""
    monkeypatch.setattr(fake_registered, "strongest_bot", "battle-greedy", raising=False)
    lines: list[str] = []
    assert run_checks(RANDOM_BOT, game="fake", games=2, echo=lines.append) == 0, lines
    assert "PASS supports fake: declared games ['fake']" in lines
    for variant in ("standard", "long"):
        assert (
            f"SKIP games: {variant} vs battle-greedy: not run: the built-in battle-greedy "
            + (f"does not play fake/{variant}")
            in lines
        ), lines
        played = next(line for line in lines if line.startswith(f"PASS games: {variant} vs random"))
        assert "2 games, all legal, no fault" in played
    assert not any(line.startswith("PASS") and "not run" in line for line in lines)
    assert re.match(r"all \d+ checks run passed, 2 skipped, in ", lines[-1]), lines[-1]


async def test_whole_games_pass_a_sound_bot_in_every_declared_variant():
    checks = await check_bot([*AUTHOR_BOT, "--games", "kamisado/single,kamisado/standard"], games=2)
    games = {c.name: c for c in checks if c.name.startswith("games")}
    assert set(games) == {
        f"games: {v} vs {o}" for v in ("single", "standard") for o in ("random", "alphabeta")
    }
    assert all(c.passed for c in checks), [c.line() for c in checks]
    assert "later rounds opened with a free choice" in games["games: standard vs alphabeta"].detail


async def test_a_bot_of_one_variant_passes_in_that_variant(tmp_path: Path) -> None:
    """A bot that plays single rounds only is never offered a standard match: it
    declares Kamisado (one variant of it), and every check is played in that one."""
    log = tmp_path / "single.log"
    command = [*AUTHOR_BOT, "--games", "kamisado/single", "--log", str(log)]
    checks = await check_bot(command, games=1, sandbox=SandboxSettings(mode="none"))
    assert all(c.passed for c in checks), [c.line() for c in checks]
    supports = next(c for c in checks if c.name == "supports kamisado")
    assert supports.detail.endswith("(checked in kamisado/single)")
    assert {c.name for c in checks if c.name.startswith("games")} == {
        f"games: single vs {o}" for o in ("random", "alphabeta")
    }
    received = [json.loads(line) for line in log.read_text().splitlines()]
    offered = {m["variant"] for m in received if m["type"] == "newgame"}
    assert offered == {"single"}


async def test_declared_options_are_checked_and_set():
    spec = {"name": "Hash", "type": "int", "default": 64, "min": 1, "max": 1024}
    good = await check_bot([*AUTHOR_BOT, "--options", json.dumps([spec])])
    option = next(c for c in good if c.name == "options")
    assert option.passed and "3 values set" in option.detail, option.line()
    bad = await check_bot([*AUTHOR_BOT, "--options", json.dumps([{**spec, "default": 0}])])
    option = next(c for c in bad if c.name == "options")
    assert not option.passed and "default 0 does not fit" in option.detail
    plain = await check_bot(AUTHOR_BOT)
    assert "options" not in [c.name for c in plain]


@pytest.mark.parametrize(
    ("mode", "reason"), [("exit", "crash: testbot: exited with code"), ("sleep", "time: ")]
)
async def test_whole_games_report_a_crash_or_a_time_loss_with_the_position(mode, reason):
    """The bot behaves for the five single decisions, then fails at its eighth ``go``:
    the third decision of the first whole game."""
    bad = [sys.executable, str(Path(__file__).with_name("bad_bot.py")), mode, "3", "--at", "8"]
    checks = await check_bot(bad, games=1, tc="1+0.01")
    failures = [c for c in checks if not c.passed]
    assert [c.name for c in failures] == ["games: single vs random"], [c.line() for c in checks]
    detail = failures[0].detail
    assert "game 1 (as black, player 0)" in detail and reason in detail, detail
    position = detail.split("position: ")[1].split(";")[0]
    assert get_game("kamisado").state_from_text(position).current_player() == 0
