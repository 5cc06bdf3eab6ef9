"""``arena check-bot`` and ``arena bots``: a bot's compliance, the built-in bots."""

from __future__ import annotations

import sys

import click

from arena.cli.app import FiniteFloat, friendly_errors, main
from arena.cli.common import confinement, confinement_options
from arena.games import get_game


@main.command("check-bot", context_settings={"ignore_unknown_options": True})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
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
@confinement_options
@friendly_errors
def check_bot(
    command: tuple[str, ...],
    game_name: str | None,
    timeout: float,
    games: int,
    tc: str,
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
    """
    from arena.match.clock import TimeControl
    from arena.tools.compliance import run_checks

    if game_name is not None:
        get_game(game_name)
    TimeControl.parse(tc)
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
        )
    )


@main.command()
def bots() -> None:
    """List the built-in bots (use them as NAME or builtin:NAME)."""
    from arena.plan.builtins import builtin_names, description

    width = max(map(len, builtin_names()), default=0)
    for name in builtin_names():
        click.echo(f"{name:<{width}}  {description(name)}")
