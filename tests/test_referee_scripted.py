"""The referee's and the clock's rules on scripted bots under trio's mock clock.

Each bot is a script (``tests/scripted.py``) behind the same request/answer code as a
real process; its think times are mock seconds (``autojump_clock``), so what the
clock charges is known exactly, to the bit, and a time loss happens at an exact
instant. Dyadic fractions (0.25, 0.125...) keep every sum exact in floating point.
Real processes keep one test per fault kind (``test_engine.py``, ``test_referee.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import trio
from scripted import BotSide, Script, ScriptedEngine, honest, info_lines, scripted, think

from arena.engine.errors import EngineCrashed, EngineProtocolError, EngineTimeout
from arena.engine.transport import EXIT_DRAIN
from arena.games import get_game
from arena.match.clock import TimeControl
from arena.match.record import ADJUDICATED, CRASH, ILLEGAL, PROTOCOL, START, TIME, GameRecord
from arena.match.referee import RefereeSettings, play_game
from arena.protocol.messages import Action, ClockInfo, Go, Info, NewGame

GAME = get_game("kamisado")
VARIANT = "single"


async def play(
    engines: Sequence[ScriptedEngine],
    *controls: str,
    settings: RefereeSettings | None = None,
    opening: str | None = None,
    variant: str = VARIANT,
) -> GameRecord:
    tcs = [TimeControl.parse(c) for c in controls]
    state = GAME.state_from_text(opening) if opening else GAME.new_state(variant)
    return await play_game(
        GAME, state, engines, [tcs[0], tcs[-1]], variant=variant, settings=settings
    )


def go_msg() -> Go:
    """A ``go`` for the first decision of a standard game, for requests outside a game."""
    state = GAME.new_state("standard")
    return Go(
        player=0,
        position=state.observation_text(0),
        observation=state.observation(0),
        history=[],
        legal=state.legal_actions(),
        clock=ClockInfo(control="10", remaining_ms=[10000, 10000]),
    )


def asked(engine: ScriptedEngine) -> list[Go]:
    """Every ``go`` the engine's bot was sent (all incarnations)."""
    from arena.protocol.messages import decode_arena_message

    return [
        m
        for t in engine.transports
        for m in map(decode_arena_message, t.written)
        if isinstance(m, Go)
    ]


def decided(record: GameRecord, player: int) -> list[int]:
    """Milliseconds charged for the player's asked (not forced) actions."""
    return [a.ms for a in record.actions if a.player == player and not a.forced]


# -- charging ----------------------------------------------------------------------


async def test_the_charge_is_exactly_the_think_time(autojump_clock):
    thinks = [0.25, 0.5, 0.125, 0.375]
    async with scripted(honest(think(*thinks)), honest()) as engines:
        record = await play(engines, "10+0", settings=RefereeSettings(max_plies=8))
    assert decided(record, 0) == [250, 500, 125, 375]
    assert decided(record, 1) == [0, 0, 0, 0]
    # The bot reads what its clock shows: 10 s less what it was charged so far.
    assert [g.clock.remaining_ms[0] for g in asked(engines[0])] == [10000, 9750, 9250, 9125]


async def test_increments_are_added_after_each_move(autojump_clock):
    async with scripted(honest(think(0.25)), honest(think(0.5))) as engines:
        await play(engines, "1+0.125", settings=RefereeSettings(max_plies=6))
    assert [g.clock.remaining_ms[0] for g in asked(engines[0])] == [1000, 875, 750]
    assert [g.clock.remaining_ms[1] for g in asked(engines[1])] == [1000, 625, 250]
    assert asked(engines[0])[0].clock.increment_ms == 125


async def test_moves_per_period_refill_the_clock(autojump_clock):
    async with scripted(honest(think(0.5)), honest()) as engines:
        await play(engines, "2/1", settings=RefereeSettings(max_plies=8))
    seen = [(g.clock.remaining_ms[0], g.clock.moves_to_go) for g in asked(engines[0])]
    assert seen == [(1000, 2), (500, 1), (1000, 2), (500, 1)]


async def test_each_player_has_their_own_time_control(autojump_clock):
    async with scripted(honest(think(0.75)), honest(think(0.25))) as engines:
        record = await play(engines, "10+1", "movetime=0.5", settings=RefereeSettings(max_plies=4))
    assert record.reason == ADJUDICATED and record.time_control == "10+1 | movetime=0.5"
    first, second = asked(engines[0]), asked(engines[1])
    assert [g.clock.remaining_ms[0] for g in first] == [10000, 10250]
    assert first[0].clock.control == "10+1" and second[0].clock.control == "movetime=0.5"
    assert [g.clock.movetime_ms for g in second] == [500, 500]
    assert [g.clock.budget_ms for g in second] == [500, 500]


