"""A remote entrant as the referee sees it: a :class:`~arena.engine.player.Player`
whose transport is its gateway connection (:class:`~arena.engine.link.RemoteLink`).

There is no process here: no pid, cgroup, freezer or stderr (the bot's sandbox
is on its author's machine, under ``arena connect``), and the wall clock is what
a move is charged, less the link's leeway (``Conversation`` does both).
Starting waits for the entrant's connection (up to ``wait`` seconds); stopping
closes it with :data:`~arena.protocol.remote.RESTART`, so that ``arena connect``
comes back at once with a fresh process of the bot for the next start, as a
local bot is started afresh after a fault.
"""

from __future__ import annotations

from typing import Literal

import trio

from arena.engine.config import EngineConfig
from arena.engine.conversation import Conversation
from arena.engine.errors import EngineCrashed
from arena.engine.gateway import Gateway
from arena.engine.link import RemoteLink
from arena.engine.record import SandboxRecord
from arena.protocol.messages import Identity
from arena.protocol.remote import RESTART

__all__ = ["RemoteEngine"]


class RemoteEngine(Conversation):
    """Remote entrant ``config.name``, reached through ``gateway``."""

    def __init__(self, config: EngineConfig, gateway: Gateway, wait: float) -> None:
        super().__init__(config)
        self.gateway = gateway
        self.wait = wait
        """Seconds :meth:`start` waits for the entrant to be connected."""
        self._link: RemoteLink | None = None

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> Literal[False]:
        await self.stop(graceful=exc_type is None)
        await self._close_tasks()
        return False

    @property
    def pid(self) -> int | None:
        return None

    @property
    def pgid(self) -> int | None:
        return None

    @property
    def sandbox_record(self) -> SandboxRecord:
        """Nothing the arena confines: the bot runs on its author's machine."""
        return SandboxRecord(mode="remote")

    @property
    def link(self) -> RemoteLink | None:
        return self._link

    async def start(self, game: str, variant: str, *, check_identity: bool = True) -> Identity:
        if self._nursery is None:
            raise RuntimeError("use 'async with RemoteEngine(...)' before start()")
        if self._transport is not None:
            raise RuntimeError(f"{self.name}: already running; use restart()")
        self.faulted = None
        self.identity = None
        self._tail.clear()
        spent = self.gateway.current(self.name)
        if spent is not None and spent.spent:  # its bot has had its session: a fresh one
            spent.close("the arena starts the bot afresh", code=RESTART)
        link = await self.gateway.connection(self.name, trio.current_time() + self.wait)
        if link is None:
            err = EngineCrashed(
                f"not connected within {self.wait:g} s (its author runs arena connect)",
                engine=self.name,
            )
            self.faulted = err
            raise err
        self._link = link
        self._attach(link)
        self.starts += 1
        self._nursery.start_soon(self._watch, link)
        return await self._handshake(game, variant, check_identity=check_identity)

    async def _watch(self, link: RemoteLink) -> None:
        """A read in progress when the link ends only drains what already arrived."""
        await link.ended.wait()
        if self._link is link:
            self._cut_short()

    async def stop(self, *, graceful: bool = True) -> None:
        """Detach. After a fault the connection closes with :data:`RESTART` (a fresh
        bot next time) at once; otherwise the link is left up, marked spent, and
        closed so only when a bot is wanted again (:meth:`start`): at the run's end
        the gateway closes it with ``ENDING`` instead, and ``arena connect`` ends
        rather than coming back to an arena that has gone."""
        link, self._link = self._link, None
        self._transport = None
        if link is None:
            return
        if graceful and self.faulted is None and not link.ended.is_set():
            link.spent = True
        else:
            link.close("the arena starts the bot afresh", code=RESTART)
