"""``arena openings generate``: an openings book."""

from __future__ import annotations

import sys
import time

import click

from arena.cli.app import OPENING_PLIES, SEED, UserError, friendly_errors, main
from arena.cli.common import confinement, confinement_options
from arena.games import get_game


@main.group()
def openings() -> None:
    """Openings books (position files for [openings] file = ...)."""


@openings.command("generate")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option("--variant", default=None, help="The book's variant (Kamisado: single|standard|...).")
@click.option(
    "--plies", type=OPENING_PLIES, default=2, show_default=True, help="Random plies from the start."
)
@click.option("--count", type=click.IntRange(1, 100_000), default=50, show_default=True)
@click.option(
    "--bot",
    default="alphabeta",
    show_default=True,
    help="Scoring bot: a built-in name or a command.",
)
@click.option(
    "--depth",
    type=click.IntRange(0, 12),
    default=4,
    show_default=True,
    help="No side may win by force within this many plies.",
)
@click.option(
    "--check-variant",
    default=None,
    help="Variant for the forced-win check (default: the game's first, "
    "for Kamisado the single round).",
)
@click.option(
    "--movetime",
    type=click.FloatRange(0.01, 60),
    default=0.2,
    show_default=True,
    help="Seconds the scoring bot thinks per position.",
)
@click.option(
    "--max-score",
    type=click.FloatRange(0),
    default=60,
    show_default=True,
    help="Keep positions the bot scores within +-this (its own units).",
)
@click.option(
    "--probe-pairs",
    type=click.IntRange(0, 100),
    default=0,
    show_default=True,
    help="Also play this many pairs of games (colours swapped, in --probe-variant) "
    "from each position between two near-equal players, and keep it only if "
    "no pair splits 1-1 (the side won both); 0: no probe.",
)
@click.option("--probe-bot", default=None, help="The probe's first player (default: --bot).")
@click.option(
    "--probe-weak", default=None, help="The probe's second player (default: --probe-bot)."
)
@click.option(
    "--probe-movetime",
    type=(click.FloatRange(0.005, 10), click.FloatRange(0.005, 10)),
    default=(0.1, 0.06),
    show_default=True,
    help="Seconds per decision of the first and the second probe player "
    "(a little apart: alphabeta is deterministic but for timing).",
)
@click.option(
    "--probe-variant",
    default=None,
    help="Variant the probe games are played in (default: --check-variant).",
)
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--output", "-o", required=True, help="Openings file to write, or - for stdout.")
@confinement_options
@friendly_errors
def openings_generate(
    game_name: str,
    variant: str | None,
    plies: int,
    count: int,
    bot: str,
    depth: int,
    check_variant: str | None,
    movetime: float,
    max_score: float,
    probe_pairs: int,
    probe_bot: str | None,
    probe_weak: str | None,
    probe_movetime: tuple[float, float],
    probe_variant: str | None,
    seed: int,
    output: str,
    sandbox: str,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    processes: int,
) -> None:
    """Write an openings file of positions no side wins by force and the bot scores even
    (and, with --probe-pairs, that the side does not decide in play)."""
    from collections import Counter
    from pathlib import Path

    import trio

    from arena.engine.errors import EngineError
    from arena.plan.entrants import entrant
    from arena.tools.openings import Probe, book_text, generate

    game = get_game(game_name)
    variant = variant or game.default_variant
    check_variant = check_variant or game.variants[0]
    scorer = entrant(bot)
    command = scorer.command
    named = [scorer]
    probe = None
    if probe_pairs:
        probe_bot = probe_bot or bot
        probe_weak = probe_weak or probe_bot
        named += [entrant(probe_bot), entrant(probe_weak)]
        probe = Probe(
            strong=named[1].command,
            weak=named[2].command,
            variant=probe_variant or check_variant,
            pairs=probe_pairs,
            strong_movetime=probe_movetime[0],
            weak_movetime=probe_movetime[1],
        )
    limits, box = confinement(sandbox, memory_mb, cpu_seconds, file_size_mb, processes)
    stats: Counter[str] = Counter()
    started = time.monotonic()
    walked = [0]

    def progress(kept: int, tries: int) -> None:
        walked[0] = tries
        if sys.stderr.isatty():
            click.echo(f"\r{kept}/{count} kept, {tries} walks tried", err=True, nl=False)

    try:
        texts = trio.run(
            lambda: generate(
                game,
                variant,
                plies=plies,
                count=count,
                depth=depth,
                bot=command,
                check_variant=check_variant,
                movetime=movetime,
                max_score=max_score,
                seed=seed,
                probe=probe,
                stats=stats,
                progress=progress,
                builtins=[b.name for b in named if b.builtin],
                limits=limits,
                sandbox=box,
            )
        )
    except EngineError as exc:
        raise UserError(f"scoring bot {bot!r}: {exc.reason}: {exc.detail}") from None
    if sys.stderr.isatty():
        click.echo("", err=True)
    body = book_text(
        texts,
        stats,
        game=game_name,
        variant=variant,
        plies=plies,
        count=count,
        bot=bot,
        depth=depth,
        check_variant=check_variant,
        movetime=movetime,
        max_score=max_score,
        seed=seed,
        probe=probe,
        probe_bots=(probe_bot or "", probe_weak or ""),
    )
    if output == "-":
        sys.stdout.write(body)
        sys.stdout.flush()
    else:
        Path(output).write_text(body, encoding="utf-8")
    where = "standard output" if output == "-" else output
    click.echo(
        f"{len(texts)} openings written to {where} in {time.monotonic() - started:.0f} s "
        f"({walked[0]} walks tried)",
        err=output == "-",
    )
    if len(texts) < count:
        raise UserError(
            f"only {len(texts)} of {count} positions found; try more --plies, "
            f"a smaller --depth or a larger --max-score"
        )
