"""The remote bots' endpoint: a WebSocket at ``/bots/connect`` beside the web view.

Every connection is a stranger until its first frame names an entrant and its
token (:class:`~arena.protocol.remote.Auth`), within a few seconds; the web
view's own token and host check do not apply here (a bot has its own token, and
authors reach the arena by any name a proxy gives it). What a connection may
cost is bounded: a cap on connections authenticating at once (in all and per
peer address), a deadline for each, one live connection per entrant, and frames
no longer than the tournament's ``max_line`` (Hypercorn drops a message past
twice that before it reaches here). Every refusal is a close frame with one
readable line, except for an address barred after wrong tokens or with too many
authenticating: that is turned away before the handshake (HTTP 429 and the
line), the cheapest refusal. Refusals to strangers are held up to
``gateway.hold`` seconds, so that a flooder waiting for answers knocks rarely. An
accepted connection becomes the entrant's :class:`~arena.engine.link.RemoteLink`
for as long as it lasts.
"""

from __future__ import annotations

import math

import msgspec
import trio
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

from arena.engine.gateway import MAX_HELD, Gateway, peer_key
from arena.engine.link import RemoteLink
from arena.protocol.messages import ProtocolError
from arena.protocol.remote import (
    BAD_AUTH,
    BINARY,
    BUSY,
    GATEWAY_PATH,
    REFUSED,
    TOO_BIG,
    TOO_SLOW,
    Auth,
    Welcome,
    close_reason,
    decode_auth,
    decode_fault,
    rtt_frame,
    rtt_id,
)

__all__ = ["max_message_size", "with_gateway"]

PROBE_EVERY = 1.0
"""Seconds between two round-trip probes of one connection."""
PROBE_POLL = 0.05
"""How often an idle wait for a probe looks again whether the link is free."""
DROPPED = -1
"""The socket went away (the link may wait for the next)."""


def max_message_size(gateway: Gateway) -> int:
    """Hypercorn's bound on one WebSocket message: past it the server closes the
    connection itself (code 1009) before a byte reaches the app."""
    return 2 * gateway.max_line + 4096


