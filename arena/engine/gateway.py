"""Who may connect as which remote entrant, and where their connections wait.

The web server's endpoint (``arena/web/gateway.py``) does the talking; this is
the part the tournament shares with it: the tokens (compared in constant time),
one live :class:`~arena.engine.link.RemoteLink` per entrant, a cap on the
connections still authenticating (each of which has :attr:`Gateway.auth_timeout`
seconds to do so, so a flood costs at most ``max_waiting`` sockets for that
long), the same per peer address with a smaller cap and a growing back-off
after a wrong token (:class:`Knocks`: one flooding address cannot fill the
global cap, and while barred its connections are turned away before the
WebSocket handshake, the cheapest refusal there is), and
:meth:`Gateway.connection`, where the games wait for an entrant.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import trio

from arena.engine.link import RemoteLink
from arena.protocol.remote import ENDING, REFUSED, RESTART, TAKEN, Auth

__all__ = ["AUTH_TIMEOUT", "MAX_WAITING", "PER_ADDRESS", "Gateway", "Knocks"]

AUTH_TIMEOUT = 5.0
"""Seconds a new connection has to send its :class:`Auth`."""
MAX_WAITING = 32
"""Connections authenticating at once; more are closed at once as busy."""
PER_ADDRESS = 4
"""Connections authenticating at once from one peer address; more are turned away."""
FREE_STRIKES = 2
"""Wrong tokens from one address that are only refused (a typo, a retry)."""
FIRST_BAR = 0.5
"""Seconds an address is barred after its next wrong token; each one after
that doubles the bar, up to :data:`MOST_BAR`."""
MOST_BAR = 8.0
MEMORY = 60.0
"""Seconds after its last wrong token (or its bar's end) an address is forgotten."""
HOLD = 1.0
"""Seconds at most a turned-away connection waits for its answer: a flooder
that waits for answers knocks that much less often (an idle socket costs no CPU)."""
MAX_HELD = 256
"""Turned-away connections held at once; past it they are answered at once."""
ADDRESSES = 4096
"""Addresses remembered at once (past it the oldest are forgotten)."""
CLOSE_GRACE = 2.0
"""Seconds the run's end waits for its remote entrants' sockets to be told it is over."""


Door = Literal["open", "busy", "crowded", "barred"]
"""What :meth:`Gateway.admission` says: authenticate; too many at once (accept and
close with a reason); too many from this address, or it is barred after a wrong
token (both turned away before the handshake)."""


IPV6_BLOCK = 64
"""The prefix length one IPv6 client is counted by (see :func:`peer_key`)."""


def peer_key(host: str | None) -> str | None:
    """What :class:`Knocks` counts a connection from ``host`` by: an IPv4 address
    as it is, an IPv6 address by its /64. A home or a server is given a whole /64
    (RFC 6177), so a flooder there has 2^64 addresses to rotate through, each of
    them counted afresh if counted alone; everyone in one /64 shares its limits
    instead, as rate limiters do (an IPv4 address mapped into IPv6 is the IPv4
    one). Anything that is not an address is kept as it is."""
    if host is None:
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_BLOCK), strict=False))
    return host


class Knocks:
    """Per peer (its address, an IPv6 one's /64: :func:`peer_key`): connections
    authenticating now, and the bar after wrong tokens. Pure bookkeeping: the
    caller says what time it is."""

    def __init__(
        self,
        per_address: int = PER_ADDRESS,
        *,
        free: int = FREE_STRIKES,
        first: float = FIRST_BAR,
        most: float = MOST_BAR,
        memory: float = MEMORY,
        addresses: int = ADDRESSES,
    ) -> None:
        self.per_address = per_address
        self.free = free
        self.first = first
        self.most = most
        self.memory = memory
        self.addresses = addresses
        self.waiting: dict[str, int] = {}
        self._strikes: dict[str, tuple[int, float, float]] = {}
        """Address: (wrong tokens in a row, barred until, that bar's length)."""

    def barred(self, peer: str, now: float) -> float:
        """Seconds ``peer`` is still barred for (0: not barred)."""
        entry = self._strikes.get(peer)
        return max(0.0, entry[1] - now) if entry is not None else 0.0

    def wrong(self, peer: str, now: float) -> float:
        """``peer`` sent a wrong token: the seconds it is barred for now (0: none)."""
        strikes, until, length = self._strikes.pop(peer, (0, now, 0.0))
        if now >= until + self.memory:
            strikes, length = 0, 0.0
        strikes += 1
        if strikes > self.free:
            length = min(length * 2, self.most) if length else self.first
        until = now + length
        self._strikes[peer] = (strikes, until, length)
        if len(self._strikes) > self.addresses:
            self._forget(now)
        return length if strikes > self.free else 0.0

    def _forget(self, now: float) -> None:
        for peer, (_, until, _) in list(self._strikes.items()):
            if now >= until + self.memory:
                del self._strikes[peer]
        while len(self._strikes) > self.addresses:  # all recent: the oldest go
            del self._strikes[next(iter(self._strikes))]


