"""``arena check-bot`` and ``arena bots``: a bot's compliance, the built-in bots."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.cli.app import FiniteFloat, friendly_errors, main
from arena.cli.common import confinement, confinement_options, tls_options
from arena.games import get_game

if TYPE_CHECKING:
    from arena.engine.sandbox import SandboxSettings
    from arena.plan.config import Limits, TournamentConfig


@main.command("check-bot", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=(
        "Check the entry NAME of this tournament file (COMMAND is then NAME) as the "
        "tournament starts it: its command, cwd, env, grants, [limits] and [sandbox]."
    ),
)
@click.option(
    "--game",
    "game_name",
    default=None,
    help="Game to check (default: each game the bot declares in its identity).",
)
@click.option(
    "--timeout",
    type=FiniteFloat(0, 3600, min_open=True),
    default=5.0,
    show_default=True,
    help="Seconds per check.",
)
@click.option(
    "--games",
    type=click.IntRange(0, 100),
    default=2,
    show_default=True,
    help="Games per declared variant and opponent (seats alternate); 0: none.",
)
@click.option("--tc", default="2+0.05", show_default=True, help="Time control of those games.")
@click.option(
    "--listen",
    default=None,
    metavar="[HOST:]PORT",
    help=(
        "Check a bot over the network instead of COMMAND: open a gateway here and check "
        "the bot that arena connect brings to it as --name (token: ARENA_TOKEN, else one "
        "is made and shown)."
    ),
)
@click.option("--name", default=None, help="With --listen: the entry name it connects as.")
@click.option(
    "--wait",
    type=FiniteFloat(0, 86400, min_open=True),
    default=60.0,
    show_default=True,
    help="With --listen: seconds to wait for it to connect.",
)
@tls_options
@confinement_options
@friendly_errors
def check_bot(
    command: tuple[str, ...],
    from_file: Path | None,
    game_name: str | None,
    timeout: float,
    games: int,
    tc: str,
    listen: str | None,
    name: str | None,
    wait: float,
    tls_cert: str | None,
    tls_key: str | None,
    sandbox: str,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    processes: int,
) -> None:
    """Check that a bot speaks the protocol and plays whole games: arena check-bot -- COMMAND...

    Without --game, every game the bot declares is checked in turn. The games are
    played in every variant the bot declares, against the built-in random bot and
    the strongest built-in bot for the game; the first fault is shown with the
    game, the ply and the position the bot faced. They check legality, not
    strength: their results are shown by seat.

    arena check-bot --from FILE.toml NAME checks the tournament's entry NAME
    exactly as the tournament starts it (its game, unless --game says another).

    arena check-bot --listen 127.0.0.1:8080 --name NAME checks a bot as the
    arena sees it over the network: run arena connect http://127.0.0.1:8080
    --name NAME -- COMMAND beside it.
    """
    from arena.match.clock import TimeControl
    from arena.plan.launch import entry_config
    from arena.tools.compliance import run_checks

    if game_name is not None:
        get_game(game_name)
    TimeControl.parse(tc)
    if listen is None and (tls_cert is not None or tls_key is not None):
        raise click.UsageError("--tls-cert and --tls-key are for --listen")
    if listen is not None or name is not None:
        sys.exit(
            _remote(
                listen,
                name,
                command,
                from_file,
                game_name,
                timeout,
                games,
                tc,
                wait,
                confinement(sandbox, memory_mb, cpu_seconds, file_size_mb, processes),
                (tls_cert, tls_key),
            )
        )
    if not command:
        raise click.UsageError("give the bot's COMMAND (arena check-bot -- ./mybot), or --listen")
    entry = builtin = None
    if from_file is not None:
        config = _entry(from_file, command)
        entry = entry_config(config, command[0])
        game_name = game_name or config.game
        builtin = config.bot(command[0]).builtin
        limits, box = config.limits, config.sandbox  # the opponents' too
    else:
        limits, box = confinement(sandbox, memory_mb, cpu_seconds, file_size_mb, processes)
    sys.exit(
        run_checks(
            list(command),
            game=game_name,
            timeout=timeout,
            games=games,
            tc=tc,
            echo=click.echo,
            limits=limits,
            sandbox=box,
            entry=entry,
            builtin=builtin,
        )
    )


def _remote(
    listen: str | None,
    name: str | None,
    command: tuple[str, ...],
    from_file: Path | None,
    game_name: str | None,
    timeout: float,
    games: int,
    tc: str,
    wait: float,
    confined: tuple[Limits, SandboxSettings],
    tls: tuple[str | None, str | None],
) -> int:
    """``--listen`` and ``--name``: the checks over a gateway (``compliance_remote``)."""
    import os

    from arena.tools.compliance_remote import run_remote_checks

    if listen is None or name is None:
        raise click.UsageError("--listen and --name go together")
    if command or from_file is not None:
        raise click.UsageError("with --listen, the bot is the one arena connect brings: no COMMAND")
    limits, box = confined
    return run_remote_checks(
        listen,
        name,
        token=os.environ.get("ARENA_TOKEN"),
        wait=wait,
        game=game_name,
        timeout=timeout,
        games=games,
        tc=tc,
        echo=click.echo,
        limits=limits,
        sandbox=box,
        tls=tls,
    )


LIMIT_OPTIONS = ("memory_mb", "cpu_seconds", "file_size_mb", "processes")


def _entry(path: Path, words: tuple[str, ...]) -> TournamentConfig:
    """The tournament file ``path``, which must have the entry ``words[0]``, as its
    tournament runs it (``--sandbox`` given wins over the file's mode, as for ``arena
    run``). The limit options may not be given: the file's ``[limits]`` are what is
    checked."""
    from arena.plan.config import load_config
    from arena.tournament import _confined

    ctx = click.get_current_context()
    given = [f"--{o.replace('_', '-')}" for o in LIMIT_OPTIONS if _given(ctx, o)]
    if given:
        raise click.UsageError(f"{', '.join(given)}: with --from, the file's [limits] apply")
    if len(words) != 1:
        raise click.UsageError(f"with --from, give one entry name, got {len(words)} words")
    config = load_config(path)
    names = [bot.name for bot in config.bots]
    if words[0] not in names:
        raise click.UsageError(f"{path}: no entry {words[0]!r} (its entries: {', '.join(names)})")
    if config.bot(words[0]).remote:
        raise click.UsageError(
            f"{path}: {words[0]!r} is a remote entrant; its author checks it with "
            "arena check-bot COMMAND on the machine it plays from"
        )
    mode = ctx.params["sandbox"] if _given(ctx, "sandbox") else None
    return _confined(config, mode, Path("results"))


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


@main.command()
def bots() -> None:
    """List the built-in bots (use them as NAME or builtin:NAME)."""
    from arena.plan.builtins import builtin_names, description

    width = max(map(len, builtin_names()), default=0)
    for name in builtin_names():
        click.echo(f"{name:<{width}}  {description(name)}")
