"""The standings in the terminal (what ``arena run`` and ``arena report`` print).

One table, the rated one: Elo, its interval, W-L-D, score and faults. On a
terminal it is a rich table whose names fold instead of being cut; through a
pipe or in a CI log it is plain text, every line ended, nothing cut at 80
columns and no box drawing, so ``grep`` and ``diff`` read it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from arena.report import fmt
from arena.report.summary import ReportData

__all__ = ["plain_table", "print_standings", "standings_lines", "standings_table", "text_console"]

RIGHT = {"#", "Elo", "95%", "games", "W-L-D", "score", "LOS next", "faults"}


def text_console() -> Console:
    """A console that prints text as it is: no markup, no ``:name:`` emoji codes
    (a Sekigahara card ``T17:date:s`` must not become a calendar), no highlighting."""
    return Console(markup=False, emoji=False, highlight=False)


def _title(data: ReportData) -> str:
    anchor = f", {data.anchor[0]} fixed at {data.anchor[1]:g}" if data.anchor else ""
    return f"{data.tournament}: {data.games} games{anchor}"


def standings_table(data: ReportData) -> Table:
    """Rank, player, Elo ± 95 %, games, W/L/D, score, LOS over the next, faults."""
    table = Table(title=_title(data))
    for name in fmt.STANDING_HEADERS:
        if name == "player":
            table.add_column(name, overflow="fold", min_width=6)
        else:
            table.add_column(name, justify="right" if name in RIGHT else "left", no_wrap=True)
    for s in data.standings:
        table.add_row(*map(Text, fmt.standing_cells(s)))  # never markup or emoji codes
    return table


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell, numbers right-aligned, two spaces apart."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if h in RIGHT else c.ljust(w)
            for c, w, h in zip(cells, widths, headers, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def standings_lines(data: ReportData) -> list[str]:
    """The standings, the first-move advantage and the faults as plain lines."""
    lines = [_title(data)]
    lines += plain_table(fmt.STANDING_HEADERS, [fmt.standing_cells(s) for s in data.standings])
    return lines + _notes(data)


def _notes(data: ReportData) -> list[str]:
    notes = []
    if data.first_move is not None:
        who = "black" if data.first_role == "black" else data.first_role
        notes.append(
            f"{fmt.advantage_heading(data)}: {fmt.elo(data.first_move, signed=True)} Elo "
            f"{fmt.error(data.first_move_error)} "
            f"({who} scored {fmt.pct(data.first_mover_score_pct)})"
        )
    if data.faults:
        faults = ", ".join(f"{bot} {reason} ×{n}" for (bot, reason), n in data.faults.items())
        notes.append(f"Faults: {faults}")
    return notes


def print_standings(data: ReportData, console: Console | None = None) -> None:
    """Print the standings once: a rich table on a terminal, plain text elsewhere."""
    console = console or text_console()
    if console.is_terminal:
        console.print(standings_table(data))
        for note in _notes(data):
            console.print(note, markup=False, emoji=False, highlight=False)
        return
    for line in standings_lines(data):
        console.print(line, markup=False, emoji=False, highlight=False, soft_wrap=True)
