"""The built-in bots and the example bots in other languages.

Bots play complete games through the real arena (engine subprocesses, referee,
clocks) against ``random`` and must never lose by a fault: a lost game is fine,
a forfeit is a bug. Their decision functions are also tested directly on
hand-built positions, where the right answer is known.
"""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path

import needs
import pytest
import trio
from arena.bots.compiled_search import CompiledSearcher
from arena.bots.greedy_bot import choose_move
from arena.bots.kamisado_eval import WIN_BOUND, winning_move

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.games import get_game
from arena.games.kamisado.notation import move_to_text, text_to_move, text_to_position
from arena.games.kamisado.position import PLAY
from arena.match.clock import TimeControl
from arena.match.record import FAULT_REASONS, GameRecord
from arena.match.referee import play_game
from arena.plan.builtins import BUILTIN, resolve_builtin

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "bots" / "examples"

# (variant, time control, opening plies, games): a quick single round on a fixed
# move time, standard matches on banked time, and the long and marathon matches
# (Double and Triple Sumo pushes) once each way, so every match kind and both
# clock kinds are exercised.
MATCHES = [
    ("single", "movetime=0.05", 0, 2),
    ("standard", "2+0.02", 2, 4),
    ("long", "movetime=0.03", 2, 2),
    ("marathon", "3+0.02", 0, 2),
]
GAMES = sum(m[3] for m in MATCHES)


async def play_games(command: list[str], name: str) -> list[GameRecord]:
    """``command`` against ``random`` in every match of :data:`MATCHES`, both colours.

    The same two processes play every game, across match kinds, as in a
    tournament: a bot must handle ``newgame`` for any variant it declared.
    """
    game = get_game("kamisado")
    rng = random.Random(11)
    records = []
    random_command = [*resolve_builtin("random"), "--seed", "5"]
    async with (
        Engine(EngineConfig(name=name, command=command)) as bot,
        Engine(EngineConfig(name="random", command=random_command)) as rnd,
    ):
        for variant, tc, plies, games in MATCHES:
            control = TimeControl.parse(tc)
            for i in range(games):
                opening = (
                    game.random_opening(variant, plies, rng) if plies else game.new_state(variant)
                )
                engines = [bot, rnd] if i % 2 == 0 else [rnd, bot]
                record = await play_game(
                    game, opening, engines, [control, control], variant=variant
                )
                records.append(record)
        assert bot.starts == 1, "the bot was restarted: it faulted somewhere"
    return records


def assert_clean(records: list[GameRecord], name: str) -> None:
    for r in records:
        assert r.reason not in FAULT_REASONS, (r.reason, r.detail, r.stderr_tails)
        assert r.reason in ("home-row", "deadlock"), r.reason
        assert r.players.count(name) == 1


@pytest.mark.parametrize("name", ["greedy", "alphabeta", "mcts"])
async def test_builtin_bot_plays_clean_games_against_random(name: str) -> None:
    records = await play_games(resolve_builtin(name) + ["--seed", "1"], name)
    assert_clean(records, name)
    assert len(records) == GAMES
    # A real bot beats random nearly always; allow one unlucky game.
    won = sum((r.score == 1.0) == (r.players[0] == name) for r in records)
    assert won >= GAMES - 1, [(r.players, r.result) for r in records]
    if name in ("alphabeta", "mcts"):
        infos = [a.info for r in records for a in r.actions if a.info]
        assert infos and all("pv" in info for info in infos)


def test_builtin_registry_lists_the_ladder() -> None:
    for name in ("random", "greedy", "alphabeta", "mcts"):
        script, description = BUILTIN[name]
        assert (ROOT / "bots" / script).exists()
        assert description


# ---------------------------------------------------------------- greedy

# Found by exhaustive checks (see the asserts): Black to move in each.
WIN_POSITIONS = [
    ("1b3r1n/1R1v1G2/6g1/P5p1/8/1Y1o4/4Vy2/N5BO b p standard 0-0 1 -", "a5-a8"),
    ("ob2yrg1/3p4/2v5/8/3n3O/8/NG6/2RYPVB1 b o standard 0-0 1 -", "h4-d8"),
]
AVOID_POSITIONS = [
    "obv1yrgn/8/8/P5p1/8/8/8/NGRY1VBO b r standard 0-0 1 -",
    "1bv1yrgn/8/o1R5/P5p1/8/8/8/NG1Y1VBO b g standard 0-0 1 -",
]


@pytest.mark.parametrize(("text", "win"), WIN_POSITIONS)
def test_greedy_takes_an_immediate_win(text: str, win: str) -> None:
    pos = text_to_position(text)
    assert len(pos.legal_moves()) > 3
    for seed in range(5):
        move = choose_move(pos, random.Random(seed))
        assert move_to_text(move)[-1] == win[-1] == "8"
        pos.make(move)
        assert pos.phase != PLAY and pos.last_winner == 0
        pos.unmake()


