"""Live game events: what a running game tells watchers, move by move.

Plain msgspec values, so that the same event travels from a game slot in this
process, a worker process (one JSON line on its pipe, ``arena/backends/workers.py``) or a
Ray actor (``arena/backends/raypool.py``) to the tournament's observers unchanged. Each
carries the position text after the event, so a watcher that missed earlier
events (a page opened mid-game, a slow subscriber whose backlog was coalesced)
still draws the right board from the latest one alone.

``t`` is the wall-clock time (``time.time()``) at which the referee applied the
action, for the referee-to-browser delay that ``bench/web.py`` measures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec


class GameStarted(msgspec.Struct, tag="game_started", frozen=True):
    """A game slot is about to play ``key`` from ``position`` (its opening)."""

    key: str
    game: str
    variant: str
    players: list[str]
    position: str
    time_control: list[str]
    t: float


class GameMoved(msgspec.Struct, tag="game_moved", frozen=True):
    """Action number ``ply`` of game ``key`` was applied; ``position`` follows it.

    ``clocks`` are both players' remaining milliseconds after the action; ``info``
    is the last ``info`` the mover sent for it (depth, score, PV...), if any.
    """

    key: str
    ply: int
    player: int
    action: str
    ms: int
    forced: bool
    position: str
    clocks: list[int]
    t: float
    info: dict[str, Any] | None = None
    rtt_ms: float | None = None
    """A remote mover's connection round trip (``None``: a local bot)."""


LiveEvent = GameStarted | GameMoved
EVENT_BACKLOG = 1024
"""Live events a worker process or Ray actor holds for its way to the arena; past
that, new ones are dropped, so an arena busy storing games never makes a referee
wait (each event carries the whole position, so the next one repairs what a
dropped one missed)."""
EventSink = Callable[[LiveEvent], None]
"""Receives live events; must return at once (it runs between a game's moves)."""

__all__ = ["EVENT_BACKLOG", "EventSink", "GameMoved", "GameStarted", "LiveEvent"]
