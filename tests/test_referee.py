"""The referee against REAL subprocesses: every fault becomes the right result.

Each misbehaving bot is one small Python script (written to ``tmp_path``) that
misbehaves only in its *first* incarnation (a marker file in its state
directory says it has run before). So every test checks three things in turn:

1. the faulty game ends with the right ``reason``, ``detail``, ``faulty`` and
   ``score``, within the fault's deadline plus one second of wall time;
2. no process of the bot's group is left afterwards (the bot leads its own
   session, so the pid it logs at start is its pgid);
3. the next game with the *same* :class:`Engine` object starts a fresh process
   (another pid, ``engine.starts`` incremented) and is played to its end.

Bots play the first legal action, so games are deterministic and short
(the ``single`` variant: one round, about 57 plies).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from procs import assert_group_dies

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.sandbox import Sandbox
from arena.games import get_game
from arena.match.clock import TimeControl
from arena.match.events import GameMoved
from arena.match.record import (
    ADJUDICATED,
    CRASH,
    FAULT_REASONS,
    ILLEGAL,
    PROTOCOL,
    START,
    TIME,
    GameRecord,
)
from arena.match.referee import RefereeSettings, play_game

GAME = get_game("kamisado")
VARIANT = "single"
MOVETIME = 0.5
TC = TimeControl.parse(f"movetime={MOVETIME}")
DEADLINE = MOVETIME + TC.margin  # what a bot may take for one decision
SLACK = 1.0  # every fault must end the game within its deadline plus this


@dataclass
class Bot:
    """One test bot: its engine configuration and its state directory."""

    config: EngineConfig
    state_dir: Path

    def pids(self) -> list[int]:
        """Pids of every incarnation, in start order (each is also its pgid)."""
        path = self.state_dir / "pids"
        return [int(x) for x in path.read_text().split()] if path.exists() else []

    def go_requests(self) -> list[list[str]]:
        """The ``legal`` list of every ``go`` the bot received."""
        path = self.state_dir / "go.log"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def make_bot(tmp_path: Path):
    script = Path(__file__).parent / "bad_bot.py"  # shared with the engine tests
    count = 0

    def make(mode: str, *, once: bool = True, arg: float = 0.0, at: int = 1, **kw) -> Bot:
        nonlocal count
        count += 1
        state_dir = tmp_path / f"bot{count}-{mode}"
        state_dir.mkdir()
        command = [sys.executable, str(script), mode, str(arg), "--state", str(state_dir)]
        command += ["--at", str(at)] + (["--once"] if once else [])
        # Unconfined: the bot reports its pid, which a sandbox's PID namespace
        # would make 2 for every process (tests/test_sandbox.py covers the sandbox).
        settings = dict(
            handshake_timeout=5.0, quit_timeout=0.5, term_timeout=0.3, sandbox=Sandbox(mode="none")
        )
        settings.update(kw)
        return Bot(EngineConfig(name=f"{mode}{count}", command=command, **settings), state_dir)

    return make


@asynccontextmanager
async def engines(*bots: Bot) -> AsyncIterator[list[Engine]]:
    async with Engine(bots[0].config) as a, Engine(bots[1].config) as b:
        yield [a, b]


@dataclass
class Timed:
    record: GameRecord
    since_last_action: float
    """Wall seconds from the last action played (or the game's start) to the end."""


async def play(
    engs: list[Engine],
    control: TimeControl = TC,
    settings: RefereeSettings | None = None,
    opening_text: str | None = None,
    variant: str = VARIANT,
) -> Timed:
    opening = GAME.state_from_text(opening_text) if opening_text else GAME.new_state(variant)
    last = time.monotonic()

    def on_action(event: GameMoved) -> None:
        nonlocal last
        last = time.monotonic()

    record = await play_game(
        GAME,
        opening,
        engs,
        [control, control],
        variant=variant,
        settings=settings,
        on_action=on_action,
    )
    return Timed(record, time.monotonic() - last)


def assert_normal_end(record: GameRecord) -> None:
    assert record.reason not in FAULT_REASONS and record.reason != ADJUDICATED, record
    assert record.faulty is None and record.detail == ""
    assert record.reason == "home-row"  # first-legal vs first-legal in a single round
    assert record.score in (0.0, 1.0)


async def assert_next_game_is_fresh(engs: list[Engine], side: int, bot: Bot) -> None:
    """The same Engine object starts a new process and plays a whole game."""
    first_pid = bot.pids()[0]
    timed = await play(engs)
    assert_normal_end(timed.record)
    engine = engs[side]
    assert engine.starts == 2
    pids = bot.pids()
    assert len(pids) == 2 and pids[1] != first_pid
    assert engine.pid == pids[1] and engine.running
    assert engs[1 - side].starts == 1  # the innocent opponent was never restarted


# -- every fault ends the game against the faulty side -------------------------

FAULTS = [
    # (mode, options, side, reason, fragment of detail)
    ("exit_at_start", {}, 0, START, "exited with code 3"),  # a start fault, not a crash
    ("exit", {"at": 3}, 1, CRASH, "exited with code 7"),
    ("sigkill", {"at": 2}, 0, CRASH, "killed by SIGKILL"),
    ("sigsegv", {}, 1, CRASH, "killed by SIGSEGV"),
    ("never_answer", {}, 0, TIME, "no answer within"),
    ("sleep", {"arg": 1.0}, 1, TIME, "no answer within"),
    ("garbage", {}, 0, PROTOCOL, "bestmove c1-c5"),
    ("long_line", {}, 1, PROTOCOL, "longer than 1048576 bytes"),
    ("illegal", {"at": 2}, 0, ILLEGAL, "illegal action 'b1-b9'"),
    ("wrong_type", {}, 1, PROTOCOL, "answered go with pong, expected action"),
    ("close_stdout", {}, 0, PROTOCOL, "closed its stdout"),
    ("child_hang", {}, 1, TIME, "no answer within"),
]


@pytest.mark.parametrize(
    ("mode", "options", "side", "reason", "fragment"), FAULTS, ids=[f[0] for f in FAULTS]
)
async def test_fault_ends_game_kills_bot_and_next_game_restarts(
    make_bot, mode, options, side, reason, fragment
):
    faulty = make_bot(mode, **options)
    good = make_bot("normal")
    bots = [faulty, good] if side == 0 else [good, faulty]
    async with engines(*bots) as engs:
        timed = await play(engs)
        record = timed.record
        assert record.reason == reason, record
        assert fragment in record.detail and faulty.config.name in record.detail, record.detail
        assert record.faulty == side
        assert record.score == (0.0 if side == 0 else 1.0)
        assert timed.since_last_action < DEADLINE + SLACK, timed.since_last_action
        assert not engs[side].running
        # The opponent is untouched (started with the faulty one, and running).
        assert engs[1 - side].running and engs[1 - side].starts == 1
        (pgid,) = faulty.pids()
        await assert_group_dies(pgid)
        if mode == "exit":
            assert "about to exit" in record.stderr_tails[side]
        await assert_next_game_is_fresh(engs, side, faulty)


async def test_both_bots_start_at_once(make_bot):
    """Each answers ``hello`` only once the other has started: in turn, the first
    would wait for the second forever (and exit with code 4 after 3 s)."""
    first, second = make_bot("meet", arg=3.0), make_bot("meet", arg=3.0)
    async with engines(first, second) as engs:
        assert_normal_end((await play(engs)).record)
        assert [e.starts for e in engs] == [1, 1]


async def test_when_both_fail_to_start_the_first_player_is_faulted(make_bot):
    """Started at once, yet the fault is the first player's, as when started in turn."""
    bots = [make_bot("exit_at_start"), make_bot("exit_at_start")]
    async with engines(*bots) as engs:
        record = (await play(engs)).record
    assert (record.reason, record.faulty, record.score) == (START, 0, 0.0)
    assert bots[0].config.name in record.detail and "exited with code 3" in record.detail


async def test_stderr_flood_does_not_stop_the_game_and_its_tail_is_bounded(make_bot):
    """~5 MB of stderr in one move: the game completes and the record keeps 8 KiB."""
    flood = make_bot("stderr_flood", once=False, stderr_lines=64, stderr_bytes=8192)
    good = make_bot("normal")
    async with engines(flood, good) as engs:
        timed = await play(engs, TimeControl.parse("movetime=5"))
        assert_normal_end(timed.record)
        tail = timed.record.stderr_tails[0]
        assert "debug line" in tail and "earlier lines dropped" in tail
        head = flood.config  # the first lines are kept besides the tail
        assert len(tail.encode()) <= 8192 + head.stderr_head_bytes + 100
        assert tail.count("\n") <= 64 + head.stderr_head_lines + 1
        assert timed.record.stderr_tails[1] == ""
        assert engs[0].starts == 1


async def test_bot_ignoring_quit_is_killed_and_restarted_for_the_next_game(make_bot):
    """It plays well, but ignores ``quit``, SIGTERM and the end of its input."""
    stubborn = make_bot("ignore_quit")
    good = make_bot("normal")
    async with engines(good, stubborn) as engs:
        assert_normal_end((await play(engs)).record)
        (pgid,) = stubborn.pids()
        t0 = time.monotonic()
        await engs[1].stop()
        assert time.monotonic() - t0 < 0.5 + 0.3 + SLACK
        assert engs[1].returncode == -9  # neither quit nor SIGTERM worked
        await assert_group_dies(pgid)
        await assert_next_game_is_fresh(engs, 1, stubborn)


# Time charged, the margin and the deadline are exact on scripted bots under the mock
# clock (``test_referee_scripted.py``); here only real processes' faults and lifetimes.


# -- the ply cap and forced actions ----------------------------------------------


async def test_ply_cap_adjudicates_a_draw(make_bot):
    a, b = make_bot("normal"), make_bot("normal")
    async with engines(a, b) as engs:
        timed = await play(engs, settings=RefereeSettings(max_plies=5))
    record = timed.record
    assert record.reason == ADJUDICATED and record.score == 0.5 and record.faulty is None
    assert len(record.actions) == 5 and "5" in record.detail


async def test_forced_actions_are_recorded_and_never_asked(make_bot):
    """A single legal action is played by the referee: no ``go``, no time charged.

    The opening is a position where Black's only action is a push (``h3-h4``);
    the rest of the game brings zero-length moves of its own.
    """
    from kamisado_helpers import position_text

    # A Sumo is worth a point, which would end a single round: play a standard match.
    opening = position_text({"h3": "G+", "g4": "R", "h4": "y"}, required="g", kind="standard")
    assert GAME.state_from_text(opening).legal_actions() == ["h3-h4"]
    a, b = make_bot("normal"), make_bot("normal")
    async with engines(a, b) as engs:
        timed = await play(engs, opening_text=opening, variant="standard")
    record = timed.record
    assert record.reason not in FAULT_REASONS
    assert record.actions[0].action == "h3-h4" and record.actions[0].forced
    forced = [x for x in record.actions if x.forced]
    assert len(forced) >= 2
    assert all(x.ms == 0 for x in forced)
    for player, bot in enumerate((a, b)):
        asked = bot.go_requests()
        assert len(asked) == sum(1 for x in record.actions if x.player == player and not x.forced)
        assert all(len(legal) >= 2 for legal in asked)
