"""``arena analyze``: every stored game's positions solved by the game's exact solver."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from arena.cli.app import CONCURRENCY, UserError, friendly_errors, main
from arena.cli.common import BUDGET
from arena.protocol.text import visible


@main.command()
@click.argument("results_dir", type=click.Path(file_okay=False))
@BUDGET
@click.option(
    "--workers",
    type=CONCURRENCY,
    default=None,
    help="Worker processes (default: one per core; 1: in this process).",
)
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where positions are solved: worker processes here, or tasks on a Ray cluster.",
)
@click.option(
    "--address",
    default=None,
    metavar="HOST:PORT",
    help="Ray cluster to join with --backend ray (default: RAY_ADDRESS, else a local "
    "Ray instance; never the stored tournament file's ray_address).",
)
@click.option("--no-report", is_flag=True, help="Do not write report.md/report.html afterwards.")
@friendly_errors
def analyze(
    results_dir: str,
    budget_ms: float,
    workers: int | None,
    backend: str,
    address: str | None,
    no_report: bool,
) -> None:
    """Solve every position of every game stored in RESULTS_DIR.

    Each position gets the solver's value within --budget-ms: who wins the
    round by force and in how many plies, or unknown. The values go to
    RESULTS_DIR/analysis.sqlite (the games are only read); a run interrupted or
    killed resumes where it stopped, and the file is safe to delete. Then the
    reports are written again with their Analysis section: where each round was
    decided, every blunder and missed win, and each bot's rates.

    With --backend ray the games are solved as tasks on a Ray cluster (at most
    --workers at once, else one per cluster CPU); the results are written here.
    Only the command line chooses: what the stored tournament file says of a
    backend or a cluster is not followed (a results folder is data).
    """
    if address is not None and backend != "ray":
        raise UserError("--address is for --backend ray")
    run_analysis(Path(results_dir), budget_ms, workers, backend=backend, address=address)
    if not no_report:
        from arena.cli.common import report_and_standings

        report_and_standings(results_dir)


def run_analysis(
    directory: Path,
    budget_ms: float,
    workers: int | None,
    *,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float | None = None,
) -> None:
    """Analyse ``directory`` with a progress line on a terminal, then one summary line.

    ``workers`` is the processes here, or with ``backend="ray"`` a cap on the
    cluster's tasks at once (default: its CPUs).
    """
    from arena.analysis.run import (
        CONNECT_TIMEOUT,
        AnalysisRun,
        analyse,
        check_budget,
        default_workers,
    )

    check_budget(budget_ms)
    count = workers or default_workers()
    live = sys.stderr.isatty()

    def on_game(outcome: AnalysisRun) -> None:
        if live:
            share = 100 * outcome.proven / outcome.positions if outcome.positions else 0.0
            click.echo(
                f"\ranalysing: {outcome.analysed + outcome.skipped} of {outcome.games} games,"
                f" {share:.1f}% of positions proven",
                err=True,
                nl=False,
            )

    try:
        outcome = analyse(
            directory,
            budget_ms,
            workers=workers if backend == "ray" else count,
            on_game=on_game,
            backend=backend,
            address=address,
            connect_timeout=connect_timeout or CONNECT_TIMEOUT,
        )
    except KeyboardInterrupt:
        if live:
            click.echo("", err=True)
        click.echo(
            f"interrupted: the games analysed so far are in {directory}/analysis.sqlite;"
            " run the same command again to resume",
            err=True,
        )
        sys.exit(130)
    if live and outcome.analysed:
        click.echo("", err=True)
    for line in outcome.failed:
        click.echo(f"arena: warning: {directory}: {visible(line)}", err=True)
    if outcome.games == 0:
        raise UserError(f"{directory}: no games stored yet; nothing to analyse")
    share = f"{100 * outcome.proven / outcome.positions:.1f}%" if outcome.positions else "-"
    where = outcome.place or f"with {count} worker{'s' if count > 1 else ''}"
    click.echo(
        f"analysed {outcome.analysed} game{'' if outcome.analysed == 1 else 's'}"
        f" ({outcome.skipped} already done) in"
        f" {outcome.seconds:.1f} s {where} at"
        f" {budget_ms:g} ms a position: {outcome.positions:,} positions, {share} proven"
    )
