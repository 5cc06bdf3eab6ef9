"""What the referee needs of a bot, whatever runs it: a :class:`Player`.

:class:`arena.engine.bot.Engine` (a local process) satisfies it, and so does any
other :class:`~arena.engine.conversation.Conversation` that adds a way to start and
stop its bot and a sandbox record (a remote bot; the tests' scripted bot), so the
referee (``arena/match/``) is written and tested against this, not one class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from arena.engine.errors import EngineError
    from arena.engine.exchange import Reply
    from arena.engine.record import SandboxRecord
    from arena.protocol.messages import GameOver, Go, Identity, NewGame, Quit, SetOption


class Player(Protocol):
    """A bot the referee can start, question and stop (one request at a time)."""

    identity: Identity | None
    """What it said of itself at its last start."""
    faulted: EngineError | None
    """The fault that ended its last incarnation (``None`` while healthy); the referee
    sets it at a time loss it declares itself."""
    starts: int
    """How many times it has been started."""

    @property
    def name(self) -> str: ...

    @property
    def running(self) -> bool:
        """Started, and its far end has not ended."""
        ...

    @property
    def leeway(self) -> float:
        """Seconds each request's deadline is extended by (and its charge reduced by)."""
        ...

    @property
    def sandbox_record(self) -> SandboxRecord: ...

    def stderr_tail(self, *, clear: bool = False) -> str: ...

    def cpu_seconds(self) -> float | None: ...

    def round_trip_ms(self) -> float | None:
        """A remote bot's connection round trip (``None``: a local bot)."""
        ...

    async def start(self, game: str, variant: str, *, check_identity: bool = True) -> Identity: ...

    async def restart(self, game: str, variant: str) -> Identity: ...

    async def stop(self, *, graceful: bool = True) -> None: ...

    async def new_game(self, msg: NewGame, timeout: float = 10.0) -> Reply: ...

    async def go(self, msg: Go, timeout: float) -> Reply: ...

    async def notify(self, msg: GameOver | Quit | SetOption, timeout: float = 1.0) -> None: ...


__all__ = ["Player"]
