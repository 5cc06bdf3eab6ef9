"""The standings in the terminal (what ``arena run`` and ``arena report`` print).

One standings table, the rated one: Elo, its interval, W-L-D, score and faults
(then, if bots sent ``info`` lines, their search figures). On a
terminal it is a rich table of one line per player: a name too long for the
terminal is shortened with "…" and written in full in a note under the table
(folded, a long name made each of its rows six lines tall), and a terminal too
narrow for every column leaves out its spare columns, and says so; through a
pipe or in a CI log it is plain text, every line ended, nothing cut at 80
columns and no box drawing, so ``grep`` and ``diff`` read it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, Group, JustifyMethod, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from arena.report import fmt

if TYPE_CHECKING:  # the summary imports the rating fit (scipy: a second of arena run's start)
    from arena.report.summary import ReportData

__all__ = [
    "FittedTable",
    "shorten",
    "plain_table",
    "rated_table",
    "print_standings",
    "search_table",
    "standings_lines",
    "standings_table",
    "text_console",
]

TEXT_COLUMNS = {"player", "last info"}

RIGHT = {
    h
    for h in [*fmt.STANDING_HEADERS, *fmt.STATS_HEADERS, *fmt.ANALYSIS_HEADERS]
    if h not in TEXT_COLUMNS
}
"""The columns of numbers, right-aligned."""
SEARCH_HEADERS = fmt.STATS_HEADERS[:-1]
"""The search table without its last column (a sample info line: too wide here)."""


def text_console(*, soft_wrap: bool = False) -> Console:
    """A console that prints text as it is: no markup, no ``:name:`` emoji codes
    (a Sekigahara card ``T18:date:s`` must not become a calendar), no highlighting;
    ``soft_wrap`` for log lines, which a narrow terminal must not break."""
    return Console(markup=False, emoji=False, highlight=False, soft_wrap=soft_wrap)


MIN_NAME = 6
"""The narrowest a name column gets before spare columns are left out."""


def shorten(name: str, width: int) -> str:
    """``name`` in at most ``width`` cells, cut with "…" when longer."""
    if cell_len(name) <= width:
        return name
    return set_cell_size(name, max(width - 1, 0)) + "…"


def _title(data: ReportData) -> str:
    anchor = f", {data.anchor[0]} fixed at {data.anchor[1]:g}" if data.anchor else ""
    return f"{data.tournament}: {data.games} games{anchor}"


class FittedTable:
    """A rated table of one line per player: it leaves out its ``spare`` columns,
    last first, when the terminal is too narrow for every column on one line, and
    then shortens the names that still do not fit, with "…".

    Rich would otherwise shrink every column at once, cutting ratings to ``4…``
    and folding a player's name away. What is left out is said under the table,
    and so is each shortened name in full.
    """

    def __init__(
        self,
        title: str,
        headers: Sequence[str],
        rows: Sequence[Sequence[str]],
        right: Collection[str],
        spare: Sequence[str],
    ) -> None:
        self.title, self.headers, self.rows = title, list(headers), rows
        self.right, self.spare = right, list(spare)

    def table(self, left_out: Sequence[str] = (), name_width: int | None = None) -> Table:
        """The table without the ``left_out`` columns, names cut to ``name_width``."""
        shown = [i for i, h in enumerate(self.headers) if h not in left_out]
        caption = f"left out, too narrow here: {', '.join(left_out)}" if left_out else None
        table = Table(title=self.title, caption=caption)
        for i in shown:
            name = self.headers[i]
            if name == "player":
                table.add_column(name, no_wrap=True, min_width=MIN_NAME)
            else:
                justify: JustifyMethod = "right" if name in self.right else "left"
                table.add_column(name, justify=justify, no_wrap=True)
        for row in self.rows:
            cells = [
                shorten(row[i], name_width)
                if name_width is not None and self.headers[i] == "player"
                else row[i]
                for i in shown
            ]
            table.add_row(*map(Text, cells))  # never markup or emoji codes
        return table

    def _layout(self, options: ConsoleOptions) -> tuple[list[str], int | None]:
        """The columns to leave out and the width names are cut to (``None``: none cut)."""
        # Each column's width on one line (the player's at its least, cut), with a
        # padding space either side and a border.
        need = {
            h: 3
            + (
                MIN_NAME
                if h == "player"
                else max(cell_len(h), *(cell_len(r[i]) for r in self.rows))
            )
            for i, h in enumerate(self.headers)
        }
        left_out: list[str] = []
        spare = [h for h in reversed(self.spare) if h in need]
        while (
            spare and 1 + sum(w for h, w in need.items() if h not in left_out) > options.max_width
        ):
            left_out.append(spare.pop(0))
        if "player" not in need:
            return left_out, None
        room = options.max_width - 1 - sum(w for h, w in need.items() if h not in left_out)
        room += need["player"] - 3
        at = self.headers.index("player")
        longest = max((cell_len(r[at]) for r in self.rows), default=0)
        return left_out, (max(room, MIN_NAME) if longest > room else None)

    def fitted(self, console: Console, options: ConsoleOptions) -> Group:
        left_out, width = self._layout(options)
        parts: list[Table | Text] = [self.table(left_out, width)]
        if width is not None:  # each by its rank (two names may be cut alike)
            at = self.headers.index("player")
            rank = self.headers.index("#") if "#" in self.headers else None
            parts.append(Text("shortened names, in full:"))
            parts += [
                Text(f"  {'' if rank is None else '#' + r[rank] + ' '}{r[at]}")
                for r in self.rows
                if cell_len(r[at]) > width
            ]
        return Group(*parts)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.fitted(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        left_out, width = self._layout(options)
        return Measurement.get(console, options, self.table(left_out, width))


def rated_table(
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Collection[str] = RIGHT,
    spare: Sequence[str] = (),
) -> FittedTable:
    """A table of rated players for a terminal: the player's name folds, every other
    column stays on one line, the ``right`` ones right-aligned, and the ``spare``
    ones (the least needed last) left out on a terminal too narrow for them."""
    return FittedTable(title, headers, rows, right, spare)


def standings_table(data: ReportData) -> FittedTable:
    """Rank, player, Elo ± 95 %, games, W/L/D, score, LOS over the next, faults."""
    rows = [fmt.standing_cells(s) for s in data.standings]
    return rated_table(_title(data), fmt.STANDING_HEADERS, rows, spare=["score", "LOS next"])


def plain_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[str] = RIGHT
) -> list[str]:
    """Columns padded to their widest cell, the ``right`` ones right-aligned, two
    spaces apart."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if h in right else c.ljust(w)
            for c, w, h in zip(cells, widths, headers, strict=True)
        ]
        return "  ".join(parts).rstrip()

    return [line(headers), *(line(r) for r in rows)]


