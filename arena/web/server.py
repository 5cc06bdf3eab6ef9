"""Serving the web view with Hypercorn's trio worker, inside the arena's trio loop.

One loop for the referee and the server keeps the live events in-process (no
queue between processes), and Hypercorn's trio worker is what lets a trio
program host an ASGI app. The server is bound to 127.0.0.1 unless asked
otherwise; any other address requires a token, generated if none is given, and
so does a server behind a reverse proxy (``arena/web/proxy.py``: reached from
wherever the proxy is). A view without a token answers only requests naming
its own address (``arena/web/guard.py``). With remote entrants the same server
carries their gateway (``arena/web/gateway.py``), outside that guard: a bot has
its own token. Given a certificate and its key (:class:`Tls`), the same server
speaks HTTPS and WSS instead (Hypercorn's ``certfile``/``keyfile``), and the
addresses it prints say ``https://``.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import socket
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve
from starlette.types import ASGIApp

from arena.engine.gateway import presence_lines
from arena.protocol.text import visible
from arena.web.app import Site, build_app, refresh_results
from arena.web.gateway import max_message_size, with_gateway
from arena.web.guard import own_hosts
from arena.web.proxy import Network, behind_proxies, parse_proxies, parse_public_url, path_prefix

if TYPE_CHECKING:
    from arena.engine.gateway import Gateway
    from arena.tournament import Tournament

__all__ = [
    "Listen",
    "Tls",
    "base_url",
    "parse_listen",
    "run_with_web",
    "serve",
    "serve_forever",
    "url_for",
]

DEFAULT_HOST = "127.0.0.1"
SEND_TIMEOUT = 10.0
"""Seconds a connection's sent data may stay unacknowledged (a page that stopped
reading: its window closed) before the kernel drops it. Hypercorn shields its
sends from cancellation, so without this one stalled ``/live/events`` client
would keep ``arena run --web`` from ending for as long as it stayed; set as
``TCP_USER_TIMEOUT`` on the listening socket, which every connection inherits
(Linux honours it for zero-window probes too)."""
MAX_PEM = 1 << 20
"""Bytes of a certificate or key file looked at for its PEM marker."""


@dataclass(frozen=True, slots=True)
class Tls:
    """The server's certificate (its chain, PEM) and private key (PEM, unencrypted)."""

    certfile: str
    keyfile: str


