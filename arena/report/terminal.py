"""The standings in the terminal, as a rich table (what ``arena report`` prints)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from arena.report import fmt
from arena.report.summary import ReportData

__all__ = ["print_standings", "standings_table"]


def standings_table(data: ReportData) -> Table:
    """Rank, player, Elo ± 95 %, games, W/L/D, score, LOS over the next, faults."""
    anchor = f", {data.anchor[0]} fixed at {data.anchor[1]:g}" if data.anchor else ""
    table = Table(title=f"{data.tournament}: {data.games} games{anchor}")
    for name, justify in (
        ("#", "right"),
        ("player", "left"),
        ("Elo", "right"),
        ("95%", "right"),
        ("games", "right"),
        ("W-L-D", "right"),
        ("score", "right"),
        ("LOS next", "right"),
        ("faults", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for s in data.standings:
        table.add_row(*fmt.standing_cells(s, blank_zero_faults=True))
    return table


def print_standings(data: ReportData, console: Console | None = None) -> None:
    """Print the standings, the first-move advantage and a fault summary."""
    console = console or Console()
    console.print(standings_table(data))
    if data.first_move is not None:
        console.print(
            f"First-move advantage: {fmt.elo(data.first_move, signed=True)} Elo "
            f"{fmt.error(data.first_move_error)} (first mover scored "
            f"{fmt.pct(data.first_mover_score_pct)})"
        )
    if data.faults:
        faults = ", ".join(f"{bot} {reason} ×{n}" for (bot, reason), n in data.faults.items())
        console.print(f"Faults: {faults}")
