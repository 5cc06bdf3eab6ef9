"""``arena connect``: one remote entrant's bot, run here, played through a gateway.

The bot runs behind an ordinary :class:`~arena.engine.bot.Engine` (its sandbox,
limits, freezing and line checks, exactly as a local entrant's), and this module
carries each of the arena's lines to it and its answer back, with the arena's
ids. A bot that passes ``arena check-bot`` here therefore plays remotely
unchanged. When the bot faults here (it crashes, breaks the protocol, or does
not answer long after its budget), the connection is closed with
:data:`~arena.protocol.remote.BOT_FAULT` and the fault as its reason, so the
arena records the fault instead of waiting; the next connection starts the bot
afresh.

Every wait has a deadline: the connection's opening and the first exchange,
each send, each answer of the bot (its budget and a margin: the arena's clock
is the one that counts), and a WebSocket ping every :data:`HEARTBEAT` seconds,
which also measures the latency shown. A dropped or lost connection is opened
again after a backoff that doubles up to :data:`MAX_BACKOFF`; a refusal that
another try cannot cure (a wrong token, an arena whose certificate is not
trusted here, one that does not speak TLS at a ``wss://`` address or speaks it
at a ``ws://`` one) ends the run with its one line.
"""

from __future__ import annotations

import ssl
import urllib.parse
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial

import msgspec
import trio
from trio_websocket import (
    ConnectionClosed,
    HandshakeError,
    WebSocketConnection,
    open_websocket_url,
)

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.errors import EngineError
from arena.engine.exchange import Reply
from arena.protocol.messages import (
    GameOver,
    Go,
    Hello,
    Identity,
    NewGame,
    Ping,
    ProtocolError,
    Quit,
    SetOption,
    decode_arena_message,
    encode_line,
)
from arena.protocol.remote import (
    BAD_AUTH,
    BOT_FAULT,
    ENDING,
    GATEWAY_PATH,
    REFUSED,
    RESTART,
    Auth,
    Fault,
    close_reason,
    decode_welcome,
    rtt_id,
)
from arena.protocol.text import visible

__all__ = ["ConnectError", "Link", "connect", "gateway_url"]

OPEN_TIMEOUT = 10.0
"""Seconds to open the connection and be welcomed."""
SEND_TIMEOUT = 30.0
"""Seconds one line may take to leave (the arena not reading)."""
HEARTBEAT = 15.0
"""Seconds between pings of an idle connection; one unanswered for as long drops it."""
ANSWER_MARGIN = 10.0
"""Seconds past its budget the bot is waited for before it counts as hung here."""
NEWGAME_TIMEOUT = 60.0
CLOSED_POLL = 0.05
"""While the bot thinks, how often to look whether the arena closed the connection."""
FIRST_BACKOFF = 1.0
MAX_BACKOFF = 30.0


LAST_WORDS = 20
"""Lines of a failed bot's stderr shown to its author (the arena is not sent them)."""


def _last_words(tail: str) -> list[str]:
    """The end of what a failed bot wrote on stderr, escaped, at most
    :data:`LAST_WORDS` lines: without it an author sees ``exited with code 1`` and
    has to run the bot by hand to learn why."""
    lines = [visible(line) for line in tail.splitlines() if line.strip()]
    return lines[-LAST_WORDS:]


class ConnectError(Exception):
    """The gateway refused for good (a wrong name or token, a bad address, a
    certificate not trusted here); one line."""


@dataclass(frozen=True, slots=True)
class Link:
    """Where to connect and as whom."""

    url: str
    """The ``ws://`` or ``wss://`` address of the gateway (:func:`gateway_url`)."""
    name: str
    token: str
    cafile: str | None = None
    """A CA's certificate (PEM) to trust for ``wss://`` instead of the system's store."""


def client_context(link: Link) -> ssl.SSLContext | None:
    """The TLS settings for ``link``: none for ``ws://``; for ``wss://`` the
    system's trust store (which ``SSL_CERT_FILE`` replaces), or ``link.cafile``
    alone, which is how an arena with a private CA's or a self-signed
    certificate is trusted. A file that cannot be read is one line, now."""
    if not link.url.startswith("wss:"):
        if link.cafile is not None:
            raise ConnectError("--cafile is for an https:// address")
        return None
    try:
        return ssl.create_default_context(cafile=link.cafile)
    except ssl.SSLError:  # read, but no certificate in it
        raise ConnectError(f"--cafile {link.cafile}: no PEM certificate in it") from None
    except OSError as e:
        raise ConnectError(f"--cafile {link.cafile}: cannot read it ({e.strerror or e})") from None


