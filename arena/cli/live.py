"""What a running tournament shows: a live rich view, or one log line per game.

Both are :class:`~arena.tournament.Observer`s, so the runner does not know which
one is watching. The live view redraws a progress bar (games done of total, games
per minute, ETA), fault counters by reason, the running games (pairing, ply,
clocks), the last few results and the current score table with a running Elo. The log lines, for
``--quiet``, pipes and CI, follow cutechess-cli: each finished game, then the
running "Score of A vs B".
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console, Group, JustifyMethod
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
from rich.text import Text

from arena.match.events import GameStarted, LiveEvent
from arena.match.record import DISCONNECT, FAULT_REASONS, GameRecord
from arena.plan.config import TournamentConfig
from arena.plan.rounds import Draw
from arena.report.rounds_text import drawn_line
from arena.report.terminal import MIN_NAME, shorten, text_console
from arena.tournament import Observer, Progress, Tally, games_per_minute, ordered_standings


class PairScores:
    """Running W-L-D of each pairing, from the point of view of the bot named first
    (the first to appear in a game of that pair), as cutechess-cli prints it."""

    def __init__(self) -> None:
        self._scores: dict[frozenset[str], tuple[str, str, list[int]]] = {}

    def add(self, record: GameRecord) -> tuple[str, str, list[int]]:
        a, b = record.players[0], record.players[1]
        entry = self._scores.setdefault(frozenset((a, b)), (a, b, [0, 0, 0]))
        first = entry[0]
        mine = record.score if a == first else 1.0 - record.score
        entry[2][0 if mine == 1.0 else 1 if mine == 0.0 else 2] += 1
        return entry

    @staticmethod
    def line(entry: tuple[str, str, list[int]]) -> str:
        a, b, (w, l, d) = entry
        n = w + l + d
        return f"Score of {a} vs {b}: {w} - {l} - {d}  [{(w + d / 2) / n:.3f}] {n}"


def result_line(progress: Progress, key: str, record: GameRecord) -> str:
    detail = f" ({record.detail})" if record.detail else ""
    return (
        f"[{progress.done}/{progress.total}] {key} {record.players[0]} - {record.players[1]} "
        f"{record.result} {record.reason}{detail}"
    )


class LogObserver(Observer):
    """Plain lines per finished game, each ended: for ``--quiet``, pipes and CI."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or text_console(soft_wrap=True)
        self._start = time.monotonic()
        self.scores = PairScores()

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        self._start = time.monotonic()
        self._say(
            f"tournament {config.name}: {progress.total} games, {progress.done} already stored, "
            f"results in {directory}; {_cpu_line(config)}"
        )

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        self._say(result_line(progress, key, record))
        self._say(PairScores.line(self.scores.add(record)))

    def _say(self, line: str) -> None:
        """One line as it is: a game key such as ``r1:a:b/1`` holds ``:a:``, which
        rich would otherwise turn into an emoji."""
        self.console.print(line, markup=False, emoji=False, highlight=False, soft_wrap=True)

    def bot_disqualified(self, name: str, tally: Tally) -> None:
        self._say(f"disqualified {name}: {tally.faults} faults in {tally.games} games")

    def round_drawn(self, draw: Draw) -> None:
        self._say(drawn_line(draw.record))

    def stopping(self) -> None:
        self._say("stopping: running games are abandoned (Ctrl-C again to exit at once)")

    def warning(self, line: str) -> None:
        self._say(line)

    def note(self, line: str) -> None:
        self._say(line)


class RunningElo:
    """Ratings of the games finished so far, refit only when a game was added.

    The fit (a few tens of milliseconds) runs when the view is drawn, in rich's
    refresh thread, never in the trio loop that referees the games.
    """

    def __init__(self) -> None:
        self.results: list[tuple[str, str, float]] = []
        self._seen = -1
        self._ratings: dict[str, tuple[float, float]] = {}

    def add(self, record: GameRecord) -> None:
        self.results.append((record.players[0], record.players[1], float(record.score)))

    def ratings(self) -> dict[str, tuple[float, float]]:
        """``{player: (Elo, half-width of its 95 % interval)}``; ``{}`` before a fit."""
        results = self.results[:]
        if len(results) != self._seen:
            self._seen = len(results)
            players = list(dict.fromkeys(p for r in results for p in r[:2]))
            if len(players) >= 2:
                # Here, not at module level: scipy's import is most of a run's start-up
                # (``bench/startup.py``), and the quiet log never fits.
                from arena.stats.rating import joint_fit

                try:
                    fit = joint_fit(results, players=players)
                except ValueError:
                    return self._ratings
                self._ratings = {p: (fit.rating(p).value, fit.rating(p).error) for p in players}
        return self._ratings