def with_gateway(app: ASGIApp, gateway: Gateway) -> ASGIApp:
    """``app`` with the gateway's endpoint in front of it (outside its guard)."""

    async def router(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == GATEWAY_PATH:
            await _connection(gateway, WebSocket(scope, receive, send))
        else:
            await app(scope, receive, send)

    return router


async def _close(ws: WebSocket, code: int, reason: str) -> None:
    """Close with ``reason`` unless the connection is gone already."""
    try:
        with trio.move_on_after(1):
            await ws.close(code, close_reason(reason))
    except (RuntimeError, OSError, trio.BrokenResourceError, trio.ClosedResourceError):
        pass


async def _hold(gateway: Gateway, seconds: float) -> None:
    """Wait up to ``gateway.hold`` seconds before a refusal (at once if MAX_HELD
    wait already): a flooder that waits for its answers knocks that much less
    often, and an idle socket costs the arena no CPU."""
    if gateway.held < MAX_HELD:
        gateway.held += 1
        try:
            await trio.sleep(min(seconds, gateway.hold))
        finally:
            gateway.held -= 1


async def _turn_away(gateway: Gateway, ws: WebSocket, line: str, retry: float) -> None:
    """Refuse before the handshake: an HTTP 429 whose body is ``line`` (the
    cheapest refusal: no WebSocket frames, no auth frame awaited), after up to
    ``gateway.hold`` seconds (while fewer than MAX_HELD wait), so that a flooder
    waiting for its answers cannot knock again at once."""
    headers = {"Retry-After": str(max(1, math.ceil(retry)))}
    await _hold(gateway, retry)
    try:
        with trio.move_on_after(1):
            await ws.send_denial_response(PlainTextResponse(line, 429, headers))
    except (RuntimeError, OSError, trio.BrokenResourceError, trio.ClosedResourceError):
        pass


async def _connection(gateway: Gateway, ws: WebSocket) -> None:
    with gateway.serving():
        await _serve(gateway, ws)


async def _serve(gateway: Gateway, ws: WebSocket) -> None:
    peer = peer_key(ws.client.host if ws.client is not None else None)
    with gateway.admission(peer, trio.current_time()) as door:
        if door == "barred":
            left = gateway.knocks.barred(peer or "", trio.current_time())
            line = f"arena: a wrong token from your address; try again in {left:.1f} s"
            await _turn_away(gateway, ws, line, left)
            return
        if door == "crowded":
            line = "arena: too many connections from your address are authenticating"
            await _turn_away(gateway, ws, line, 1)
            return
        await ws.accept()
        if door == "busy":
            refusal: tuple[int, str] | None = (
                BUSY,
                "arena: too many connections are authenticating; try again shortly",
            )
        else:
            auth = await _authenticate(gateway, ws)
            if auth is None:
                return
            refusal = gateway.refusal(auth)
            if refusal is None:
                link = gateway.attach(auth.name)
                first = link.connected()
                gateway.on_change()
            elif refusal[0] == REFUSED and peer is not None:
                gateway.knocks.wrong(peer, trio.current_time())
    if refusal is not None:  # held outside the admission: it takes no place there
        if refusal[0] in (BUSY, REFUSED):
            await _hold(gateway, gateway.hold)
        await _close(ws, *refusal)
        return
    try:
        dropped = await _play(ws, link, gateway, first)
    except BaseException:
        link.close("the arena closed the connection")
        raise
    finally:
        link.released.set()
    if dropped:  # it may come back: the link waits (its game's clock runs meanwhile)
        link.up = False
        gateway.on_change()
        await link.dropped(link.why or "connection lost", gateway.reconnect)
    else:
        link.close(link.why or "the arena closed the connection")
    gateway.on_change()


async def _authenticate(gateway: Gateway, ws: WebSocket) -> Auth | None:
    """The first frame as an :class:`Auth`, or ``None`` once the socket is closed
    with the reason."""
    message = None
    with trio.move_on_after(gateway.auth_timeout):
        message = await ws.receive()
    if message is None:
        await _close(ws, TOO_SLOW, f"arena: no auth message within {gateway.auth_timeout:g} s")
        return None
    if message["type"] != "websocket.receive":
        return None  # it left
    text = message.get("text")
    if text is None:
        await _close(ws, BINARY, "arena: the first message must be a text frame")
        return None
    try:
        return decode_auth(text)
    except ProtocolError:
        expected = '{"type":"auth","name":ENTRY,"token":TOKEN}'
        await _close(ws, BAD_AUTH, f"arena: the first message must be {expected}")
        return None


async def _play(ws: WebSocket, link: RemoteLink, gateway: Gateway, first: list[bytes]) -> bool:
    """Pump frames between the socket and the link until either ends, after
    ``first``; ``True`` if the socket dropped (rather than the link ending)."""
    welcome = Welcome(
        name=link.name, max_line=gateway.max_line, leeway_ms=round(gateway.leeway * 1000)
    )
    code, reason = 0, ""
    lost = trio.Event()
    sending = trio.Lock()  # the lines and the probes share the socket
    async with trio.open_nursery() as nursery:

        async def from_bot() -> None:
            nonlocal code, reason
            try:
                await pump_in()
            except Exception as e:  # the network's errors end this connection, not the server
                link.why, code = f"receiving failed: {type(e).__name__}", DROPPED
                lost.set()

        async def pump_in() -> None:
            nonlocal code, reason
            while True:
                message = await ws.receive()
                if message["type"] != "websocket.receive":
                    # Hypercorn says 1000 or 1006, not the code the bot's side sent.
                    why = f"the bot's side closed it (code {message.get('code', 1005)})"
                    if link.reported is not None:
                        link.close(why)
                    else:
                        link.why, code = why, DROPPED
                        lost.set()
                    return
                text = message.get("text")
                if text is None:
                    code, reason = BINARY, "arena: the protocol's lines are text frames"
                    link.close("a binary frame")
                    return
                probe = rtt_id(text)
                if probe is not None:
                    shown = link.rtt_ms
                    link.probed(probe, trio.current_time())
                    if shown is None or round(shown, 1) != round(link.rtt_ms or 0, 1):
                        gateway.on_change()  # the live view shows each entrant's round trip
                    continue
                fault = decode_fault(text)
                if fault is not None:
                    link.reported = (fault.reason, fault.detail)
                    continue
                if not await link.deliver(text.encode()):
                    code = TOO_BIG
                    reason = f"arena: a frame over max_line ({link.max_line} bytes)"
                    return

        async def to_bot() -> None:
            nonlocal code
            try:
                await pump_out()
            except Exception as e:
                link.why, code = f"sending failed: {type(e).__name__}", DROPPED
                lost.set()

        async def pump_out() -> None:
            async with sending:
                await ws.send_text(msgspec.json.encode(welcome).decode())
                number = link.probe(trio.current_time(), first=True)
                if number is not None:  # before any line: the bot's side echoes it at once
                    await ws.send_text(rtt_frame(number))
                for line in first:
                    await ws.send_text(line.decode())
            nursery.start_soon(prober)
            while True:
                try:
                    line = await link.outgoing()
                except trio.EndOfChannel:
                    return
                async with sending:
                    await ws.send_text(line.decode())

        async def prober() -> None:
            """A round-trip probe whenever the link is idle, at most every PROBE_EVERY s."""
            nonlocal code
            try:
                while True:
                    number = link.probe(trio.current_time())
                    if number is not None:
                        async with sending:
                            if link.idle:  # still: no request went out while waiting
                                await ws.send_text(rtt_frame(number))
                            else:
                                link.probe_lost()
                    await trio.sleep(PROBE_EVERY if number is not None else PROBE_POLL)
            except Exception as e:
                link.why, code = f"sending failed: {type(e).__name__}", DROPPED
                lost.set()

        nursery.start_soon(from_bot)
        nursery.start_soon(to_bot)
        async with trio.open_nursery() as either:
            for event in (link.ended, lost):
                either.start_soon(_set_then_cancel, event, either.cancel_scope)
        nursery.cancel_scope.cancel()
    if code == DROPPED:
        return True
    await _close(ws, code or link.close_code, reason or f"arena: {link.why}")
    return False


async def _set_then_cancel(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