def gateway_url(url: str) -> str:
    """The gateway's WebSocket address for the web address the arena printed:
    ``http://HOST:PORT[/live?token=...]`` -> ``ws://HOST:PORT/bots/connect``
    (``https`` -> ``wss``). A path prefix other than ``/live`` is kept (a
    reverse proxy's); the web view's query is not (the bot has its own token)."""
    parts = urllib.parse.urlsplit(url.strip())
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme)
    if scheme is None or not parts.hostname:
        raise ConnectError(
            f"expected the arena's address as it prints it (http://HOST:PORT), got {url!r}"
        )
    path = parts.path.rstrip("/")
    path = path.removesuffix("/live").removesuffix(GATEWAY_PATH)
    return urllib.parse.urlunsplit((scheme, parts.netloc, path + GATEWAY_PATH, "", ""))


async def connect(
    link: Link,
    config: EngineConfig,
    say: Callable[[str], None],
    *,
    max_backoff: float = MAX_BACKOFF,
) -> None:
    """Play for ``link.name`` until the arena says ``quit`` (the tournament is over),
    opening the connection again after every drop. Raises :class:`ConnectError`
    for a refusal another try cannot cure."""
    backoff = FIRST_BACKOFF
    session = Session(link, config, say)
    while True:
        try:
            if await session.run():
                say(session.summary())
                return
            why = "the arena closed the connection"
        except BaseException as raised:  # trio's nurseries wrap the network's errors
            e = _leaf(raised)
            if isinstance(e, ConnectionClosed):
                said = e.reason
                code = 1006 if said is None else said.code  # none: closed without a frame
                reason = "" if said is None else visible(said.reason or "")
                if code in (REFUSED, BAD_AUTH):
                    raise ConnectError(f"the arena refused: {reason or code}") from None
                if code == ENDING:
                    say(f"the arena ended the run ({reason or code})")
                    say(session.summary())
                    return
                if code == RESTART:  # a fresh process of the bot, at once
                    say(f"the arena starts the bot afresh; connecting again ({reason})")
                    backoff = FIRST_BACKOFF
                    continue
                why = f"connection closed ({code}{': ' + reason if reason else ''})"
            elif isinstance(e, HandshakeError):
                status = getattr(e, "status_code", None)
                body = getattr(e, "body", None)  # the arena's one line, if it turned us away
                line = visible(body[:200].decode(errors="replace")) if body else ""
                detail = f"HTTP {status}" + (f": {line}" if line else "")
                why = "cannot open the connection" + (f" ({detail})" if status else "")
            elif isinstance(e, NETWORK):
                why = f"connection lost: {visible(str(e)) or type(e).__name__}"
            else:
                raise
        if session.welcomed:
            backoff = FIRST_BACKOFF  # it was up: the next drop starts afresh
        say(f"{why}; connecting again in {backoff:g} s")
        await trio.sleep(backoff)
        backoff = min(backoff * 2, max_backoff)


async def check_certificate(url: str, context: ssl.SSLContext) -> None:
    """A TLS handshake with the arena at ``url`` (``wss://``), then closed: an
    arena this machine does not trust, or one not speaking TLS, is a
    :class:`ConnectError`, for another try cannot cure it. trio-websocket drops
    the handshake's error and waits out its connect timeout instead, and then
    looks like an arena not answering, so this runs before a connection that
    follows none that was welcomed (the first, or one that failed). Anything
    else (refused, reset, too slow) is raised as it is: another try may cure it."""
    parts = urllib.parse.urlsplit(url)
    host, port = parts.hostname or "", parts.port or 443
    with trio.fail_after(OPEN_TIMEOUT):
        stream = await trio.open_ssl_over_tcp_stream(
            host, port, ssl_context=context, https_compatible=True
        )
        try:
            await stream.do_handshake()
        except trio.BrokenResourceError as e:
            cause = e.__cause__
            if isinstance(cause, ssl.SSLCertVerificationError):
                raise ConnectError(
                    f"the arena's certificate is not trusted here ({cause.verify_message}); "
                    "--cafile FILE trusts the CA that signed it, or a self-signed one"
                ) from None
            if type(cause) is ssl.SSLError:  # not an end of file or a reset: no TLS there
                why = (cause.reason or str(cause)).lower().replace("_", " ")
                raise ConnectError(
                    f"no TLS at {host}:{port} ({why}); is the address http://?"
                ) from None
            raise
        finally:
            await trio.aclose_forcefully(stream)


TLS_PROBE_TIMEOUT = 3.0
"""Seconds :func:`speaks_tls` gives a server (one that does not answer is left to
the connection itself)."""


