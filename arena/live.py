"""What a running tournament shows: a live rich view, or one log line per game.

Both are :class:`~arena.tournament.Observer`s, so the runner does not know which
one is watching. The live view redraws a progress bar (games done of total, games
per minute, ETA), fault counters by reason and the current score table.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as Bar
from rich.table import Table

from arena.config import TournamentConfig
from arena.record import FAULT_REASONS, GameRecord
from arena.tournament import Observer, Progress, Standing, games_per_minute, ordered_standings


class LogObserver(Observer):
    """One plain line per finished game: for ``--quiet``, logs and CI."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False, soft_wrap=True)
        self._start = time.monotonic()

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        self._start = time.monotonic()
        self.console.print(
            f"tournament {config.name}: {progress.total} games, {progress.done} already stored, "
            f"results in {directory}"
        )

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        detail = f" ({record.detail})" if record.detail else ""
        self.console.print(
            f"[{progress.done}/{progress.total}] {key} {record.players[0]} - {record.players[1]} "
            f"{record.result} {record.reason}{detail}"
        )

    def bot_disqualified(self, name: str, standing: Standing) -> None:
        self.console.print(
            f"disqualified {name}: {standing.faults} faults in {standing.games} games"
        )

    def stopping(self) -> None:
        self.console.print("stopping: running games are abandoned (Ctrl-C again to exit at once)")


def standings_table(progress: Progress) -> Table:
    table = Table(title="standings", title_justify="left", expand=False)
    table.add_column("#", justify="right")
    table.add_column("bot")
    table.add_column("games", justify="right")
    table.add_column("points", justify="right")
    table.add_column("score", justify="right")
    table.add_column("faults", justify="right")
    for rank, (name, row) in enumerate(ordered_standings(progress), 1):
        flag = " (disqualified)" if row.disqualified else ""
        table.add_row(
            str(rank), name + flag, str(row.games), f"{row.points:g}",
            f"{100 * row.score:.1f}%", str(row.faults),
        )  # fmt: skip
    return table


def faults_line(progress: Progress) -> str:
    parts = [f"{reason} {progress.faults.get(reason, 0)}" for reason in FAULT_REASONS]
    return "faults: " + ", ".join(parts)


class LiveObserver(Observer):
    """A rich live display, redrawn after every game (and by rich's own refresh)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console()
        self.bar = Bar(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.task = self.bar.add_task("games", total=1, rate="")
        self.live: Live | None = None
        self._progress: Progress | None = None
        self._start = time.monotonic()

    def _render(self) -> Group:
        assert self._progress is not None
        return Group(self.bar, faults_line(self._progress), standings_table(self._progress))

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        self._progress = progress
        self._start = time.monotonic()
        self.console.print(
            f"tournament [bold]{config.name}[/]: {progress.total} games "
            f"({progress.done} already stored), results in {directory}"
        )
        self.bar.update(self.task, total=progress.total, completed=progress.done)
        self.live = Live(self._render(), console=self.console, refresh_per_second=4)
        self.live.start()

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        rate = games_per_minute(progress.played_now, time.monotonic() - self._start)
        self.bar.update(self.task, completed=progress.done, rate=f"{rate:.1f} games/min")
        if self.live is not None:
            self.live.update(self._render())

    def bot_disqualified(self, name: str, standing: Standing) -> None:
        self.console.print(f"[red]disqualified[/] {name}: {standing.faults} faults")

    def stopping(self) -> None:
        self.console.print("[yellow]stopping[/]: running games are abandoned "
                           "(Ctrl-C again to exit at once)")  # fmt: skip

    def close(self) -> None:
        if self.live is not None:
            self.live.update(self._render())
            self.live.stop()
            self.live = None