# -- the margin and the deadline ---------------------------------------------------


async def test_an_answer_inside_the_margin_is_not_a_loss(autojump_clock):
    """1 s for the game, margin 0.25 s: an answer after 1.125 s is late but tolerated,
    the clock then shows zero (and the next answer must come within the margin)."""
    async with scripted(honest(think(1.125, 0.125)), honest()) as engines:
        record = await play(engines, "1 margin=0.25", settings=RefereeSettings(max_plies=4))
    assert record.reason == ADJUDICATED, record.detail
    assert decided(record, 0) == [1125, 125]
    assert [g.clock.remaining_ms[0] for g in asked(engines[0])] == [1000, 0]


async def test_a_time_loss_comes_exactly_at_the_deadline_and_not_before(autojump_clock):
    """movetime 0.5 s + margin 0.25 s: an answer a moment before 0.75 s is played; a
    bot that does not answer loses at 0.75 s exactly, as does one whose answer is
    written at that very instant (the deadline is not a moment of grace)."""
    just_before = 0.75 - 2**-10
    async with scripted(honest(think(just_before)), honest()) as engines:
        record = await play(
            engines, "movetime=0.5 margin=0.25", settings=RefereeSettings(max_plies=2)
        )
    assert record.reason == ADJUDICATED and decided(record, 0) == [round(just_before * 1000)]

    for late in (0.75, 1000.0):
        async with scripted(honest(think(late)), honest()) as engines:
            start = trio.current_time()
            record = await play(engines, "movetime=0.5 margin=0.25")
            assert trio.current_time() - start == 0.75
        assert (record.reason, record.faulty, record.score) == (TIME, 0, 0.0)
        assert record.detail == "p0: no answer within 0.750 s of wall time"


async def test_the_newgame_timeout(autojump_clock):
    async def never_ready(bot: BotSide, msg: NewGame) -> None:
        await trio.sleep_forever()

    async with scripted(honest(), honest(on_newgame=never_ready)) as engines:
        start = trio.current_time()
        record = await play(engines, "10", settings=RefereeSettings(newgame_timeout=2.0))
        assert trio.current_time() - start == 2.0
    assert (record.reason, record.faulty, record.actions) == (TIME, 1, [])
    assert record.detail == "p1: no answer within 2.000 s"


async def test_both_bots_start_at_once_and_a_silent_one_loses_at_its_handshake_timeout(
    autojump_clock,
):
    """Two bots taking 1.5 s each to answer ``hello``: the game's start takes 1.5 s, not
    3 s. One that never answers loses with reason ``start`` at its handshake timeout."""

    def slow_hello(seconds: float) -> Script:
        async def script(bot: BotSide) -> None:
            await trio.sleep(seconds)
            await honest()(bot)

        return script

    async with scripted(slow_hello(1.5), slow_hello(1.5)) as engines:
        start = trio.current_time()
        record = await play(engines, "10", settings=RefereeSettings(max_plies=1))
        assert trio.current_time() - start == 1.5
    assert record.reason == ADJUDICATED and [e.starts for e in engines] == [1, 1]

    async with scripted(honest(), slow_hello(1000), handshake_timeout=2.0) as engines:
        start = trio.current_time()
        record = await play(engines, "10")
        assert trio.current_time() - start == 2.0
    assert (record.reason, record.faulty, record.score) == (START, 1, 1.0)
    assert record.detail == "p1: no answer within 2.000 s"


# -- the leeway --------------------------------------------------------------------


async def test_the_leeway_extends_the_deadline_and_is_not_charged(autojump_clock):
    """A remote bot with 0.25 s of leeway: 0.875 s from request to answer is charged
    0.625 s; not answering loses at 0.75 + 0.25 s."""
    async with scripted(honest(think(0.875)), honest(), leeway=[0.25]) as engines:
        record = await play(
            engines, "movetime=0.5 margin=0.25", settings=RefereeSettings(max_plies=2)
        )
    assert record.reason == ADJUDICATED, record.detail
    assert decided(record, 0) == [625]

    async with scripted(honest(think(0.125)), honest(), leeway=[0.25]) as engines:
        record = await play(engines, "10", settings=RefereeSettings(max_plies=2))
    assert decided(record, 0) == [0]  # within the leeway: nothing charged

    async with scripted(honest(think(1000)), honest(), leeway=[0.25]) as engines:
        start = trio.current_time()
        record = await play(engines, "movetime=0.5 margin=0.25")
        assert trio.current_time() - start == 1.0
    assert (record.reason, record.faulty) == (TIME, 0)
    assert record.detail == "p0: no answer within 0.750 s of wall time (+250 ms network leeway)"


