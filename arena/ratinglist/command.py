"""``arena ratings``: what the command does once its options are parsed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from arena.ratinglist.fit import build_list, parse_since
from arena.ratinglist.players import load_aliases
from arena.ratinglist.render import print_list, to_csv, to_json, write_files
from arena.report.terminal import text_console

__all__ = ["run_ratings"]


def run_ratings(
    results_dirs: tuple[str, ...],
    *,
    fmt: str = "table",
    anchor: tuple[str, float] | None = None,
    min_games: int = 0,
    since: str | None = None,
    tc: str | None = None,
    aliases: str | None = None,
    skip_bad: bool = False,
    out: str | None = None,
    write: bool = True,
    echo: Callable[..., None] = click.echo,
) -> None:
    """Build the list, write ratings.md and ratings.html (into ``out``, default the
    first results folder) and print the table, JSON or CSV."""
    paths = [Path(p) for p in results_dirs] or [Path("results")]
    data = build_list(
        paths,
        aliases=load_aliases(aliases),
        anchor=anchor,
        min_games=min_games,
        since=parse_since(since),
        tc=tc,
        skip_bad=skip_bad,
    )
    if fmt != "table":  # stdout stays JSON or CSV; the notes go to stderr
        for note in data.notes:
            echo(note, err=True)
    if fmt == "json":
        echo(to_json(data))
    elif fmt == "csv":
        echo(to_csv(data), nl=False)
    else:
        print_list(data, text_console())
    if write:
        first = paths[0]
        target = (
            Path(out) if out else (first.parent if (first / "games.sqlite").is_file() else first)
        )
        target.mkdir(parents=True, exist_ok=True)  # --out may name a new folder
        md, html = write_files(data, target)
        if fmt == "table":
            text_console().print(f"ratings: {md}, {html}", soft_wrap=True, markup=False)