State = Literal["connected", "dropped", "restarting", "absent"]


@dataclass(frozen=True, slots=True)
class Presence:
    """Whether a remote entrant is here (:meth:`Gateway.status`)."""

    name: str
    state: State
    rtt_ms: float | None


def _nothing() -> None:
    pass


def presence_lines(before: dict[str, str], now: list[Presence], reconnect: float) -> list[str]:
    """What the operator's terminal says when remote entrants' presence changes
    (``before`` each entrant's last state, updated here; ``gone`` for one that did
    not come back): a connection lost, back, not back in time, and connected
    again later. A fresh bot the arena asked for (``restarting``) and the
    arrivals the pre-flight already announces are routine and say nothing."""
    lines = []
    for p in now:
        was, before[p.name] = before.get(p.name, "absent"), p.state
        if p.state == "dropped" and was != "dropped":
            lines.append(
                f"remote entrant {p.name} lost its connection; its clock runs while it "
                f"may come back (within {reconnect:g} s)"
            )
        elif p.state == "connected" and was == "dropped":
            lines.append(f"remote entrant {p.name} is back")
        elif p.state == "absent" and was in ("dropped", "gone"):
            if was == "dropped":
                lines.append(f"remote entrant {p.name} did not come back within {reconnect:g} s")
            before[p.name] = "gone"
        elif p.state == "connected" and was == "gone":
            lines.append(f"remote entrant {p.name} connected again")
    return lines


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
        knocks: Knocks | None = None,
        hold: float = HOLD,
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
        self.knocks = knocks if knocks is not None else Knocks()
        self.hold = hold
        self.held = 0
        """Turned-away connections waiting for their answer."""
        self._links: dict[str, RemoteLink] = {}
        self._arrived = {name: trio.Event() for name in self._tokens}
        self.over: str | None = None
        """Why the run is over, once it is: every entrant connecting is told so."""
        self.sockets = 0
        """Connections being served now, whatever their stage."""
        self._quiet = trio.Event()
        self.on_change: Callable[[], None] = _nothing
        """Told when an entrant connects, loses its socket or its link ends (the
        live view shows who is here)."""

    @property
    def names(self) -> list[str]:
        return list(self._tokens)

    def status(self) -> list[Presence]:
        """Each remote entrant: connected, back soon (its socket dropped, its link
        waits ``reconnect`` seconds), starting a fresh bot (the arena closed its
        link to restart it), or not connected; with its round trip."""
        out = []
        for name in self._tokens:
            link = self._links.get(name)
            if link is None:
                out.append(Presence(name, "absent", None))
                continue
            state: State
            if link.ended.is_set():  # a fresh bot on its way, or gone
                state = "restarting" if link.close_code == RESTART else "absent"
            else:
                state = "connected" if link.up else "dropped"
            out.append(Presence(name, state, None if state == "absent" else link.rtt_ms))
        return out

    @contextmanager
    def admission(self, peer: str | None, now: float) -> Iterator[Door]:
        """Whether one more connection from ``peer`` (its address, if known) may
        authenticate; if ``"open"`` it counts as waiting until the block ends."""
        knocks = self.knocks
        if peer is not None and knocks.barred(peer, now):
            yield "barred"
            return
        if peer is not None and knocks.waiting.get(peer, 0) >= knocks.per_address:
            yield "crowded"
            return
        if self.waiting >= self.max_waiting:
            yield "busy"
            return
        self.waiting += 1
        if peer is not None:
            knocks.waiting[peer] = knocks.waiting.get(peer, 0) + 1
        try:
            yield "open"
        finally:
            self.waiting -= 1
            if peer is not None:
                left = knocks.waiting.pop(peer) - 1
                if left:
                    knocks.waiting[peer] = left

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
        if self.over is not None:  # a bot started afresh as the run ended, say
            return ENDING, f"arena: {self.over}"
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

    async def close_and_tell(self, why: str, grace: float = CLOSE_GRACE) -> None:
        """:meth:`close`, then wait (at most ``grace`` seconds) until every socket has
        been answered: those up are sent their close frame, and one arriving now (a
        bot started afresh as the last game ended) is told the run is over. The run's
        end cancels the server right after: a socket cut before its frame went out is
        a lost connection to ``arena connect`` (1006), which then knocks again
        instead of ending."""
        self.over = why
        self.close(why)
        with trio.move_on_after(grace):
            while self.sockets:
                await self._quiet.wait()

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Count one connection while it is served (for :meth:`close_and_tell`)."""
        self.sockets += 1
        try:
            yield
        finally:
            self.sockets -= 1
            if not self.sockets:
                self._quiet.set()
                self._quiet = trio.Event()
