"""``arena ratings``: one rating list over every stored tournament."""

from __future__ import annotations

import click

from arena.cli.app import friendly_errors, main
from arena.cli.common import parse_anchor


@main.command()
@click.argument("results_dirs", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="What to print (ratings.md/.html are written too).",
)
@click.option("--anchor", default=None, help="Fix one player's rating, e.g. 'random 1=0'.")
@click.option(
    "--min-games", type=click.IntRange(0), default=0, help="Leave out players with fewer games."
)
@click.option(
    "--since", default=None, metavar="DATE", help="Only games from this day on (2026-01-31)."
)
@click.option(
    "--tc",
    default=None,
    type=click.Choice(["bullet", "blitz", "rapid", "classical"]),
    help="Only games of this time-control class (base + 40 x increment).",
)
@click.option(
    "--aliases",
    type=click.Path(dir_okay=False),
    default=None,
    help="TOML file merging or splitting players.",
)
@click.option(
    "--skip-bad", is_flag=True, help="Say which folders cannot be read and rate the rest."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to write ratings.md/.html (default: the results folder).",
)
@friendly_errors
def ratings(
    results_dirs: tuple[str, ...],
    fmt: str,
    anchor: str | None,
    min_games: int,
    since: str | None,
    tc: str | None,
    aliases: str | None,
    skip_bad: bool,
    out: str | None,
) -> None:
    """One rating list over every stored tournament (RESULTS_DIRS, default: results/).

    A joint fit per game and match kind; players are the bots' own names and
    versions (with their options), not entry names. See README "Rating list".
    """
    from arena.ratinglist.command import run_ratings

    run_ratings(
        results_dirs,
        fmt=fmt,
        anchor=parse_anchor(anchor),
        min_games=min_games,
        since=since,
        tc=tc,
        aliases=aliases,
        skip_bad=skip_bad,
        out=out,
        echo=click.echo,
    )