async def test_a_reply_keeps_the_raw_times_and_charges_net_of_the_leeway(autojump_clock):
    async with scripted(honest(think(0.375)), leeway=[0.125]) as (engine,):
        await engine.start("kamisado", "standard")
        reply = await engine.go(go_msg(), timeout=1)
    assert reply.received_at - reply.sent_at == 0.375
    assert reply.leeway == 0.125 and reply.elapsed == 0.25 and reply.elapsed_ms == 250


# -- forced actions and the ply cap -------------------------------------------------


async def test_forced_actions_are_played_without_asking_at_no_cost(autojump_clock):
    from kamisado_helpers import position_text

    opening = position_text({"h3": "G+", "g4": "R", "h4": "y"}, required="g", kind="standard")
    assert GAME.state_from_text(opening).legal_actions() == ["h3-h4"]
    async with scripted(honest(think(0.25)), honest(think(0.25))) as engines:
        record = await play(engines, "100", opening=opening, variant="standard")
    assert record.actions[0].action == "h3-h4" and record.actions[0].forced
    forced = [a for a in record.actions if a.forced]
    assert len(forced) >= 2 and all(a.ms == 0 for a in forced)
    for player, engine in enumerate(engines):
        legal = [g.legal for g in asked(engine)]
        assert len(legal) == len(decided(record, player))
        assert all(len(x) >= 2 for x in legal)
        assert set(decided(record, player)) == {250}


async def test_the_ply_cap_adjudicates_a_draw(autojump_clock):
    async with scripted(honest(), honest()) as engines:
        record = await play(engines, "10", settings=RefereeSettings(max_plies=5))
    assert (record.reason, record.score, record.faulty) == (ADJUDICATED, 0.5, None)
    assert len(record.actions) == 5 and record.detail == "ply cap of 5 reached"
    assert len(asked(engines[0])) == 3 and len(asked(engines[1])) == 2


# -- info lines --------------------------------------------------------------------


async def test_info_lines_are_bounded_in_number(autojump_clock):
    async with scripted(honest(info_lines(5)), honest(), info_lines=3) as engines:
        record = await play(engines, "10", settings=RefereeSettings(max_plies=1))
    info = record.actions[0].info
    assert info is not None and info["depth"] == 5 and info["dropped"] == 2


async def test_info_lines_are_bounded_in_bytes(autojump_clock):
    async def small_big_small(bot: BotSide, _: int, go: Go) -> None:
        bot.send(Info(id=go.id, depth=1, text="x" * 100))
        bot.send(Info(id=go.id, depth=2, text="x" * 400))  # over the bound on its own
        bot.send(Info(id=go.id, depth=3, text="x" * 100))
        bot.answer(go)

    async with scripted(honest(info_lines(4, "x" * 100)), info_bytes=300) as (engine,):
        await engine.start("kamisado", "standard")
        reply = await engine.go(go_msg(), timeout=1)
        engine.script = honest(small_big_small)
        await engine.restart("kamisado", "standard")
        mixed = await engine.go(go_msg(), timeout=1)
    assert [i.depth for i in reply.infos] == [3, 4] and reply.infos_dropped == 2
    # The one too big is dropped and evicts none of the others.
    assert [i.depth for i in mixed.infos] == [1, 3] and mixed.infos_dropped == 1


# -- faults ------------------------------------------------------------------------


def at_go(n: int, misbehave) -> Script:
    """Honest, except at its ``n``-th ``go`` (from 0), which ``misbehave`` handles."""

    async def on_go(bot: BotSide, i: int, go: Go) -> None:
        if i == n:
            await misbehave(bot, go)
        else:
            bot.answer(go)

    return honest(on_go)


async def _garbage(bot: BotSide, go: Go) -> None:
    bot.send(b'{"type": "action", "id": ')


async def _wrong_id(bot: BotSide, go: Go) -> None:
    bot.send(Action(id=go.id + 7, action=go.legal[0]))


async def _illegal(bot: BotSide, go: Go) -> None:
    bot.send(Action(id=go.id, action="z9-z9"))


