"""What a request must be for the web view to answer it, and what every answer carries.

* **Who may ask.** A view with a token (any address but loopback has one) wants
  it on every request (:class:`TokenGate`). A view without one listens on a
  loopback address only, and answers only requests naming that address in their
  ``Host`` header (:func:`own_hosts`, checked by Starlette's
  ``TrustedHostMiddleware``): a page on another site that rebinds its own name to
  127.0.0.1 (DNS rebinding) sends its own name, and gets a 400, as RFC 9112 has a
  server answer a ``Host`` it will not serve (421 would tell a client to retry on
  another connection, which no other connection here answers either).
* **What every answer carries** (:data:`HEADERS`, through the ``secure``
  package's ASGI middleware, so that errors carry them too): a content security
  policy allowing only the view's own scripts, styles and connections (the
  pages have no inline script or style: ``/static/``), no framing by any site,
  no MIME sniffing, no referrer (a token in an address must not leak), and
  neither windows nor resources shared with other origins.
* **What may be asked.** Every paging and filter parameter has a type and a range
  (:class:`GamesQuery`, :class:`PageQuery`, :class:`ReplayQuery`); anything else,
  an unknown parameter too, is a 400 with a one-line JSON error naming the parameter
  (and, for an unknown one, the known ones), never a 500 from the
  database (``offset=9223372036854775808`` overflowed SQLite's integer).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Sequence
from http.cookies import SimpleCookie
from typing import Annotated, Literal, TypeVar

import msgspec
from msgspec import Meta
from secure import (
    ContentSecurityPolicy,
    CrossOriginOpenerPolicy,
    CrossOriginResourcePolicy,
    ReferrerPolicy,
    Secure,
    XContentTypeOptions,
    XFrameOptions,
)
from secure.middleware import SecureASGIMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.plan.config import NAME_RE
from arena.web.store_view import MAX_PAGE

__all__ = [
    "COOKIE",
    "HEADERS",
    "LOOPBACK_NAMES",
    "MAX_OFFSET",
    "BadRequest",
    "GamesQuery",
    "PageQuery",
    "ReplayQuery",
    "TokenGate",
    "guarded",
    "own_hosts",
    "parse_query",
]

COOKIE = "arena_token"

HEADERS = Secure(
    csp=ContentSecurityPolicy()
    .default_src("'none'")
    .script_src("'self'")
    .style_src("'self'")
    .img_src("'self'", "data:")  # the empty favicon is a data: address
    .connect_src("'self'")  # the games' JSON, the live event stream
    .base_uri("'none'")
    .form_action("'none'")  # the games filter is read by a script, never submitted
    .frame_ancestors("'none'"),
    xfo=XFrameOptions().deny(),
    xcto=XContentTypeOptions().nosniff(),
    referrer=ReferrerPolicy().no_referrer(),
    coop=CrossOriginOpenerPolicy().same_origin(),
    corp=CrossOriginResourcePolicy().same_origin(),
)
"""The headers of every answer, errors included."""

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def own_hosts(host: str) -> list[str]:
    """The ``Host`` names (without port: any port is accepted) of a view bound to ``host``.

    The address as written (an IPv6 one in brackets, as a ``Host`` header writes
    it) and, for a loopback address, ``localhost``; ``localhost`` itself also
    answers to both loopback addresses, either of which it may be bound to.
    """
    host = host.strip("[]")
    if host == "localhost":
        return list(LOOPBACK_NAMES)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return [host.lower()]
    literal = f"[{address.compressed}]" if address.version == 6 else address.compressed
    return [literal, "localhost"] if address.is_loopback else [literal]


def guarded(app: ASGIApp, *, token: str | None, hosts: Sequence[str], root: str = "") -> ASGIApp:
    """``app`` behind the token (or, without one, the ``hosts`` check), with
    :data:`HEADERS`; the token's cookie is for the pages under ``root`` only."""
    inner: ASGIApp = (
        TokenGate(app, token, root)
        if token
        else TrustedHostMiddleware(app, allowed_hosts=list(hosts), www_redirect=False)
    )
    # secure types ``send`` as taking any object (it passes the app's messages on),
    # which Starlette's ``Send`` (message mappings only) is not: a valid ASGI app whose
    # types are looser than Starlette's.
    return SecureASGIMiddleware(inner, secure=HEADERS)  # type: ignore[return-value]


