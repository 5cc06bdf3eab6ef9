"""Time controls and clocks: parsing, round trips, charging, margins."""

from __future__ import annotations

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from arena.match.clock import DEFAULT_MARGIN, Clock, TimeControl, TimeControlError


@pytest.mark.parametrize(
    ("text", "expected", "canonical"),
    [
        ("10+0.1", TimeControl(base=10, increment=0.1), "10+0.1"),
        ("60", TimeControl(base=60), "60"),
        ("0.5+0", TimeControl(base=0.5), "0.5"),
        ("40/60+0.5", TimeControl(base=60, increment=0.5, moves=40), "40/60+0.5"),
        ("40/60", TimeControl(base=60, moves=40), "40/60"),
        ("movetime=0.5", TimeControl(movetime=0.5), "movetime=0.5"),
        ("0.5/move", TimeControl(movetime=0.5), "movetime=0.5"),
        ("10+0.1 margin=0.2", TimeControl(base=10, increment=0.1, margin=0.2), "10+0.1 margin=0.2"),
        ("movetime=2 margin=0", TimeControl(movetime=2, margin=0), "movetime=2 margin=0"),
        (".5+.25", TimeControl(base=0.5, increment=0.25), "0.5+0.25"),
    ],
)
def test_parse_and_canonical_text(text, expected, canonical):
    tc = TimeControl.parse(text)
    assert tc == expected
    assert str(tc) == canonical
    assert TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("abc", "'abc'"),
        ("10+", "'10+'"),
        ("0+1", "base time must be > 0"),
        ("0/60", "moves per period"),
        ("movetime=0", "movetime must be > 0"),
        ("10+1 margin=x", "margin=x"),
        ("10+1 extra", "'extra'"),
        ("-5", "'-5'"),
    ],
)
def test_parse_errors_are_clear(text, fragment):
    with pytest.raises(TimeControlError) as info:
        TimeControl.parse(text)
    assert fragment in str(info.value)


def test_movetime_cannot_mix_with_banked_time():
    with pytest.raises(TimeControlError, match="cannot be combined"):
        TimeControl(base=10, movetime=1)


@given(
    st.one_of(
        st.builds(
            TimeControl,
            base=st.floats(min_value=0.001, max_value=1e6),
            increment=st.floats(min_value=0, max_value=1e3),
            moves=st.none() | st.integers(min_value=1, max_value=500),
            margin=st.floats(min_value=0, max_value=10),
        ),
        st.builds(
            TimeControl,
            movetime=st.floats(min_value=0.001, max_value=1e4),
            margin=st.just(DEFAULT_MARGIN),
        ),
    )
)
def test_text_round_trip(tc):
    assert TimeControl.parse(str(tc)) == tc


def test_increment_and_charging():
    clock = Clock(TimeControl.parse("10+0.5"))
    assert clock.remaining_ms(0) == clock.remaining_ms(1) == 10000
    deadline = clock.start(0, now=100.0)
    assert deadline == pytest.approx(100.0 + 10.0 + DEFAULT_MARGIN)
    assert clock.running == 0 and clock.deadline() == deadline
    assert clock.stop(0, now=102.25) == (2250, False)
    assert clock.running is None and clock.deadline() is None
    assert clock.remaining_ms(0) == 8250  # 10 - 2.25 + 0.5
    assert clock.remaining_ms(1) == 10000
    assert clock.moves_to_go(0) is None


def test_answer_inside_margin_is_not_flagged():
    clock = Clock(TimeControl.parse("1+0.1 margin=0.1"))
    clock.start(1, now=0.0)
    elapsed, flagged = clock.stop(1, now=1.08)  # 80 ms over, within the 100 ms margin
    assert (elapsed, flagged) == (1080, False)
    assert clock.flagged is None
    assert clock.remaining_ms(1) == 100  # zero left plus the increment


