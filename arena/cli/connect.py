"""``arena connect``: play a remote entrant from this machine (``arena/remote/``)."""

from __future__ import annotations

import shlex
import sys
from datetime import datetime
from pathlib import Path

import click

from arena.cli.app import UserError, friendly_errors, main
from arena.cli.common import confinement, confinement_options


@main.command("connect", context_settings={"ignore_unknown_options": True})
@click.argument("url")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@click.option("--name", required=True, help="The entry's name in the tournament file.")
@click.option(
    "--token",
    required=True,
    envvar="ARENA_TOKEN",
    show_envvar=True,
    help="The entry's token (from the organiser); the variable keeps it out of ps.",
)
@click.option(
    "--cafile",
    default=None,
    metavar="FILE",
    help="Trust the arena's certificate if this CA (PEM) signed it, or it is this "
    "self-signed one (https:// only; default: the system's trust store).",
)
@click.option(
    "--max-backoff",
    type=click.FloatRange(1, 3600),
    default=30.0,
    show_default=True,
    help="Longest wait in seconds between two tries to connect again after a drop.",
)
@confinement_options
@friendly_errors
def connect_command(
    url: str,
    command: tuple[str, ...],
    name: str,
    token: str,
    cafile: str | None,
    max_backoff: float,
    sandbox: str,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    processes: int,
) -> None:
    """Play the tournament entry NAME from this machine: arena connect URL --name NAME -- COMMAND...

    URL is the address arena run --web prints (http://HOST:PORT, or https://).
    COMMAND runs here in the same sandbox as a local bot (--sandbox none opts
    out), and the protocol's lines travel between it and the arena, whose clock
    counts. After a drop this connects again by itself; it ends when the arena
    is done with the bot (or on Ctrl-C).
    """
    import trio

    from arena.plan.config import BotConfig
    from arena.plan.entrants import entrant
    from arena.plan.launch import engine_config
    from arena.plan.prepare import prepare
    from arena.plan.programs import program_command
    from arena.remote.client import ConnectError, Link, connect, gateway_url

    words = list(command)
    bot = entrant(words[0])  # a built-in's name, its own arguments after it
    if not bot.builtin:
        bot = entrant(shlex.join(words))
    limits, box = confinement(sandbox, memory_mb, cpu_seconds, file_size_mb, processes)
    argv, cwd = program_command(bot.command + (words[1:] if bot.builtin else []), Path.cwd())
    entry = BotConfig(name=name, command=argv, cwd=cwd)
    config = engine_config(entry, limits=limits, sandbox=box)

    def say(line: str) -> None:
        click.echo(f"{datetime.now():%H:%M:%S} {line}")

    async def run() -> None:
        if bot.builtin:
            await prepare(bot.name)
        link = Link(gateway_url(url), name, token, cafile)
        await connect(link, config, say, max_backoff=max_backoff)

    try:
        trio.run(run)
    except ConnectError as e:
        raise UserError(str(e)) from None
    except KeyboardInterrupt:
        sys.exit(130)
