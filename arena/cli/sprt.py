"""``arena sprt``: play pairs until a sequential test decides."""

from __future__ import annotations

import sys

import click

from arena.cli.app import (
    CONCURRENCY,
    ELO,
    OPENING_PLIES,
    FiniteFloat,
    UserError,
    friendly_errors,
    main,
)
from arena.cli.common import SANDBOX_HELP, observer_for
from arena.engine.sandbox import MODES
from arena.games import get_game
from arena.plan.config import MAX_GAMES_PER_PAIRING, SEED_RANGE


@main.command()
@click.argument("first")
@click.argument("second")
@click.option(
    "--elo0", type=ELO, default=0.0, show_default=True, help="H0: FIRST is elo0 stronger."
)
@click.option(
    "--elo1", type=ELO, default=5.0, show_default=True, help="H1: FIRST is elo1 stronger."
)
@click.option("--alpha", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.05)
@click.option("--beta", type=FiniteFloat(0, 1, min_open=True, max_open=True), default=0.05)
@click.option("--model", type=click.Choice(["normalized", "logistic"]), default="normalized")
@click.option("--game", "game_name", default="kamisado", show_default=True)
@click.option("--variant", default=None)
@click.option("--tc", default="10+0.1", show_default=True)
@click.option(
    "--max-games", type=click.IntRange(2, MAX_GAMES_PER_PAIRING), default=20000, show_default=True
)
@click.option("--opening-plies", type=OPENING_PLIES, default=2, show_default=True)
@click.option(
    "--openings",
    "openings_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="An openings file (one position text per line) "
    "instead of random walks: e.g. examples/openings/kamisado-standard.txt.",
)
@click.option(
    "--seed", type=click.IntRange(SEED_RANGE[0], SEED_RANGE[1] - 1), default=1, show_default=True
)
@click.option("--concurrency", "-j", type=CONCURRENCY, default=None)
@click.option(
    "--sandbox", type=click.Choice(MODES), default="auto", show_default=True, help=SANDBOX_HELP
)
@click.option("--name", default=None, help="Results folder name (default: sprt-FIRST-SECOND).")
@click.option("--results", "results_root", default="results", show_default=True)
@click.option("--quiet", "-q", is_flag=True)
@friendly_errors
def sprt(
    first: str,
    second: str,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    model: str,
    game_name: str,
    variant: str | None,
    tc: str,
    max_games: int,
    opening_plies: int,
    openings_file: str | None,
    seed: int,
    concurrency: int | None,
    sandbox: str,
    name: str | None,
    results_root: str,
    quiet: bool,
) -> None:
    """Play pairs of FIRST against SECOND until an SPRT decides (stored, resumable)."""
    import os
    from pathlib import Path

    import trio

    from arena.tools.sprt import SprtPlan, SprtState, players, sprt_tournament

    variant_name = variant or get_game(game_name).default_variant
    bots = players(first, second, seed=seed, game=game_name, variant=variant_name)
    (a, _), (b, _) = bots
    state = SprtState(a, elo0, elo1, alpha, beta, model)
    try:
        state.check()
    except ValueError as exc:
        hint = "; try smaller Elo bounds or --model logistic" if "bracket" in str(exc) else ""
        raise UserError(f"--elo0 {elo0:g} --elo1 {elo1:g} ({model} model): {exc}{hint}") from None
    observer = observer_for(quiet)
    plan = SprtPlan(
        name=name or f"sprt-{a}-{b}",
        game=game_name,
        variant=variant,
        tc=tc,
        max_games=max_games,
        seed=seed,
        concurrency=concurrency or os.cpu_count() or 1,
        opening_plies=opening_plies,
        openings_file=str(Path(openings_file).resolve()) if openings_file else None,
        comment=f"arena sprt {first} {second} --elo0 {elo0:g} --elo1 {elo1:g} "
        f"--alpha {alpha:g} --beta {beta:g} --model {model}",
    )
    tournament = sprt_tournament(
        state, bots, plan, results_root=results_root, observer=observer, sandbox=sandbox
    )
    interrupted = False
    try:
        if state.decision() == "continue":
            interrupted = trio.run(tournament.run_until_interrupted)
    finally:
        observer.close()
        tournament.close()
    click.echo(state.summary())
    if interrupted:
        click.echo("interrupted: run the same command again to resume", err=True)
        sys.exit(130)