async def _crash(bot: BotSide, go: Go) -> None:
    await trio.sleep(0.125)
    bot.exit(3)


async def _close_output(bot: BotSide, go: Go) -> None:
    bot.close_output()
    await trio.sleep_forever()


async def _too_long(bot: BotSide, go: Go) -> None:
    bot.send(b"x" * 2000)


@pytest.mark.parametrize(
    ("misbehave", "reason", "detail"),
    [
        (_garbage, PROTOCOL, "p0: invalid bot message: Input data was truncated"),
        (_wrong_id, PROTOCOL, "p0: answered id 11 (action), expected id 4"),
        (_illegal, ILLEGAL, "p0: illegal action 'z9-z9'"),
        (_crash, CRASH, "p0: exited with code 3"),
        (_close_output, PROTOCOL, "p0: closed its stdout but keeps running"),
        (_too_long, PROTOCOL, "p0: line longer than 1000 bytes"),
    ],
)
async def test_faults_end_the_game_with_their_reason(autojump_clock, misbehave, reason, detail):
    async with scripted(at_go(1, misbehave), honest(), max_line=1000) as engines:
        record = await play(engines, "10")
    assert (record.reason, record.faulty, record.score) == (reason, 0, 0.0)
    assert record.detail.startswith(detail), record.detail
    assert len(decided(record, 0)) == 1  # the first go was answered
    assert engines[0].faulted is not None or reason == ILLEGAL
    assert not engines[0].running


async def test_a_fault_restarts_the_bot_for_its_next_game(autojump_clock):
    async with scripted(at_go(1, _crash), honest()) as engines:
        first = await play(engines, "10")
        second = await play(engines, "10", settings=RefereeSettings(max_plies=6))
    assert first.reason == CRASH and second.reason == ADJUDICATED
    assert engines[0].starts == 2 and engines[1].starts == 1
    assert [t.returncode for t in engines[0].transports] == [3, None]


async def test_a_bot_that_stops_reading_its_input(autojump_clock):
    """It answers, then reads no more: the next request cannot even be written. The
    engine says so at its own deadline; in a game the referee's comes first."""

    async def stop_reading(bot: BotSide, go: Go) -> None:
        bot.stop_reading()
        bot.answer(go)
        await trio.sleep_forever()

    async with scripted(at_go(0, stop_reading)) as (engine,):
        await engine.start("kamisado", "standard")
        go = go_msg()
        await engine.go(go, timeout=1)
        start = trio.current_time()
        with pytest.raises(EngineTimeout, match="did not read its input for 1.000 s"):
            await engine.go(go, timeout=1)
        assert trio.current_time() - start == 1.0

    async with scripted(at_go(0, stop_reading), honest()) as engines:
        record = await play(engines, "movetime=0.5 margin=0.25")
    assert (record.reason, record.faulty) == (TIME, 0)
    assert record.detail == "p0: no answer within 0.750 s of wall time"


async def test_a_protocol_fault_in_the_engine_carries_its_elapsed_time(autojump_clock):
    async def late_garbage(bot: BotSide, go: Go) -> None:
        await trio.sleep(0.25)
        bot.send(b"hello there")
        bot.send(b"a runtime's second line")

    async with scripted(at_go(0, late_garbage), leeway=[0.125]) as (engine,):
        await engine.start("kamisado", "standard")
        with pytest.raises(EngineProtocolError) as caught:
            await engine.go(go_msg(), timeout=1)
    assert caught.value.elapsed == 0.125  # net of the leeway
    assert "hello there" in caught.value.stderr_tail
    assert "a runtime's second line" in caught.value.stderr_tail


async def test_an_exit_cuts_a_pending_read_short(autojump_clock):
    """The bot exits but a helper holds its stdout open (no end of stream): the crash
    is reported a short drain after the exit, not at the request's deadline (the
    exit's watcher cuts the read short: ``Conversation._cut_short``)."""

    async def exit_held(bot: BotSide, go: Go) -> None:
        await trio.sleep(0.25)
        bot.exit(5, held=True)

    async with scripted(at_go(0, exit_held)) as (engine,):
        await engine.start("kamisado", "standard")
        start = trio.current_time()
        with pytest.raises(EngineCrashed, match="exited with code 5"):
            await engine.go(go_msg(), timeout=100)
        # the read's drain, then the drain of its last stray output
        assert trio.current_time() - start == pytest.approx(0.25 + 2 * EXIT_DRAIN)