@dataclass(frozen=True, slots=True)
class Listen:
    host: str
    port: int
    token: str | None
    proxies: tuple[Network, ...] = ()
    """Reverse proxies whose ``X-Forwarded-For`` names the client (``--trust-proxy``)."""
    public: str | None = None
    """The address printed instead of the bound one (``--public-url``)."""
    tls: Tls | None = None
    """A certificate and its key (``--tls-cert``, ``--tls-key``): HTTPS and WSS."""

    @property
    def loopback(self) -> bool:
        return _is_loopback(self.host)

    @property
    def prefix(self) -> str:
        """The path the proxy serves the view under (``/cup``), or ``""``."""
        return path_prefix(self.public)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_listen(
    text: str,
    token: str | None = None,
    *,
    trust: Sequence[str] = (),
    public: str | None = None,
    cert: str | None = None,
    key: str | None = None,
) -> Listen:
    """``PORT`` or ``HOST:PORT`` (``[::1]:PORT`` for IPv6), with the proxies to
    ``trust`` and the ``public`` address behind them. Binding anything but a
    loopback address, or serving through a proxy, needs a token; without one, a
    random token is made. ``cert`` and ``key`` (both or neither) serve HTTPS,
    checked here (:func:`load_tls`)."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = DEFAULT_HOST, text
    host = host.strip("[]") or DEFAULT_HOST
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"--web/--listen wants [HOST:]PORT, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} is out of range (0-65535)")
    if token is not None and not token.strip():
        raise ValueError("--token must not be empty")
    proxies = parse_proxies(trust)
    public = parse_public_url(public) if public is not None else None
    if token is None and (not _is_loopback(host) or proxies or public):
        token = secrets.token_urlsafe(18)
    return Listen(host, port, token, proxies, public, load_tls(cert, key))


def base_url(bound: str, listen: Listen) -> str:
    """Where the server is reached: ``--public-url`` if given, else the bound URL."""
    return (listen.public or bound).rstrip("/")


def load_tls(cert: str | None, key: str | None) -> Tls | None:
    """``--tls-cert`` and ``--tls-key``, loaded once as Hypercorn will load them, so
    that a missing, unreadable or mismatched file is one line (a ``ValueError``)
    before any game starts rather than a traceback from the server once it has.
    An encrypted key is refused rather than asked for on the terminal: the
    server reads it again when it starts, unattended."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ValueError("--tls-cert and --tls-key go together (a certificate and its key)")
    markers = (
        ("--tls-cert", cert, b"-----BEGIN CERTIFICATE-----", "certificate"),
        ("--tls-key", key, b"PRIVATE KEY-----", "private key"),
    )
    for option, path, marker, what in markers:
        try:
            with open(path, "rb") as file:
                head = file.read(MAX_PEM)
        except OSError as e:
            raise ValueError(f"{option} {path}: cannot read it ({e.strerror or e})") from None
        if marker not in head:
            raise ValueError(f"{option} {path}: not a PEM {what}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)

    def no_passphrase() -> str:
        raise ValueError(f"--tls-key {key}: the key is encrypted; give it decrypted")

    try:
        context.load_cert_chain(cert, key, password=no_passphrase)
    except ssl.SSLError as e:
        if e.reason == "KEY_VALUES_MISMATCH":
            raise ValueError(f"--tls-key {key} is not the key of --tls-cert {cert}") from None
        why = (e.reason or str(e)).lower().replace("_", " ")
        raise ValueError(f"--tls-cert {cert}, --tls-key {key}: not usable ({why})") from None
    return Tls(cert, key)


def url_for(bound: str, listen: Listen, path: str = "/") -> str:
    """The address to open: :func:`base_url`, the path, and the token if there is one."""
    query = f"?token={listen.token}" if listen.token else ""
    return base_url(bound, listen) + path + query


async def serve(
    site: Site,
    listen: Listen,
    *,
    gateway: Gateway | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``site`` (and the remote bots' ``gateway``, if any) until cancelled;
    ``task_status.started`` gets the bound URL (with the real port when
    ``listen.port`` is 0)."""
    config = Config()
    config.bind = [f"fd://{_listening_socket(listen)}"]
    config.accesslog = None
    quiet = logging.getLogger("arena.web")
    quiet.setLevel(logging.ERROR)
    config.errorlog = quiet
    config.graceful_timeout = 0.5
    if listen.tls is not None:  # the bound address then says https://
        config.certfile, config.keyfile = listen.tls.certfile, listen.tls.keyfile
        # HTTP/1.1 only, as without TLS: its one flow control is TCP's, which
        # SEND_TIMEOUT bounds; an HTTP/2 stream's own window, left closed by a
        # page that stopped reading, could stall a send while TCP still flows,
        # which the kernel's timeout never sees.
        config.alpn_protocols = ["http/1.1"]
    app = build_app(site, token=listen.token, hosts=own_hosts(listen.host), root=listen.prefix)
    if gateway is not None:
        app = with_gateway(app, gateway)
        config.websocket_max_message_size = max_message_size(gateway)
    app = behind_proxies(app, listen.proxies)  # outermost: the gateway and view see the client

    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(_hypercorn, app, config)
        if site.hub is not None:
            nursery.start_soon(refresh_results, site)
        task_status.started(binds[0])


def _listening_socket(listen: Listen) -> int:
    """A bound TCP socket for ``listen`` (its fd, handed to Hypercorn), made as
    Hypercorn makes one, plus the send timeout every connection inherits."""
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if hasattr(socket, "TCP_USER_TIMEOUT"):
            ms = int(SEND_TIMEOUT * 1000)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT, ms)
        sock.bind((listen.host, listen.port))
    except BaseException:
        sock.close()
        raise
    return sock.detach()


async def _hypercorn(
    app: ASGIApp, config: Config, *, task_status: trio.TaskStatus[list[str]]
) -> None:
    # Starlette types the ASGI messages as plain mappings, Hypercorn as TypedDicts:
    # one protocol, types that do not unify (Hypercorn's issue 353).
    await hypercorn_serve(app, config, task_status=task_status)  # type: ignore[arg-type]


async def serve_forever(site: Site, listen: Listen, announce: Callable[[str], None]) -> None:
    """``arena serve``: serve until Ctrl-C."""
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve, site, listen)
        announce(url_for(url, listen))


async def run_with_web(
    tournament: Tournament, site: Site, listen: Listen, announce: Callable[[str], None]
) -> bool:
    """``arena run --web``: the tournament and its web view in one trio loop, until
    the run ends or is interrupted (``True``); the view closes with the run."""
    gateway = tournament.gateway
    if gateway is not None and site.hub is not None:
        site.hub.remote = gateway.status
        hub, last = site.hub, {p.name: str(p.state) for p in gateway.status()}

        def changed() -> None:
            hub.remote_changed()
            for line in presence_lines(last, gateway.status(), gateway.reconnect):
                tournament.observer.note(visible(line))  # an entry's name is shown escaped

        gateway.on_change = changed
    async with trio.open_nursery() as nursery:
        url = await nursery.start(partial(serve, site, listen, gateway=gateway))
        where = base_url(url, listen)
        hint = "" if gateway is None else f" (remote entrants: arena connect {where} --name NAME)"
        announce(url_for(url, listen, "/live") + hint)
        try:
            interrupted = await tournament.run_until_interrupted()
        finally:
            if gateway is not None:
                with trio.CancelScope(shield=True):  # bounded by its grace
                    await gateway.close_and_tell("the run is over")
        if site.hub is not None:
            with trio.move_on_after(5):
                await refresh_results(site, once=True)  # the final standings
            site.hub.close()
            await site.hub.flushed()
        nursery.cancel_scope.cancel()
    return interrupted