def live_standings_table(
    progress: Progress,
    ratings: dict[str, tuple[float, float]] | None = None,
    elo: str = "Elo",
    *,
    width: int | None = None,
    rows: int | None = None,
) -> Table:
    """The running standings, one line per bot: in ``width`` columns a name too long
    is shortened with "…" (the final table says it in full); ``rows`` at most, the
    others counted in a last row."""
    headers = ["#", "bot", "games", "points", "score", *([elo] if ratings is not None else [])]
    headers.append("faults")
    lines = []
    names: list[tuple[str, str]] = []
    for rank, (name, row) in enumerate(ordered_standings(progress), 1):
        flag = " (did not start)" if row.broken else " (disqualified)" if row.disqualified else ""
        cells = [
            str(rank),
            name + flag,
            str(row.games),
            f"{row.points:g}",
            f"{100 * row.score:.1f}%",
        ]
        if ratings is not None:
            rating = ratings.get(name)
            cells.append(f"{rating[0]:+.0f} ±{rating[1]:.0f}" if rating else "–")
        cells.append(str(row.faults))
        lines.append(cells)
        names.append((name, flag))
    if width is not None:  # the other columns on one line, padded and bordered
        others = sum(
            3 + max([cell_len(h), *(cell_len(c[i]) for c in lines)])
            for i, h in enumerate(headers)
            if h != "bot"
        )
        room = max(width - 1 - others - 3, MIN_NAME)
        for cells, (name, flag) in zip(lines, names, strict=True):  # the flag stays whole
            cells[1] = shorten(name, max(room - cell_len(flag), MIN_NAME)) + flag
    table = Table(title="standings", title_justify="left", expand=False)
    for h in headers:
        table.add_column(h, justify="left" if h == "bot" else "right", no_wrap=True)
    shown = lines if rows is None or rows >= len(lines) else lines[: max(rows - 1, 0)]
    for cells in shown:
        table.add_row(*map(Text, cells))
    if len(shown) < len(lines):
        table.add_row(
            "", Text(f"... and {len(lines) - len(shown)} more"), *[""] * (len(headers) - 2)
        )
    return table


def faults_line(progress: Progress) -> str:
    parts = [
        f"{reason} {progress.faults.get(reason, 0)}"
        for reason in FAULT_REASONS
        if reason != DISCONNECT or progress.faults.get(reason)  # remote entrants' only
    ]
    return "faults: " + ", ".join(parts)


@dataclass(slots=True)
class Running:
    """A game in progress as the live view shows it."""

    players: tuple[str, str]
    ply: int = 0
    clocks: tuple[int, int] | None = None
    last: str = ""
    started: float = field(default_factory=time.monotonic)


def clock(ms: int) -> str:
    """Remaining time as ``m:ss.s``."""
    ms = max(ms, 0)
    return f"{ms // 60000}:{ms % 60000 / 1000:04.1f}"


RUNNING_ROWS = 12
RECENT = 5


def running_table(running: dict[str, Running], rows: int = RUNNING_ROWS) -> Table:
    """The running games, ``rows`` at most (a last one counts the others), one line
    each: a key or pairing too long for the terminal ends in "…"."""
    table = Table(title="running games", title_justify="left", expand=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("game", "left"),
        ("pairing", "left"),
        ("ply", "right"),
        ("clocks", "right"),
        ("last", "left"),
    )
    for name, justify in columns:
        wraps = name in ("game", "pairing")  # the ones rich may narrow, cut with "…"
        table.add_column(
            name,
            justify=justify,
            no_wrap=not wraps,
            overflow="ellipsis",
        )
    shown = list(running.items())
    if len(shown) > rows:
        shown = shown[: max(rows - 1, 0)]
    for key, game in shown:
        clocks = " / ".join(clock(c) for c in game.clocks) if game.clocks else ""
        # Text cells: a key or bot name is never read as markup or an emoji code; one
        # line each, so the view's height is known.
        cells = (key, " - ".join(game.players), str(game.ply), clocks, game.last)
        table.add_row(*(Text(c, no_wrap=True, overflow="ellipsis") for c in cells))
    if len(shown) < len(running):
        table.add_row("", f"... and {len(running) - len(shown)} more", "", "", "")
    return table