def _searched(data: ReportData) -> bool:
    return any(b.info_moves for b in data.bot_stats)


def _search_rows(data: ReportData) -> list[list[str]]:
    return [fmt.stats_cells(b)[: len(SEARCH_HEADERS)] for b in data.bot_stats]


def search_table(data: ReportData) -> Table:
    """Per bot: moves, time per move and, from its ``info`` lines, depth, nodes/s and
    (Monte-Carlo bots) playouts/s."""
    table = Table(title="search (from info lines)")
    for name in SEARCH_HEADERS:
        table.add_column(name, justify="right" if name in RIGHT else "left", overflow="fold")
    for row in _search_rows(data):
        table.add_row(*map(Text, row))
    return table


def _analysis_rows(data: ReportData) -> tuple[list[str], list[list[str]]]:
    a = data.analysis
    assert a is not None
    return fmt.analysis_headers(a.solves), [fmt.analysis_cells(b) for b in a.bots]


def analysis_table(data: ReportData) -> Table:
    """Per bot: decisions, blunders and missed wins, conversions (``arena analyze``)."""
    headers, rows = _analysis_rows(data)
    table = Table(title="analysis (exact solver)")
    for name in headers:
        table.add_column(name, justify="left" if name == "player" else "right", overflow="fold")
    for row in rows:
        table.add_row(*map(Text, row))
    return table


def standings_lines(data: ReportData) -> list[str]:
    """The standings, the first-move advantage and the faults as plain lines, and
    the bots' search figures when any bot sent ``info`` lines, and the solver's
    analysis when there is one."""
    lines = [_title(data)]
    lines += plain_table(fmt.STANDING_HEADERS, [fmt.standing_cells(s) for s in data.standings])
    lines += _notes(data)
    if _searched(data):
        lines += ["search (from info lines):", *plain_table(SEARCH_HEADERS, _search_rows(data))]
    latency = fmt.latency_line(data.bot_stats)
    if latency is not None:
        lines.append(latency)
    if data.analysis is not None:
        lines += [
            f"analysis: {fmt.analysis_lead(data.analysis)}",
            *plain_table(*_analysis_rows(data)),
        ]
    return lines


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
        if _searched(data):
            console.print(search_table(data))
        latency = fmt.latency_line(data.bot_stats)
        if latency is not None:
            console.print(latency, markup=False, emoji=False, highlight=False)
        if data.analysis is not None:
            console.print(f"analysis: {fmt.analysis_lead(data.analysis)}", soft_wrap=True)
            console.print(analysis_table(data))
        return
    for line in standings_lines(data):
        console.print(line, markup=False, emoji=False, highlight=False, soft_wrap=True)
