"""``arena play``: one game between two bots, printed as it goes."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli.app import OPENING_PLIES, PLIES, SEED, friendly_errors, main
from arena.cli.common import (
    confinement,
    confinement_options,
    protocol_options,
    protocol_settings,
)
from arena.engine.record import SandboxRecord
from arena.games import get_game
from arena.protocol.text import visible
from arena.report import fmt


@main.command()
@click.argument("first")
@click.argument("second")
@click.option(
    "--game",
    "game_name",
    default="kamisado",
    show_default=True,
    help="Game: kamisado or sekigahara.",
)
@click.option(
    "--variant",
    default=None,
    help="Variant (kamisado: single|standard|long|marathon, default standard; "
    "sekigahara: battle|siege, default battle).",
)
@click.option("--tc", default="10+0.1", show_default=True, help="Time control, e.g. 10+0.1.")
@click.option("--seed", type=SEED, default=None, help="Seed for built-in bots and the opening.")
@click.option(
    "--opening-plies", type=OPENING_PLIES, default=0, help="Random plies before the game."
)
@click.option("--max-plies", type=PLIES, default=1000, show_default=True)
@protocol_options
@click.option("--quiet", "-q", is_flag=True, help="Print only the result.")
@confinement_options
@click.option(
    "--threads",
    type=click.IntRange(1, 1024),
    default=1,
    show_default=True,
    help="Cores each bot may use at once (its cgroup's quota; sent in hello as cores).",
)
@click.option("--ponder", is_flag=True, help="Let bots think on the opponent's time (no freezing).")
@friendly_errors
def play(
    first: str,
    second: str,
    game_name: str,
    variant: str | None,
    tc: str,
    seed: int | None,
    opening_plies: int,
    max_plies: int,
    handshake_timeout: float | None,
    newgame_timeout: float | None,
    max_line: int | None,
    quiet: bool,
    sandbox: str,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    processes: int,
    threads: int,
    ponder: bool,
) -> None:
    """Play one game: FIRST (player 0) against SECOND; each a built-in bot name or a command.

    A command bot is named by the name in its ``identity``. The bots get the
    opening's position, not the random plies that led to it, exactly as in
    ``arena run``.
    """
    import random

    import trio

    from arena.engine.bot import Engine
    from arena.engine.config import EngineConfig
    from arena.match.clock import TimeControl
    from arena.match.events import GameMoved
    from arena.match.referee import RefereeSettings, play_game
    from arena.plan.config import BotConfig, ProtocolSettings
    from arena.plan.entrants import entrant, start_named
    from arena.plan.launch import engine_config
    from arena.plan.programs import program_command

    game = get_game(game_name)
    variant = variant or game.default_variant
    control = TimeControl.parse(tc)
    settings = protocol_settings(ProtocolSettings(), handshake_timeout, newgame_timeout, max_line)
    opening = (
        game.random_opening(variant, opening_plies, random.Random(seed))
        if opening_plies or game.deals_openings
        else game.new_state(variant)
    )
    # Through the text, as a tournament stores and reads it (so `history` agrees).
    opening = game.state_from_text(opening.to_text())
    bots = [
        entrant(spec, None if seed is None else seed + i) for i, spec in enumerate((first, second))
    ]
    roles = opening.player_names()
    limits, box = confinement(sandbox, memory_mb, cpu_seconds, file_size_mb, processes)

    def config(name: str, command: list[str]) -> EngineConfig:
        command, cwd = program_command(command, Path.cwd())
        bot = BotConfig(name=name, command=command, cwd=cwd, threads=threads)
        return engine_config(bot, limits=limits, sandbox=box, protocol=settings, ponder=ponder)

    def show_action(event: GameMoved) -> None:
        if quiet:
            return
        forced = " (forced)" if event.forced else f" ({event.ms} ms)"
        click.echo(f"{event.ply:4d}. {roles[event.player]:>8} {event.action}{forced}")

    async def run() -> None:
        async with (
            Engine(config(bots[0].name, bots[0].command)) as a,
            Engine(config(bots[1].name, bots[1].command)) as b,
        ):
            await start_named([a, b], bots, game.name, variant)
            if not quiet:
                click.echo(
                    f"{game.name} {variant}, {control}: {a.name} ({roles[0]}) "
                    f"vs {b.name} ({roles[1]})"
                )
                click.echo(f"opening: {opening.to_text()}")
            record = await play_game(
                game,
                opening,
                [a, b],
                [control, control],
                variant=variant,
                settings=RefereeSettings(
                    max_plies=max_plies, newgame_timeout=settings.newgame_timeout, restart=False
                ),
                on_action=show_action,
            )
        if not quiet:
            click.echo(f"final: {record.final_position}")
            for name, box in zip(record.players, record.sandbox, strict=False):
                click.echo(f"sandbox of {visible(name)}: {_confinement_text(box)}")
        detail = f" ({visible(record.detail)})" if record.detail else ""
        summary = fmt.figures(record.figures(), roles)
        figures = f"; {summary}" if summary else ""
        click.echo(f"result {record.result} {record.reason}{detail}{figures}")
        for name, tail in zip(record.players, record.stderr_tails, strict=True):
            if tail and record.faulty is not None:
                said = visible(tail, multiline=True)  # both ends: the cause, the crash
                click.echo(f"output of {visible(name)} (first and last lines):\n{said}", err=True)

    trio.run(run)


def _confinement_text(box: SandboxRecord) -> str:
    """``bwrap, user nobody, bounded by cgroup``: what held the bot, in one line."""
    if box.mode != "bwrap":
        return f"{box.mode} (unconfined)"
    user = f"user {box.user}" if box.user else "the arena's user"
    bound = {
        "cgroup": "a cgroup (memory and processes of the whole bot)",
        "rlimit": "rlimits (address space per process, processes per user)",
    }.get(box.bound, "-")
    cpu = {
        "freezer": "frozen off move (cgroup freezer)",
        "cgroup.freeze": "frozen off move (cgroup.freeze)",
        "sigstop": "stopped off move (SIGSTOP of its process group)",
        "ponder": "not frozen off move (ponder)",
    }.get(box.freeze)
    cores = f", {box.cores} core{'s' if box.cores != 1 else ''}" if box.cores else ""
    return f"bwrap, {user}, bounded by {bound}{cores}" + (f", {cpu}" if cpu else "")