def test_answer_beyond_margin_is_flagged():
    clock = Clock(TimeControl.parse("1+0.1 margin=0.1"))
    clock.start(1, now=0.0)
    assert clock.stop(1, now=1.11) == (1110, True)
    assert clock.flagged == 1


def test_movetime_banks_nothing():
    clock = Clock(TimeControl.parse("movetime=0.5"))
    for now in (0.0, 10.0):
        clock.start(0, now)
        assert clock.stop(0, now + 0.1) == (100, False)
        assert clock.remaining_ms(0) == 500
    clock.start(0, 20.0)
    assert clock.stop(0, 20.0 + 0.5 + DEFAULT_MARGIN + 0.01)[1] is True


def test_moves_to_go_refills_each_period():
    clock = Clock(TimeControl.parse("2/10"))
    assert clock.moves_to_go(0) == 2
    clock.start(0, 0.0)
    clock.stop(0, 3.0)
    assert clock.moves_to_go(0) == 1 and clock.remaining_ms(0) == 7000
    clock.start(0, 10.0)
    clock.stop(0, 12.0)  # second move closes the period: +10 s
    assert clock.moves_to_go(0) == 2 and clock.remaining_ms(0) == 15000
    assert clock.moves_to_go(1) == 2 and clock.remaining_ms(1) == 10000


def test_start_stop_misuse_is_an_error():
    clock = Clock(TimeControl.parse("10"))
    with pytest.raises(RuntimeError):
        clock.stop(0, 1.0)
    clock.start(0, 0.0)
    with pytest.raises(RuntimeError):
        clock.start(1, 0.0)


async def test_clock_with_trio_mock_clock(autojump_clock):
    """Driven by trio.current_time(), the way the referee uses it: pytest-trio's
    ``autojump_clock`` fixture runs this test's own loop on a mock clock."""
    clock = Clock(TimeControl.parse("5+1"))
    t0 = trio.current_time()
    deadline = clock.start(0, t0)
    await trio.sleep_until(deadline - DEFAULT_MARGIN / 2)  # inside the margin
    elapsed, flagged = clock.stop(0, trio.current_time())
    assert not flagged and elapsed == 5025
    assert clock.remaining_ms(0) == 1000
    clock.start(1, trio.current_time())
    await trio.sleep(5.06)
    assert clock.stop(1, trio.current_time()) == (5060, True)


def test_cpu_time_charged_with_a_wall_clock_ceiling():
    """``clock = "cpu"``: the CPU seconds are charged, not the wall time; an answer
    later than three times the budget in wall time loses whatever its CPU time."""
    clock = Clock(TimeControl.parse("1+0.1"), "cpu")
    assert clock.wall_budget(0) == pytest.approx(3 * (1 + DEFAULT_MARGIN))
    assert clock.start(0, 10.0) == pytest.approx(10.0 + 3 * (1 + DEFAULT_MARGIN))
    # 2 s of wall (a loaded machine), 0.4 s of CPU: 0.4 s charged, not flagged.
    assert clock.stop(0, 12.0, cpu=0.4) == (400, False)
    assert clock.remaining(0) == pytest.approx(1 - 0.4 + 0.1)
    # Beyond the budget in CPU time: flagged.
    clock.start(1, 0.0)
    assert clock.stop(1, 1.2, cpu=1.1) == (1100, True)
    # Asleep: no CPU at all, but past the ceiling in wall time: flagged.
    clock = Clock(TimeControl.parse("1+0"), "cpu")
    clock.start(0, 0.0)
    assert clock.stop(0, 3.2, cpu=0.0) == (0, True)
    # Uncounted CPU (no cgroup): the wall time is charged.
    clock.start(1, 0.0)
    assert clock.stop(1, 0.3, cpu=None) == (300, False)
    # The wall clock ignores the CPU figure.
    wall = Clock(TimeControl.parse("1+0"))
    assert wall.wall_budget(0) == wall.budget(0)
    wall.start(0, 0.0)
    assert wall.stop(0, 1.2, cpu=0.1) == (1200, True)