class TokenGate:
    """Every request must carry the token: ``?token=``, the cookie this sets on the
    first good request, or ``Authorization: Bearer``. Compared in constant time.
    The cookie's path is ``root`` (``/cup``, where a proxy serves the view; ``/``
    without one): a browser sends it to this arena's pages only, not to the rest
    of the proxy's site, nor to another arena beside it under another path."""

    def __init__(self, app: ASGIApp, token: str, root: str = "") -> None:
        self.app = app
        self.token = token.encode()
        self.path = root or "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get("token")
        from_query = given is not None
        if given is None:
            given = request.cookies.get(COOKIE)
        if given is None:
            auth = request.headers.get("authorization", "")
            given = auth[7:] if auth.lower().startswith("bearer ") else None
        if given is None or not hmac.compare_digest(given.encode(), self.token):
            response = Response(
                "this arena web view needs its token: open the address the arena printed, "
                "with ?token=...",
                status_code=401,
                media_type="text/plain",
            )
            await response(scope, receive, send)
            return
        if not from_query:
            await self.app(scope, receive, send)
            return

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                cookie: SimpleCookie = SimpleCookie()
                cookie[COOKIE] = self.token.decode()
                cookie[COOKIE]["path"] = self.path
                cookie[COOKIE]["httponly"] = True
                cookie[COOKIE]["samesite"] = "Strict"
                if scope.get("scheme") == "https":  # served with TLS: never sent without
                    cookie[COOKIE]["secure"] = True
                header = cookie.output(header="").strip().encode()
                message = {**message, "headers": [*message["headers"], (b"set-cookie", header)]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


# --------------------------------------------------------------------------- parameters

MAX_OFFSET = 1_000_000_000
"""Furthest a page may start: beyond any store's games (a schedule holds at most a
million), well within SQLite's integers."""

Offset = Annotated[int, Meta(ge=0, le=MAX_OFFSET)]
Limit = Annotated[int, Meta(ge=0, le=MAX_PAGE)]


class PageQuery(msgspec.Struct, kw_only=True, frozen=True):
    """``offset`` and ``limit`` of a page of games (``token`` is the gate's to judge;
    any other parameter is a 400, :func:`parse_query`)."""

    offset: Offset = 0
    limit: Limit = 50


class GamesQuery(PageQuery, kw_only=True, frozen=True):
    """A tournament's games page: by player (an entry's name), end reason, result,
    only the faulted ones, or only those with a blunder (``arena analyze``)."""

    player: Annotated[str, Meta(pattern=f"^$|{NAME_RE.pattern}")] = ""
    reason: Annotated[str, Meta(pattern=r"^$|^[a-z][a-z0-9-]{0,31}$")] = ""
    result: Literal["", "1-0", "0-1", "1/2-1/2"] = ""
    faulted: bool = False
    blunder: bool = False


class ReplayQuery(msgspec.Struct, kw_only=True, frozen=True):
    """One stored game, by its key."""

    key: Annotated[str, Meta(min_length=1, max_length=300)]


class BadRequest(Exception):
    """A query parameter out of its type or range; the text names it, in one line."""


Q = TypeVar("Q", bound=msgspec.Struct)


PASSED_QUERY = frozenset({"token"})
"""Query parameters no page reads (:class:`TokenGate`'s), allowed beside each page's own."""


def parse_query(request: Request, kind: type[Q]) -> Q:
    """The request's query parameters as ``kind`` (a parameter given twice: its last
    value); :class:`BadRequest` naming the first one that does not fit, or one that
    ``kind`` does not know (``?bot=X`` for ``player=``: silently ignored, it answered
    every game), with the known ones."""
    known = kind.__struct_fields__
    unknown = [k for k in request.query_params if k not in known and k not in PASSED_QUERY]
    if unknown:
        raise BadRequest(f"unknown query parameter `{unknown[0]}` (known: {', '.join(known)})")
    try:
        return msgspec.convert(dict(request.query_params), type=kind, strict=False)
    except msgspec.ValidationError as exc:
        raise BadRequest(str(exc).replace("`$.", "query parameter `")) from None
