"""The clocks as a request carries them: :class:`~arena.protocol.messages.ClockInfo`
(integer milliseconds) from the game's :class:`~arena.match.clock.Clock` values.

Here, not in the protocol, because the protocol knows nothing of the match: the
referee (and the tools that ask bots for decisions) build the wire clock from
their clocks, never the other way.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from arena.match.clock import Clock, TimeControl
from arena.protocol.messages import ClockInfo

__all__ = ["clock_info"]


def clock_info(clocks: Sequence[Clock], player: int) -> ClockInfo:
    """The wire clock of a request to ``player``; ``clocks[p]`` keeps player ``p``'s
    time: the same clock twice when both play under one control, two clocks when
    each has its own (a handicap). Runs once per decision, hence the cached text."""
    clock = clocks[player]
    tc = clock.control
    return ClockInfo(
        control=_control_text(tc),
        remaining_ms=[clocks[0].remaining_ms(0), clocks[1].remaining_ms(1)],
        increment_ms=round(tc.increment * 1000),
        movetime_ms=None if tc.movetime is None else round(tc.movetime * 1000),
        moves_to_go=clock.moves_to_go(player),
        margin_ms=round(tc.margin * 1000),
        budget_ms=clock.remaining_ms(player),
    )


@functools.lru_cache(maxsize=64)
def _control_text(control: TimeControl) -> str:
    return str(control)