async def speaks_tls(url: str) -> bool:
    """Whether the server at a ``ws://`` ``url`` completes a TLS handshake (its
    certificate not judged), asked before a connection that follows no welcomed
    one: an author given ``http://`` for an arena serving HTTPS would otherwise
    see only "cannot open the connection" every few seconds, each after the
    WebSocket's 10 s connect timeout (the TLS server's refusal does not end it).
    A plain HTTP server answers the handshake's first bytes with a 400 at once."""
    parts = urllib.parse.urlsplit(url)
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with trio.fail_after(TLS_PROBE_TIMEOUT):
            stream = await trio.open_ssl_over_tcp_stream(
                parts.hostname or "", parts.port or 80, ssl_context=context
            )
            try:
                await stream.do_handshake()
            finally:
                await trio.aclose_forcefully(stream)
    except (OSError, trio.BrokenResourceError, trio.TooSlowError):
        return False
    return True


NETWORK = (OSError, trio.TooSlowError, trio.BrokenResourceError, ProtocolError)
"""What a lost or broken connection raises here (a new one cures it)."""


def _leaf(exc: BaseException) -> BaseException:
    """The one error inside trio's exception groups (cancellations aside), else ``exc``."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, trio.Cancelled)]
        if len(inner) != 1:
            return exc
        exc = inner[0]
    return exc


class Session:
    """One connection's worth of play; the bot's process lives as long as it does."""

    def __init__(self, link: Link, config: EngineConfig, say: Callable[[str], None]) -> None:
        self.link = link
        self.config = config
        self.say = say
        self.games = 0
        self.welcomed = False
        self.context = client_context(link)
        self.latency_ms: float | None = None
        self._identity: Identity | None = None
        self._moves = 0
        self._thought = 0.0
        self._left_ms: int | None = None
        """This game's moves, the bot's thinking here, its clock at its last ``go``."""
        self._player = 0
        """Which side the bot plays in this game."""
        self.outcomes = {"won": 0, "lost": 0, "drawn": 0}
        """Games whose end the arena told (a game cut short by a fault is not told)."""

    async def run(self) -> bool:
        """One connection, until it ends: ``True`` if the arena said ``quit``."""
        if not self.welcomed:  # the first connection, or one after a failure
            if self.context is not None:
                await check_certificate(self.link.url, self.context)
            elif await speaks_tls(self.link.url):
                https = "https:" + self.link.url.removeprefix("ws:").removesuffix(GATEWAY_PATH)
                raise ConnectError(
                    f"the arena speaks TLS there: give its https:// address ({https})"
                )
        self.welcomed = False
        async with AsyncExitStack() as stack:
            ws = await stack.enter_async_context(
                open_websocket_url(  # its own deadlines (its nursery outlives any scope here)
                    self.link.url,
                    ssl_context=self.context,
                    max_message_size=self.config.max_line + 4096,
                    message_queue_size=4,
                    connect_timeout=OPEN_TIMEOUT,
                    disconnect_timeout=OPEN_TIMEOUT,
                )
            )
            with trio.fail_after(OPEN_TIMEOUT):
                auth = Auth(name=self.link.name, token=self.link.token)
                await ws.send_message(msgspec.json.encode(auth).decode())
                welcome = decode_welcome(await ws.get_message())
            self.welcomed = True
            self.config = msgspec.structs.replace(self.config, max_line=welcome.max_line)
            self.say(
                f"connected to {self.link.url} as {welcome.name} (the arena does not "
                f"charge {welcome.leeway_ms} ms of each move); waiting for a game"
            )
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._heartbeat, ws)
                quit_ = await self._play(ws)
                nursery.cancel_scope.cancel()
            return quit_

    def _announce(self, msg: NewGame) -> str:
        them = ", ".join(p for i, p in enumerate(msg.players) if i != msg.player)
        latency = "" if self.latency_ms is None else f"; latency {self.latency_ms:.1f} ms"
        return f"game {self.games}: against {visible(them)} ({msg.time_control}){latency}"

    async def _heartbeat(self, ws: WebSocketConnection) -> None:
        """A ping now (the latency shown from the first game on), then every HEARTBEAT s."""
        while True:
            start = trio.current_time()
            with trio.fail_after(HEARTBEAT):
                await ws.ping()
            self.latency_ms = (trio.current_time() - start) * 1000
            await trio.sleep(HEARTBEAT)

    def _over(self, msg: GameOver) -> str:
        winner = msg.winner if msg.winner is not None else {"1-0": 0, "0-1": 1}.get(msg.result)
        outcome = "drawn" if winner is None else "won" if winner == self._player else "lost"
        self.outcomes[outcome] += 1
        left = "" if self._left_ms is None else f", its clock had {self._left_ms / 1000:.1f} s"
        return (
            f"game {self.games} over: {msg.result} ({visible(msg.reason)}), {outcome}; "
            f"{self._moves} moves, {self._thought:.1f} s thinking here{left}"
        )

    def summary(self) -> str:
        """The author's tally at the end: the arena's reports have the rest."""
        told = sum(self.outcomes.values())
        tally = ", ".join(f"{n} {what}" for what, n in self.outcomes.items())
        cut = self.games - told
        untold = f"; {cut} ended by a fault or a drop (see the arena's report)" if cut else ""
        games = f"{self.games} game" + ("" if self.games == 1 else "s")
        return f"this bot played {games}: {tally}{untold}"

    async def _unless_closed(
        self, ws: WebSocketConnection, call: Callable[[], Awaitable[Reply]]
    ) -> Reply:
        """``call()``, cut short when the arena closes the connection meanwhile (the
        game is over for it: a time loss, say): the bot is then stopped at once,
        rather than its answer awaited and sent nowhere. A bot's fault comes out as
        the :class:`EngineError` it is (not wrapped in the nursery's group), so it
        is reported to the arena as any other."""
        replies: list[Reply] = []
        faults: list[EngineError] = []
        async with trio.open_nursery() as nursery:

            async def run() -> None:
                try:
                    replies.append(await call())
                except EngineError as e:
                    faults.append(e)
                nursery.cancel_scope.cancel()

            async def watch() -> None:
                while ws.closed is None:
                    await trio.sleep(CLOSED_POLL)
                nursery.cancel_scope.cancel()

            nursery.start_soon(run)
            nursery.start_soon(watch)
        if faults:
            raise faults[0]
        if not replies:
            raise ConnectionClosed(ws.closed)
        return replies[0]

    async def _send(self, ws: WebSocketConnection, msg: msgspec.Struct) -> None:
        await self._send_text(ws, encode_line(msg).rstrip(b"\n").decode())

    async def _send_text(self, ws: WebSocketConnection, text: str) -> None:
        with trio.fail_after(SEND_TIMEOUT):
            await ws.send_message(text)

    async def _play(self, ws: WebSocketConnection) -> bool:
        async with AsyncExitStack() as stack:
            engine: Engine | None = None
            while True:
                frame = await ws.get_message()
                if isinstance(frame, str) and rtt_id(frame) is not None:
                    await self._send_text(ws, frame)  # the arena times its round trip
                    continue
                msg = decode_arena_message(frame)
                try:
                    if isinstance(msg, Hello):
                        if engine is None:
                            config = msgspec.structs.replace(self.config, threads=msg.cores)
                            engine = await stack.enter_async_context(Engine(config))
                            ident = await engine.start(msg.game, msg.variant, check_identity=False)
                            self._identity = ident
                            self.say(
                                f"the arena offers {msg.game} {msg.variant}; the bot is "
                                f"{visible(ident.name)}"
                            )
                        assert self._identity is not None
                        await self._send(ws, msgspec.structs.replace(self._identity, id=msg.id))
                        continue
                    if engine is None:
                        raise ProtocolError(f"the arena sent {type(msg).__name__} before hello")
                    if isinstance(msg, NewGame):
                        self.games += 1
                        self._player = msg.player
                        self._moves, self._thought, self._left_ms = 0, 0.0, None
                        self.say(self._announce(msg))
                        reply = await engine.new_game(msg, NEWGAME_TIMEOUT)
                        await self._send(ws, msgspec.structs.replace(reply.answer, id=msg.id))
                    elif isinstance(msg, Go):
                        budget = (msg.clock.budget_ms + msg.clock.margin_ms) / 1000
                        reply = await self._unless_closed(
                            ws, partial(engine.go, msg, budget + ANSWER_MARGIN)
                        )
                        self._moves += 1
                        self._thought += reply.elapsed
                        self._left_ms = msg.clock.remaining_ms[msg.player]
                        for info in reply.infos:
                            await self._send(ws, msgspec.structs.replace(info, id=msg.id))
                        await self._send(ws, msgspec.structs.replace(reply.answer, id=msg.id))
                    elif isinstance(msg, Ping):
                        reply = await engine.request(Ping(), ANSWER_MARGIN)
                        await self._send(ws, msgspec.structs.replace(reply.answer, id=msg.id))
                    elif isinstance(msg, GameOver):
                        await engine.notify(msg)
                        self.say(self._over(msg))
                    elif isinstance(msg, SetOption):
                        await engine.notify(msg)
                    elif isinstance(msg, Quit):
                        await engine.notify(msg)
                        self.say("the arena is done with this bot")
                        await ws.aclose()
                        return True
                except EngineError as e:
                    self.say(f"the bot failed: {e}")
                    for line in _last_words(e.stderr_tail):  # for its author's eyes only
                        self.say(f"  | {line}")
                    reason = e.reason if e.reason in ("crash", "protocol", "time") else "crash"
                    fault = Fault(reason=reason, detail=e.detail[:1000])  # type: ignore[arg-type]
                    await self._send(ws, fault)
                    await ws.aclose(BOT_FAULT, close_reason(f"{e.reason}: {e.detail}"))
                    return False
