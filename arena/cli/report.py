"""``arena report`` and ``arena export``: what a stored tournament holds."""

from __future__ import annotations

import sys

import click

from arena.cli.app import friendly_errors, main
from arena.cli.common import parse_anchor, report_and_standings


@main.command()
@click.argument("results_dir", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--anchor", default=None, help="Fix one bot's rating, e.g. random=0 (default: pool mean 0)."
)
@click.option(
    "--latest",
    type=click.IntRange(0),
    default=None,
    help="Games listed and replayed, newest first (default 200).",
)
@click.option(
    "--faulted",
    type=click.IntRange(0),
    default=None,
    help="Faulted games listed before those (default 200).",
)
@friendly_errors
def report(results_dir: str, anchor: str | None, latest: int | None, faulted: int | None) -> None:
    """Write report.md and report.html for RESULTS_DIR and print the standings.

    Every game counts in the tables; the latest games and the faulted ones are
    listed with replays, so the reports stay small (arena serve shows them all).
    """
    report_and_standings(results_dir, parse_anchor(anchor), latest=latest, faulted=faulted)


@main.command()
@click.argument("results_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("target", metavar="[FILE|-]", required=False)
@click.option(
    "--output",
    "-o",
    default=None,
    metavar="FILE|-",
    help="The same as FILE|- (for those who type -o).",
)
@friendly_errors
def export(results_dir: str, target: str | None, output: str | None) -> None:
    """Write every stored game of RESULTS_DIR as one JSON line, to FILE, or to
    standard output for - (default: RESULTS_DIR/games.jsonl).

    A reader that stops early (| head) ends the export quietly.
    """
    from pathlib import Path

    from arena.storage.export import export_jsonl, write_jsonl
    from arena.storage.store import Store

    if target is not None and output is not None and target != output:
        raise click.UsageError(f"two outputs given: {target} and -o {output}; give one")
    output = output if output is not None else target
    with Store.open_existing(results_dir) as store:
        if output == "-":
            count = write_jsonl(store, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            click.echo(f"{count} games written to standard output", err=True)
            return
        out = Path(output) if output else Path(results_dir) / "games.jsonl"
        count = export_jsonl(store, out)
    click.echo(f"{count} games written to {out}")
