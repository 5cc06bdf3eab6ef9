"""Serving behind a reverse proxy the operator named: who each connection comes
from, and the address to print.

Behind a proxy (TLS in front of ``arena run --web``) every connection's TCP
peer is the proxy, so the gateway's per-address limits would lump every author
together: one flooder's bar would bar them all. The proxy says whom it served in
``X-Forwarded-For``, appending the address it saw to whatever the client sent;
so only the right-most entries are the proxies' word, and only when the peer is
one of them. Hence, like uvicorn's ``--forwarded-allow-ips`` (and unlike
Hypercorn's ``ProxyFixMiddleware``, which believes the header from anyone and
also rewrites ``Host``):

* from a peer not in ``--trust-proxy`` the header is ignored (a stranger cannot
  dodge its bar by writing one);
* from a trusted peer the entries are read from the right, past those that are
  trusted proxies themselves, and the first other one is the client;
* an entry there that is not an address (garbage, ``unknown``, an obfuscated
  name) leaves the proxy's own address: never a crash, never a made-up key.

Only the address changes (``scope["client"]``, port 0: the proxy knows the
client's port, the arena does not need it); ``Host`` and the scheme stay as
they came, the web view's guard judges them as ever. ``Forwarded`` (RFC 7239)
is not read: Caddy and nginx write ``X-Forwarded-For``, and a proxy writing only
``Forwarded`` leaves every connection keyed by the proxy, as without this.
Header sizes are bounded by Hypercorn: over HTTP/1.1 a request head it has to
buffer past 16 KiB (h11's bound; it reads 64 KiB at a time, so a head arriving
whole may be up to that) gets a 431, over HTTP/2 the header list is at most 64
KiB; the walk looks at no more than :data:`MAX_HOPS` entries of it.

What the arena prints (the web view's address, the ``arena connect`` line) is
the bound address, which behind a proxy nobody outside can use: ``--public-url``
gives the proxy's (:func:`parse_public_url`). Its path, if any, is where the
proxy serves the arena (``/cup``, :func:`path_prefix`): the proxy strips it, so
the arena still routes at ``/``, and the web view's pages put it in front of
every address they name, so that a browser's requests come back to the proxy
under it.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Iterable, Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "MAX_HOPS",
    "Network",
    "behind_proxies",
    "client_address",
    "parse_proxies",
    "parse_public_url",
    "path_prefix",
]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_HOPS = 16
"""Entries of ``X-Forwarded-For`` read from the right, at most: a client behind
more trusted hops than that is keyed by the peer's address."""

HEADER = b"x-forwarded-for"


def parse_proxies(texts: Iterable[str]) -> tuple[Network, ...]:
    """``--trust-proxy`` values (an address, or a network such as ``10.0.0.0/8``);
    a ``ValueError`` naming the first that is neither. Names are not resolved:
    what is trusted must not change with DNS."""
    networks = []
    for text in texts:
        try:
            networks.append(ipaddress.ip_network(text.strip()))
        except ValueError as exc:
            raise ValueError(
                f"--trust-proxy {text!r}: not an IP address or network ({exc})"
            ) from None
    return tuple(networks)


def _address(text: str) -> Address | None:
    """One entry of the header as an address: ``1.2.3.4``, ``1.2.3.4:5678``,
    ``2001:db8::1``, ``[2001:db8::1]`` or ``[2001:db8::1]:5678`` (an IPv4 address
    mapped into IPv6 as the IPv4 one); ``None`` for anything else."""
    text = text.strip(" \t")
    port = ""
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else ""
        if rest and not port:
            return None
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
        if not port:
            return None
    else:
        host = text
    if port and not (port.isascii() and port.isdigit() and len(port) <= 5):
        return None
    if "%" in host:  # a zone names an interface of the proxy, not a client
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: Address, proxies: Sequence[Network]) -> bool:
    return any(address in network for network in proxies)


def client_address(
    peer: str, headers: Iterable[tuple[bytes, bytes]], proxies: Sequence[Network]
) -> str:
    """The address the connection from ``peer`` stands for: ``peer`` itself unless
    it is one of ``proxies``; else the right-most ``X-Forwarded-For`` entry that is
    not a trusted proxy (the left-most if all are), or ``peer`` if that entry is
    not an address or there is no header. ``headers`` as ASGI gives them (names
    in lower case; several lines of the header read as one, in order)."""
    seen = _address(peer)
    if seen is None or not _trusted(seen, proxies):
        return peer
    values = [value for name, value in headers if name == HEADER]
    if not values:
        return peer
    # At most MAX_HOPS pieces: past them the left-most keeps its commas, so it is
    # no address and a chain that long leaves the peer.
    entries = b",".join(values).decode("latin-1").rsplit(",", MAX_HOPS - 1)
    client = None
    for entry in reversed(entries):
        client = _address(entry)
        if client is None:
            return peer
        if not _trusted(client, proxies):
            return str(client)
    return peer if client is None else str(client)  # all trusted: the left-most


def behind_proxies(app: ASGIApp, proxies: Sequence[Network]) -> ASGIApp:
    """``app`` seeing, in ``scope["client"]``, the address a trusted proxy forwarded
    (:func:`client_address`); unchanged without ``proxies``."""
    if not proxies:
        return app

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if scope["type"] in ("http", "websocket") and client:
            address = client_address(client[0], scope["headers"], proxies)
            if address != client[0]:
                scope = {**scope, "client": (address, 0)}
        await app(scope, receive, send)

    return middleware


def parse_public_url(text: str) -> str:
    """``--public-url``: the address authors and viewers reach the arena at through
    the proxy (``https://host/cup/``), printed instead of the bound one; a
    ``ValueError`` in one line unless it is an http(s) address with a host and
    nothing after its path. Without a trailing slash."""
    parts = urllib.parse.urlsplit(text.strip())
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        port_ok = False
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or not port_ok
        or parts.username is not None
        or parts.query
        or parts.fragment
        or any(c.isspace() for c in text.strip())
    ):
        raise ValueError(
            f"--public-url wants the address authors reach the arena at, "
            f"http(s)://HOST[:PORT][/PATH], got {text!r}"
        )
    return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/")))


def path_prefix(public: str | None) -> str:
    """The path the proxy serves the arena under, from ``--public-url``
    (:func:`parse_public_url`'s): ``/cup`` for ``https://host/cup/``, ``""`` for
    none (and without ``--public-url``). Percent-encoded as a browser would send it,
    so that it goes into a page, a ``Location`` or a cookie's ``Path`` as it is
    (no quote, no ``;``, no space)."""
    if public is None:
        return ""
    return urllib.parse.quote(urllib.parse.urlsplit(public).path.rstrip("/"), safe="/%")
