"""Bounds on charged time measured against what the machine does now.

A bot that sleeps S seconds before it answers must be charged at least S: the
clock starts before the request is written and stops after the answer is read,
so no scheduling can make it less. How much more depends on the machine:
waking a process and passing a line through a pipe (and a sandbox) takes well
under a millisecond on an idle machine and tens of milliseconds on a loaded one
(the suite shares its cores with other work). A fixed window of 30 ms fails
there without anything being wrong, so the upper bound is S plus room
calibrated now, from instant answers of the same kind of bot measured alongside:
:data:`FACTOR` times the slowest, never less than :data:`MIN_ROOM`. That still
catches what these tests are about (a think time charged twice, or with the
start-up or the previous answer in it). The figures are printed, so a failure
shows them.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_ROOM = 0.1
"""Seconds of room at least, however fast the instant answers were."""
FACTOR = 5
"""Room per second of the slowest instant answer."""


def room(instant: Sequence[float]) -> float:
    """The room above the think time for this machine, from ``instant`` answer times."""
    return max(MIN_ROOM, FACTOR * max(instant))


def assert_charged(charged: Sequence[float], slept: float, instant: Sequence[float]) -> None:
    """Every ``charged`` time (seconds) of a bot that slept ``slept`` is at least
    that and less than ``slept + room(instant)``."""
    assert charged and instant
    bound = slept + room(instant)
    figures = (
        f"slept {slept:.3f} s; charged {', '.join(f'{c:.4f}' for c in charged)} s; "
        f"instant answers took {min(instant):.4f}..{max(instant):.4f} s; "
        f"bound {bound:.3f} s"
    )
    print(figures)
    for seconds in charged:
        assert slept <= seconds < bound, figures
