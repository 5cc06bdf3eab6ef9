"""Who may connect as which remote entrant, and where their connections wait.

The web server's endpoint (``arena/web/gateway.py``) does the talking; this is
the part the tournament shares with it: the tokens (compared in constant time),
one live :class:`~arena.engine.link.RemoteLink` per entrant, a cap on the
connections still authenticating (each of which has :attr:`Gateway.auth_timeout`
seconds to do so, so a flood costs at most ``max_waiting`` sockets for that
long), and :meth:`Gateway.connection`, where the games wait for an entrant.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import trio

from arena.engine.link import RemoteLink
from arena.protocol.remote import REFUSED, TAKEN, Auth

__all__ = ["AUTH_TIMEOUT", "MAX_WAITING", "Gateway"]

AUTH_TIMEOUT = 5.0
"""Seconds a new connection has to send its :class:`Auth`."""
MAX_WAITING = 32
"""Connections authenticating at once; more are closed at once as busy."""


class Gateway:
    """The remote entrants' door: their tokens and their live connections."""

    def __init__(
        self,
        tokens: Mapping[str, bytes],
        *,
        max_line: int,
        leeway: float,
        reconnect: float = 0.0,
        auth_timeout: float = AUTH_TIMEOUT,
        max_waiting: int = MAX_WAITING,
    ) -> None:
        self._tokens = dict(tokens)
        self.max_line = max_line
        self.leeway = leeway
        self.reconnect = reconnect
        """Seconds a link whose socket dropped waits for the entrant to connect again."""
        self.auth_timeout = auth_timeout
        self.max_waiting = max_waiting
        self.waiting = 0
        """Connections accepted that have not authenticated yet."""
        self._links: dict[str, RemoteLink] = {}
        self._arrived = {name: trio.Event() for name in self._tokens}

    @property
    def names(self) -> list[str]:
        return list(self._tokens)

    @contextmanager
    def admission(self) -> Iterator[bool]:
        """Whether one more connection may authenticate (``False``: too many are);
        it counts as waiting until the block ends."""
        if self.waiting >= self.max_waiting:
            yield False
            return
        self.waiting += 1
        try:
            yield True
        finally:
            self.waiting -= 1

    def refusal(self, auth: Auth) -> tuple[int, str] | None:
        """Why ``auth`` may not connect (a close code and one line), else ``None``.

        The token is compared in constant time, against a stand-in for an
        unknown name, and one answer covers both: a stranger learns no names.
        """
        expected = self._tokens.get(auth.name)
        given = auth.token.encode()
        same = hmac.compare_digest(given, expected if expected is not None else b"\0" * len(given))
        if expected is None or not same:
            return REFUSED, "arena: no remote entrant of that name with that token"
        link = self._links.get(auth.name)
        if link is not None and link.up:
            return TAKEN, f"arena: {auth.name} is connected already (one connection per entrant)"
        return None

    def attach(self, name: str) -> RemoteLink:
        """``name``'s link for a new socket (whose :meth:`refusal` was ``None``): the
        one waiting for it to come back, else a new one, handed to whoever waits
        in :meth:`connection`. The caller tells it :meth:`RemoteLink.connected`."""
        link = self.current(name)
        if link is None:
            link = RemoteLink(name, max_line=self.max_line, leeway=self.leeway)
            self._links[name] = link
        arrived, self._arrived[name] = self._arrived[name], trio.Event()
        arrived.set()
        return link

    def current(self, name: str) -> RemoteLink | None:
        """``name``'s link unless it has ended (its socket may be down for a moment)."""
        link = self._links.get(name)
        return link if link is not None and not link.ended.is_set() else None

    async def connection(self, name: str, deadline: float) -> RemoteLink | None:
        """``name``'s live link, waiting for it until ``deadline`` (trio time);
        ``None`` if it has not connected by then."""
        with trio.move_on_at(deadline):
            while True:
                link = self.current(name)
                if link is not None:
                    return link
                await self._arrived[name].wait()
        return None

    def close(self, why: str) -> None:
        """Every live link ends (the arena is ending)."""
        for link in self._links.values():
            link.close(why)
