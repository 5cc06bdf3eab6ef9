"""Reports: terminal tables, Markdown and HTML with every listed game's replay.

Each game draws its own boards (``arena.games.show``); a report embeds them. The
entry points are imported lazily so that a command that only needs
``arena.report.terminal`` does not pay for numpy, scipy and jinja2.

May import: :mod:`arena.storage`, :mod:`arena.stats`, :mod:`arena.match` (the game
record), :mod:`arena.games` (each game's pictures and figures), :mod:`arena.protocol`
(a bot's text made visible, for stores written before it was at decoding),
:mod:`arena.analysis` (the solver's figures). Knows nothing of how results were
produced.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from arena.report.summary import ReportData

__all__ = ["HTML_NAME", "MARKDOWN_NAME", "print_standings", "write_reports"]

MARKDOWN_NAME = "report.md"
HTML_NAME = "report.html"


def write_reports(
    store_dir: str | os.PathLike[str],
    *,
    anchor: tuple[str, float] | None = None,
    list_latest: int | None = None,
    list_faulted: int | None = None,
) -> ReportData:
    """Write ``report.md`` and ``report.html`` into the tournament directory.

    Reads the results database in ``store_dir`` (``Store.open_existing``; raises
    ``arena.storage.store.StoreError`` if there is none) and returns the numbers the
    reports show. ``anchor=(player, rating)`` fixes one bot's rating instead of a
    pool average of 0. Every game counts in the tables, but only the latest
    ``list_latest`` games and the ``list_faulted`` latest faulted ones before
    them are listed (and replayed in report.html), so a report stays small.
    """
    from arena.analysis.store import AnalysisStore
    from arena.report.html import write_html
    from arena.report.markdown import write_markdown
    from arena.report.summary import LIST_FAULTED, LIST_LATEST, build_report
    from arena.storage.store import Store

    directory = Path(store_dir)
    with Store.open_existing(directory) as store:
        analysis = AnalysisStore.open_readonly(directory)
        try:
            data = build_report(
                store,
                anchor=anchor,
                directory=directory,
                list_latest=LIST_LATEST if list_latest is None else list_latest,
                list_faulted=LIST_FAULTED if list_faulted is None else list_faulted,
                analysis=analysis,
            )
        finally:
            if analysis is not None:
                analysis.close()
        write_markdown(data, directory / MARKDOWN_NAME)
        listed = ((row.key, store.game(row.key)) for row in data.game_list)
        write_html(data, ((k, r) for k, r in listed if r is not None), directory / HTML_NAME)
    return data


def print_standings(data: ReportData, console: Console | None = None) -> None:
    """Print the standings table (and first-move and fault lines) to ``console``."""
    from arena.report.terminal import print_standings as _print

    _print(data, console)
