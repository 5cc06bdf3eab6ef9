"""The game record: everything needed to replay and audit one finished game.

A plain msgspec value so that the referee produces it, the store writes it as one
JSON document in one transaction, and a remote worker can ship it back unchanged.
"""

from __future__ import annotations

from typing import Any

import msgspec

from arena.engine.record import SandboxRecord  # the engine's account of a bot's confinement
from arena.games import GameError, get_game

# End reasons. The rules' own reasons (e.g. "home-row", "deadlock", "battle") come
# from the game; these are the arena's verdicts on faults.
TIME = "time"
CRASH = "crash"
ILLEGAL = "illegal"
PROTOCOL = "protocol"
ADJUDICATED = "adjudicated"
START = "start"
"""The bot could not be started, or did not answer ``hello`` (mid-tournament: the
pre-flight saw it start), told apart from a fault in play; its detail says how."""
DISCONNECT = "disconnect"
"""A remote bot's connection was lost and did not come back within ``[remote]
reconnect_s`` (``arena/engine/link.py``)."""
FAULT_REASONS = (TIME, CRASH, ILLEGAL, PROTOCOL, START, DISCONNECT)


class ActionRecord(msgspec.Struct, frozen=True):
    """One decision: who made it, what it was, how long it took on their clock (``ms``,
    wall time) and of the CPU (``cpu_ms``)."""

    player: int
    action: str
    ms: int = 0
    forced: bool = False
    info: dict[str, Any] | None = None
    cpu_ms: float | None = None
    """CPU time the bot's cgroup used from the request to the answer, in milliseconds
    (all its processes; ``None``: no cgroup counted it, or a forced action)."""
    rtt_ms: float | None = None
    """A remote bot's connection round trip when it answered, in milliseconds (the
    median of the gateway's latest probes; ``None``: a local bot, or an older record)."""


class GameRecord(msgspec.Struct, kw_only=True):
    """A finished (or faulted) game. ``score`` is player 0's: 1, 0 or 0.5."""

    game: str
    variant: str
    players: list[str]
    opening: str
    actions: list[ActionRecord]
    score: float
    reason: str
    detail: str = ""
    faulty: int | None = None
    final_position: str = ""
    outcome: dict[str, Any] = msgspec.field(default_factory=dict)
    time_control: str = ""
    stderr_tails: list[str] = msgspec.field(default_factory=lambda: ["", ""])
    identities: list[dict[str, Any]] = msgspec.field(default_factory=list)
    """What each bot said of itself in its ``identity`` (name, author, version),
    player 0's first; empty in records stored before the arena kept it."""
    started_at: float = 0.0
    ended_at: float = 0.0
    sandbox: list[SandboxRecord] = msgspec.field(default_factory=list)
    """Per player; empty in records from before the sandbox."""

    @property
    def result(self) -> str:
        return {1.0: "1-0", 0.0: "0-1"}.get(self.score, "1/2-1/2")

    def figures(self) -> dict[str, str]:
        """The game's own figures of the final position (``State.figures``); none
        for a record its game cannot read, since the report or export of a broken
        record must still be written."""
        if not self.final_position:
            return {}
        try:
            return get_game(self.game).state_from_text(self.final_position).figures()
        except GameError:
            return {}
