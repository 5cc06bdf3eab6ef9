"""The live state of a running tournament, and its bounded fan-out to web pages.

The tournament calls this hub (an :class:`~arena.tournament.Observer`) between
moves, so every call here returns at once and does no I/O: it records the
latest event of each running game and marks, for each subscribed page, *which
topics* changed (a game's board, the progress, the finished games). A page's
stream then sends the current value of each changed topic. That coalesces by
construction: a slow page that missed ten moves of a game gets its latest
board once, not ten; and a page whose backlog still outgrows the bound is told
to start over from a fresh snapshot. Memory is therefore bounded per page by
the number of topics, and nothing a page does can slow the referee.

A page opened mid-run gets the same snapshot as one that watched from the
start: the running games' latest positions come from here, everything finished
from the store.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import trio

from arena.games import GameError, get_game
from arena.match.events import GameMoved, GameStarted, LiveEvent
from arena.match.record import FAULT_REASONS, GameRecord
from arena.plan.config import TournamentConfig
from arena.report.replay import game_view, show_of
from arena.tournament import Observer, Progress, Tally

if TYPE_CHECKING:
    from arena.engine.gateway import Presence

__all__ = [
    "MAX_SUBSCRIBERS",
    "LiveHub",
    "Subscriber",
    "PROGRESS",
    "RESULTS",
    "TooManyPages",
    "game_topic",
]

PROGRESS = "progress"
RESULTS = "results"
MAX_PENDING = 256
"""Topics one page may have waiting; past that it gets a fresh snapshot instead."""
MAX_SUBSCRIBERS = 64
"""Pages that may follow the run at once: one more is refused (each holds a
connection and a task until the run ends; a page that stops reading is dropped
by the server's send timeout, ``arena.web.server.SEND_TIMEOUT``)."""


class TooManyPages(Exception):
    """The live view already streams to ``MAX_SUBSCRIBERS`` pages."""


_encoder = msgspec.json.Encoder()


def game_topic(key: str) -> str:
    return "game:" + key


@dataclass(slots=True)
class LiveGame:
    """A running game: its start, its latest move, and the page payload built from
    them (built once, when a page first needs it, and shared by every page)."""

    start: GameStarted
    last: GameMoved | None = None
    _payload: dict[str, Any] | None = None
    _bytes: bytes | None = None

    def update(self, event: GameMoved) -> None:
        self.last = event
        self._payload = self._bytes = None

    def payload(self) -> dict[str, Any]:
        if self._payload is None:
            self._payload = _game_payload(self.start, self.last)
        return self._payload

    def encoded(self) -> bytes:
        if self._bytes is None:
            self._bytes = _encoder.encode(self.payload())
        return self._bytes


def _game_payload(start: GameStarted, last: GameMoved | None) -> dict[str, Any]:
    position = last.position if last is not None else start.position
    show = show_of(start.game)
    kind = show.picture
    try:
        frame = show.frame(game_view(get_game(start.game).state_from_text(position)))
    except GameError as exc:
        frame, kind = {"error": str(exc)}, "text"
    out: dict[str, Any] = {
        "key": start.key,
        "k": kind,
        "players": start.players,
        "variant": start.variant,
        "tc": start.time_control,
        "frame": frame,
        "ply": 0,
        "t": start.t,
    }
    if last is not None:
        out.update(
            ply=last.ply,
            last={
                "player": last.player,
                "action": last.action,
                "ms": last.ms,
                "forced": last.forced,
                "rtt": last.rtt_ms,
            },
            clocks=last.clocks,
            info=last.info,
            t=last.t,
        )
    return out


@dataclass(eq=False, slots=True)
class Subscriber:
    """One page's stream: the topics changed since it last sent."""

    pending: dict[str, None] = field(default_factory=dict)
    resync: bool = False
    wake: trio.Event = field(default_factory=trio.Event)
    dropped: int = 0
    """How often this page's backlog overflowed (and was replaced by a snapshot)."""

    def mark(self, topic: str) -> None:
        if not self.resync:
            self.pending[topic] = None
            if len(self.pending) > MAX_PENDING:
                self.pending.clear()
                self.resync = True
                self.dropped += 1
        self.wake.set()

    def take(self) -> tuple[bool, list[str]]:
        """``(resync, topics)`` accumulated since the last call; re-arms the wake-up."""
        resync, topics = self.resync, list(self.pending)
        self.pending.clear()
        self.resync = False
        self.wake = trio.Event()
        return resync, topics


class LiveHub(Observer):
    """Observer of one running tournament that web pages subscribe to."""

    wants_events = True

    def __init__(self) -> None:
        self.games: dict[str, LiveGame] = {}
        self.finished: set[str] = set()
        self.subscribers: set[Subscriber] = set()
        self.name = ""
        self.directory: Path | None = None
        self.total = 0
        self.done = 0
        self.played_now = 0
        self.faults = 0
        self.disqualified: list[str] = []
        self.running = False
        self.closed = False
        """The run is over: page streams send what is left, then end."""
        self.stopping_ = False
        self._started = time.monotonic()
        self.results: bytes | None = None
        """The latest standings and results read from the store (encoded), which
        ``arena.web.app.refresh_results`` keeps fresh, off every page's stream."""
        self.results_stale = trio.Event()
        """Set when a game is stored: the results need re-reading."""
        self.remote: Callable[[], list[Presence]] | None = None
        """The remote entrants' presence (the gateway's), for runs that have some."""

    # -- Observer ---------------------------------------------------------------------

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        self.name = config.name
        self.directory = directory
        self.running = True
        self._started = time.monotonic()
        self._progress(progress)
        self._publish(PROGRESS)

    def game_event(self, event: LiveEvent) -> None:
        if event.key in self.finished:
            return  # a late move of a game already stored (events are not ordered with records)
        if isinstance(event, GameStarted):
            self.games[event.key] = LiveGame(event)
        else:
            game = self.games.get(event.key)
            if game is None or (game.last is not None and game.last.ply >= event.ply):
                return
            game.update(event)
        self._publish(game_topic(event.key))

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        self.finished.add(key)
        self.games.pop(key, None)
        self._progress(progress)
        self.results_stale.set()
        self._publish(game_topic(key))
        self._publish(PROGRESS)

    def bot_disqualified(self, name: str, tally: Tally) -> None:
        self.disqualified.append(name)
        self._publish(PROGRESS)

    def stopping(self) -> None:
        self.stopping_ = True
        self._publish(PROGRESS)

    def close(self) -> None:
        self.running = False
        self.closed = True
        self.games.clear()
        self._publish(PROGRESS)

    def remote_changed(self) -> None:
        """A remote entrant came, dropped or left: pages show it."""
        self._publish(PROGRESS)

    def set_results(self, encoded: bytes) -> None:
        self.results = encoded
        self._publish(RESULTS)

    async def flushed(self, timeout: float = 1.0) -> None:
        """Give pages up to ``timeout`` seconds to send what is left and end their
        streams (at the end of a run, so they show it finished, and the server
        stops without cutting a stream off)."""
        with trio.move_on_after(timeout):
            while self.subscribers:
                await trio.sleep(0.01)

    # -- pages ------------------------------------------------------------------------

    def subscribe(self) -> Subscriber:
        if len(self.subscribers) >= MAX_SUBSCRIBERS:
            raise TooManyPages(
                f"the live view already streams to {MAX_SUBSCRIBERS} pages; try again later"
            )
        sub = Subscriber()
        self.subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

    def _publish(self, topic: str) -> None:
        for sub in self.subscribers:
            sub.mark(topic)

    def _progress(self, progress: Progress) -> None:
        self.total = progress.total
        self.done = progress.done
        self.played_now = progress.played_now
        self.faults = sum(progress.faults.get(r, 0) for r in FAULT_REASONS)

    def progress_payload(self) -> dict[str, Any]:
        elapsed = time.monotonic() - self._started
        rate = self.played_now / elapsed if elapsed > 0 and self.played_now else 0.0
        left = max(self.total - self.done, 0)
        eta = left / rate if rate > 0 else None
        return {
            "name": self.name,
            "total": self.total,
            "done": self.done,
            "running": self.running,
            "closed": self.closed,
            "stopping": self.stopping_,
            "games_running": len(self.games),
            "per_minute": round(60 * rate, 2),
            "eta_seconds": None if eta is None or not math.isfinite(eta) else round(eta),
            "elapsed_seconds": round(elapsed),
            "faults": self.faults,
            "disqualified": self.disqualified,
            "remote": [
                {"name": p.name, "state": p.state, "rtt_ms": p.rtt_ms}
                for p in (self.remote() if self.remote is not None else [])
            ],
        }

    def game_payload(self, key: str) -> dict[str, Any] | None:
        game = self.games.get(key)
        return None if game is None else game.payload()

    def game_bytes(self, key: str) -> bytes | None:
        game = self.games.get(key)
        return None if game is None else game.encoded()

    def snapshot(self) -> dict[str, Any]:
        return {
            "progress": self.progress_payload(),
            "games": [g.payload() for g in list(self.games.values())],
        }

    @staticmethod
    def encode(value: Any) -> bytes:
        return _encoder.encode(value)
