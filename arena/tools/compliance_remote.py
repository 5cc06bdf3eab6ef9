"""``arena check-bot --listen``: the checks as the arena sees a bot over the network.

A remote entrant's author runs the bot under ``arena connect`` at home; what the
arena then gets is a WebSocket relay, with its own framing, latency, reconnection
after a fault and a fresh process per restart. ``arena check-bot -- COMMAND``
checks the bot, not that path. Here the checker opens a gateway of its own (one
entry, ``name``, with ``token``), waits up to ``wait`` seconds for the author's
``arena connect URL --name NAME -- COMMAND``, and runs every check that only
talks to the bot (:func:`~arena.tools.compliance.conversation_checks`: handshake,
ping, newgame, go, options, the games against built-ins, gameover) on a
:class:`~arena.engine.remote.RemoteEngine`, exactly what a tournament's games use.
What only the author's machine sees (the exit status after ``quit``, stderr, the
sandbox) is a SKIP that says so; ``arena check-bot -- COMMAND`` there checks it.
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Callable

import trio

from arena.engine.errors import EngineError
from arena.engine.gateway import Gateway
from arena.engine.remote import RemoteEngine
from arena.engine.sandbox import SandboxSettings
from arena.games import game_names, get_game
from arena.plan.config import BotConfig, Limits, ProtocolSettings
from arena.plan.launch import engine_config
from arena.plan.remote import RemoteSettings
from arena.tools.compliance import GameChoice, choice_for, conversation_checks, summary
from arena.tools.compliance_games import STAGE_TC
from arena.web.app import Site
from arena.web.server import Listen, parse_listen, serve

__all__ = ["check_remote", "run_remote_checks"]


def run_remote_checks(
    listen: str,
    name: str,
    *,
    token: str | None,
    wait: float,
    game: str | None = None,
    timeout: float = 5.0,
    games: int = 0,
    tc: str = STAGE_TC,
    echo: Callable[[str], None] = print,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
    tls: tuple[str | None, str | None] = (None, None),
) -> int:
    """Synchronous entry point for ``arena check-bot --listen [HOST:]PORT --name NAME``:
    ``token`` is the author's (``ARENA_TOKEN``); without one a token is made here
    and shown with the command to run. ``tls``: ``--tls-cert`` and ``--tls-key``."""
    where = parse_listen(listen, cert=tls[0], key=tls[1])
    given = (token or "").strip()
    return trio.run(
        functools.partial(
            check_remote,
            where,
            name,
            given or secrets.token_urlsafe(24),
            wait=wait,
            game=game,
            timeout=timeout,
            games=games,
            tc=tc,
            echo=echo,
            limits=limits,
            sandbox=sandbox,
            show_token=not given,
        )
    )


async def check_remote(
    listen: Listen,
    name: str,
    token: str,
    *,
    wait: float,
    game: str | None = None,
    timeout: float = 5.0,
    games: int = 0,
    tc: str = STAGE_TC,
    echo: Callable[[str], None] = print,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
    show_token: bool = False,
) -> int:
    """Serve a gateway on ``listen`` for entry ``name``, check the bot that connects
    with ``token`` (the opponents of the games run here under ``limits`` and
    ``sandbox``); print as :func:`~arena.tools.compliance.run_checks` does and
    return the exit status. Nobody connecting within ``wait`` seconds is one line
    and status 1. ``show_token``: the token was made here, so the author is shown it."""
    started = time.monotonic()
    protocol = ProtocolSettings(handshake_timeout=timeout)
    gateway = Gateway(
        {name: token.encode()},
        max_line=protocol.max_line,
        leeway=RemoteSettings().leeway_ms / 1000,
    )
    config = engine_config(BotConfig(name=name, command=[], remote=True), protocol=protocol)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(functools.partial(serve, Site({}), listen, gateway=gateway))
        hint = f"ARENA_TOKEN={token} " if show_token else ""
        echo(
            f"waiting up to {wait:g} s for: {hint}arena connect {url} --name {name} -- COMMAND"
            + ("" if show_token else " (its token in ARENA_TOKEN)")
        )
        try:
            async with RemoteEngine(config, gateway, wait) as engine:
                if await gateway.connection(name, trio.current_time() + wait) is None:
                    echo(f"nobody connected as {name} within {wait:g} s; nothing was checked")
                    return 1
                engine.wait = max(timeout, 1.0)  # a restart: arena connect comes back at once
                choice = await _choose(engine, game)
                failed: list[str] = []
                total = skipped = 0
                for each, why in zip(choice.games, choice.why, strict=True):
                    echo(f"checking {why}")
                    checks = await conversation_checks(
                        engine,
                        get_game(each),
                        timeout=timeout,
                        games=games,
                        tc=tc,
                        limits=limits,
                        sandbox=sandbox,
                    )
                    await engine.stop()
                    for check in checks:
                        echo(check.line())
                    prefix = f"{each}: " if len(choice.games) > 1 else ""
                    failed += [prefix + c.name for c in checks if not c.passed]
                    skipped += sum(c.skipped for c in checks)
                    total += len(checks)
                await _dismiss(gateway, name, max(timeout, 1.0))
        finally:
            gateway.close("the check is over")
            nursery.cancel_scope.cancel()
    return summary(
        failed,
        total,
        skipped,
        time.monotonic() - started,
        f"remote entry {name}, connected through {url}",
        echo,
    )


async def _dismiss(gateway: Gateway, name: str, within: float) -> None:
    """Tell ``arena connect`` the check is over, so it ends rather than reconnecting:
    the last stop asked it for a fresh bot, so its next connection (awaited up to
    ``within`` seconds) is closed for good, and its close frame sent before the
    server stops."""
    link = await gateway.connection(name, trio.current_time() + within)
    if link is None:
        return
    link.close("the check is over")
    with trio.move_on_after(within):
        await link.released.wait()


async def _choose(engine: RemoteEngine, game: str | None) -> GameChoice:
    """``--game``, else the games the connected bot declares (one handshake; the
    connection is then closed for a fresh bot, as between checks)."""
    if game is not None:
        get_game(game)
        return GameChoice([game], [f"{game}, as --game says"])
    first = get_game(game_names()[0])
    try:
        ident = await engine.start(first.name, first.default_variant, check_identity=False)
    except EngineError:
        return GameChoice([first.name], [f"{first.name}: the bot gave no identity to choose by"])
    finally:
        await engine.stop()
    return choice_for(ident)