def losing_moves(text: str) -> set[str]:
    """Moves after which the opponent can reach the home row at once."""
    pos = text_to_position(text)
    out = set()
    for m in pos.legal_moves():
        pos.make(m)
        if pos.phase == PLAY and pos.side != 0 and winning_move(pos) >= 0:
            out.add(move_to_text(m))
        pos.unmake()
    return out


@pytest.mark.parametrize("text", AVOID_POSITIONS)
def test_greedy_avoids_handing_over_an_immediate_win(text: str) -> None:
    pos = text_to_position(text)
    losing = losing_moves(text)
    assert winning_move(pos) < 0
    assert 2 <= len(losing) < len(pos.legal_moves())
    for seed in range(20):
        assert move_to_text(choose_move(pos, random.Random(seed))) not in losing


def test_greedy_chooses_a_regroup() -> None:
    pos = text_to_position("1b3r1n/1R1v1G2/6g1/P5p1/8/1Y1o4/4Vy2/N5BO b p standard 0-0 1 -")
    pos.make(text_to_move("a5-a8"))
    assert pos.legal_moves() == [text_to_move("left"), text_to_move("right")]
    assert move_to_text(choose_move(pos, random.Random(1))) in ("left", "right")


# ---------------------------------------------------------------- examples


async def test_js_example_plays_clean_games() -> None:
    command = [needs.node(), str(EXAMPLES / "js" / "kamisado_bot.js"), "--seed", "3"]
    assert_clean(await play_games(command, "example-js"), "example-js")


async def test_c_example_builds_and_plays_clean_games(tmp_path: Path) -> None:
    cc = needs.c_compiler()
    exe = tmp_path / "bot"
    source = EXAMPLES / "c" / "kamisado_bot.c"
    built = await trio.to_thread.run_sync(
        lambda: subprocess.run(
            [cc, "-std=c99", "-O2", "-Wall", "-o", str(exe), str(source)],
            capture_output=True,
            text=True,
        )
    )
    assert built.returncode == 0, built.stderr
    assert_clean(await play_games([str(exe), "--seed", "3"], "example-c"), "example-c")


def test_c_example_reads_nested_json(tmp_path: Path) -> None:
    """Braces, brackets and a decoy ``legal`` inside strings and nested values."""
    cc = needs.c_compiler()
    exe = tmp_path / "bot"
    source = EXAMPLES / "c" / "kamisado_bot.c"
    subprocess.run([cc, "-std=c99", "-O2", "-o", str(exe), str(source)], check=True)
    line = (
        '{"type":"go","id":7,"player":1,"position":"x","observation":'
        '{"a":"}]\\"{","b":[1,{"legal":["zz"]}]},"history":[],'
        '"legal":["b8-c7","b8-b1","left"],"clock":{"x":1}}\n'
        '{"type":"quit"}\n'
    )
    out = subprocess.run([str(exe)], input=line, capture_output=True, text=True, timeout=10)
    assert out.stdout == '{"type":"action","id":7,"action":"b8-b1"}\n'


def _example_command(language: str, tmp_path: Path) -> list[str]:
    if language == "js":
        return [needs.node(), str(EXAMPLES / "js" / "kamisado_bot.js")]
    exe = tmp_path / "bot"
    source = EXAMPLES / "c" / "kamisado_bot.c"
    subprocess.run([needs.c_compiler(), "-std=c99", "-O2", "-o", str(exe), str(source)], check=True)
    return [str(exe)]


@pytest.mark.parametrize("language", ["js", "c"])
def test_examples_pass_check_bot(language: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import main

    command = _example_command(language, tmp_path)
    needs.sandbox()
    # In the sandbox, as a tournament runs it (bwrap is required here, not just tried).
    args = ["check-bot", "--sandbox", "bwrap", "--games", "0", "--", *command]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "all 13 checks passed" in result.output


@pytest.mark.parametrize(
    ("text", "good"),
    [
        ("obvpyrgV+/7n/8/8/8/8/8/NGRYP1BO b - standard 1-0 1 b", "right"),
        ("1bR+4n/2Yv1gr1/1G2y1B1/5Vp1/4P3/oN6/8/7O b - standard 1-0 1 b", "left"),
    ],
)
def test_alphabeta_picks_the_regroup_that_does_not_lose_by_force(text: str, good: str) -> None:
    bad = "left" if good == "right" else "right"
    after = text_to_position(text)
    after.make(text_to_move(bad))
    _, value, _ = CompiledSearcher().think(after, time.monotonic() + 30, max_depth=4)
    assert value > WIN_BOUND  # the round's loser, who starts the next, wins it by force
    start = text_to_position(text)
    move, value, _ = CompiledSearcher().think(start, time.monotonic() + 30, max_depth=5)
    assert move_to_text(move) == good
    assert value > -WIN_BOUND