class LiveObserver(Observer):
    """A rich live display, redrawn after every game and move (and by rich's refresh)."""

    wants_events = True
    """Ask the tournament for every game's start and moves (running games)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(emoji=False, highlight=False)
        self.running: dict[str, Running] = {}
        self.recent: deque[str] = deque(maxlen=RECENT)
        self.elo = RunningElo()
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
        self._final = False
        self._progress: Progress | None = None
        self._start = time.monotonic()
        self.round_line = ""
        """A Swiss's or knockout's round being played, with its pairings."""

    def round_drawn(self, draw: Draw) -> None:
        self.round_line = drawn_line(draw.record)
        if self._progress is not None:
            self.bar.update(self.task, total=self._progress.total)

    def _render(self) -> Group:
        """The view, fitted to the terminal: the bar, the faults and the standings
        first, then as many running games and last results as the rest of its height
        holds (rich would cut the view's bottom, the standings, to a "..."). The
        final one leaves out the running games and the score table (the rated
        standings are printed after it, once)."""
        assert self._progress is not None
        final = self._final
        width, height = self.console.size
        options = self.console.options

        def tall(part: Any) -> int:
            return len(self.console.render_lines(part, options, pad=False))

        top: list[Any] = [self.bar, Text(faults_line(self._progress))]
        if self.round_line:
            top.append(Text(self.round_line))
        room = height - sum(tall(p) for p in top)
        standings = None
        if not final:
            resumed = self._progress.done > self._progress.played_now
            elo = "Elo (this run)" if resumed else "Elo"
            ratings = self.elo.ratings()
            standings = live_standings_table(self._progress, ratings, elo, width=width)
            if tall(standings) > room:  # more bots than lines: the best, and a count
                rows = max(room - (tall(standings) - len(self._progress.standings)), 1)
                standings = live_standings_table(
                    self._progress, ratings, elo, width=width, rows=rows
                )
            room -= tall(standings)
        middle: list[Any] = []
        # The latest two results keep their lines beside the running games.
        keep = min(len(self.recent), 2) + 1 if self.recent else 0
        if self.running and not final:
            # Its title, header and borders take five lines, each game one.
            rows = min(len(self.running), RUNNING_ROWS, room - keep - 5)
            if rows > 0:
                middle.append(running_table(self.running, rows))
                room -= tall(middle[-1])
        recent = list(self.recent)[-max(room - 1, 0) :] if room > 1 else []
        if final:
            recent = list(self.recent)
        if recent:
            # One line each while running; the final frame, which stays, keeps them whole.
            lines = [Text(line, no_wrap=not final, overflow="ellipsis") for line in recent]
            middle.append(Group(Text("last results:"), *lines))
        return Group(*top, *middle, *([standings] if standings is not None else []))

    def game_event(self, event: LiveEvent) -> None:
        """A game started or moved: keep its pairing, ply, clocks and last action."""
        if isinstance(event, GameStarted):
            self.running[event.key] = Running((event.players[0], event.players[1]))
            return
        game = self.running.get(event.key)
        if game is None:
            return
        game.ply = event.ply
        game.last = event.action
        if len(event.clocks) == 2:
            game.clocks = (event.clocks[0], event.clocks[1])

    def started(self, progress: Progress, config: TournamentConfig, directory: Path) -> None:
        self._progress = progress
        self._start = time.monotonic()
        self.console.print(
            Text.assemble(
                "tournament ",
                (config.name, "bold"),
                f": {progress.total} games ({progress.done} already stored), "
                f"results in {directory}; {_cpu_line(config)}",
            )
        )
        self.bar.update(self.task, total=progress.total, completed=progress.done)
        # Drawn from the current state at every refresh, so moves need no redraw call.
        self.live = Live(console=self.console, refresh_per_second=4, get_renderable=self._render)
        self.live.start()

    def game_finished(self, progress: Progress, key: str, record: GameRecord) -> None:
        self.running.pop(key, None)
        self.recent.append(result_line(progress, key, record))
        self.elo.add(record)
        rate = games_per_minute(progress.played_now, time.monotonic() - self._start)
        self.bar.update(self.task, completed=progress.done, rate=f"{rate:.1f} games/min")
        if self.live is not None:
            self.live.refresh()

    def bot_disqualified(self, name: str, tally: Tally) -> None:
        self.console.print(
            Text.assemble(("disqualified", "red"), f" {name}: {tally.faults} faults")
        )

    def stopping(self) -> None:
        self.console.print(
            "[yellow]stopping[/]: running games are abandoned (Ctrl-C again to exit at once)"
        )

    def warning(self, line: str) -> None:
        self.console.print(Text(line, style="yellow"))

    def note(self, line: str) -> None:
        self.console.print(Text(line))

    def close(self) -> None:
        if self.live is not None:
            self._final = True
            self.live.refresh()
            self.live.stop()
            self.live = None
            if not self.console.is_terminal:
                self.console.line()  # rich leaves the last frame unended off a terminal


def _cpu_line(config: TournamentConfig) -> str:
    """How the bots' CPU is held (share, cores, frozen off move): said once, at the start."""
    from arena.backends.slots import describe_affinity, describe_clock
    from arena.engine.cpu import describe

    held = describe(config.sandbox.mode, config.ponder)
    return f"{held}; {describe_affinity(config)}; {describe_clock(config)}"
