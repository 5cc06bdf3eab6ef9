"""``report.md``: the tournament report as Markdown tables, readable as plain text.

Meant for a repository or an issue comment: standings, first-move advantage,
crosstable, faults, end reasons and the game list. Board replays need a browser
and live in the HTML report only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from arena.report import fmt
from arena.report.rounds_text import markdown_rounds
from arena.report.summary import GameRow, ReportData
from arena.storage.safefile import write_atomic

__all__ = [
    "md_code",
    "analysis_section",
    "fault_details_section",
    "games_section",
    "markdown_report",
    "roles_section",
    "search_section",
    "write_markdown",
]


def md_code(text: str) -> str:
    """``text`` as an inline code span (shown literally), whatever backticks it holds."""
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    """A table cell, shown literally: a ``|`` in a bot's name must not split the row,
    nor its ``<`` start HTML."""
    return fmt.md_text(text)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    """A pipe table; ``align`` has one letter per column, ``l`` or ``r`` (default ``r``)."""
    marks = ["---:" if (align[i : i + 1] or "r") == "r" else ":---" for i in range(len(header))]
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def markdown_report(data: ReportData) -> str:
    """The whole report as one Markdown document."""
    out = [f"# {fmt.md_text(data.tournament)}", ""]
    games = fmt.md_text(", ".join(data.game_names)) or "no games"
    out += [
        f"{data.games} games ({games}); tournament created {fmt.md_text(data.created_at)}, "
        f"report generated {data.generated_at} by arena {fmt.md_text(data.arena_version)}.",
        "",
        "## Standings",
        "",
    ]
    anchor = (
        f"{fmt.md_text(data.anchor[0])} is fixed at {data.anchor[1]:g}"
        if data.anchor
        else "the pool average is 0"
    )
    out += [
        "Joint Bradley–Terry fit over every game (faults count as losses), "
        f"{anchor}; ± is the 95 % interval; LOS is the likelihood of superiority "
        "over the next-ranked player.",
        "",
    ]
    out += _table(fmt.STANDING_HEADERS, [fmt.standing_cells(s) for s in data.standings], align="rl")
    if data.rounds is not None:
        out += ["", *markdown_rounds(data.rounds)]
    out += ["", "## Search", ""]
    out += search_section(data)
    out += ["", "## Analysis", ""]
    out += analysis_section(data)
    out += ["", "## By role", ""]
    out += roles_section(data)
    out += ["", f"## {fmt.advantage_heading(data)}", ""]
    if data.first_move is None:
        out.append("Not enough games to fit it.")
    else:
        out.append(
            f"{_first(data)} (player 0) is worth "
            f"{fmt.elo(data.first_move, signed=True)} Elo "
            f"{fmt.error(data.first_move_error)} (95 %); player 0 scored "
            f"{fmt.points(data.first_mover_points)}/{data.games} "
            f"({fmt.pct(data.first_mover_score_pct)})."
        )
    out += ["", "## Crosstable", "", "Points of the row player against the column player."]
    out.append("")
    players = data.players
    rows = []
    for a in players:
        row = [a]
        for b in players:
            cell = data.crosstable.get((a, b))
            if a == b:
                row.append("·")
            else:
                row.append("" if cell is None else f"{fmt.points(cell.points)}/{cell.games}")
        s = data.standing(a)
        row.append(f"{fmt.points(s.points)}/{s.games}")
        rows.append(row)
    out += _table(["", *players, "total"], rows, align="l")
    out += ["", "## Faults", ""]
    if not data.faults:
        out.append("No bot faulted.")
    else:
        bots = list(dict.fromkeys(bot for bot, _ in data.faults))
        out += _table(
            ["bot", *data.fault_reasons, "total"],
            [
                [
                    bot,
                    *(str(data.faults.get((bot, r), 0)) for r in data.fault_reasons),
                    str(sum(n for (b, _), n in data.faults.items() if b == bot)),
                ]
                for bot in bots
            ],
            align="l",
        )
    out += ["", "## End reasons", ""]
    out += _table(["reason", "games"], [[r, str(n)] for r, n in data.reasons.items()], align="l")
    out += ["", "## Games", ""]
    if data.omitted_games:
        out += [omitted_note(data, code="`"), ""]
    out += games_section(data)
    out += ["", "## Fault details", ""]
    out += fault_details_section(data)
    return "\n".join(out) + "\n"


def omitted_note(data: ReportData, *, code: str) -> str:
    """Where the games a report does not list are (both reports say the same)."""
    folder = data.directory or "RESULTS_DIR"
    return (
        f"Listed: the latest and the faulted games, {len(data.game_list)} of {data.games}; "
        f"the other {data.omitted_games} count in every table above. Browse and replay "
        f"them all with {code}arena serve {folder}{code}, or export them with "
        f"{code}arena export {folder}{code}."
    )


def _first(data: ReportData) -> str:
    return "Black" if data.first_role == "black" else f"The {data.first_role}"


def search_section(data: ReportData) -> list[str]:
    """Per bot: thinking time per move and, from its ``info`` lines, depth and speed."""
    if not any(b.moves for b in data.bot_stats):
        return ["No bot was asked for a move."]
    lines = [
        "From the `info` lines bots send before each move: mean depth (for a Monte-Carlo "
        "bot, the length of its principal line), and nodes or, for a Monte-Carlo bot, "
        "playouts per second of thinking time; forced moves are not counted.",
        "",
    ]
    table = _table(
        fmt.STATS_HEADERS, [fmt.stats_cells(b) for b in data.bot_stats], align="lrrrrrrrl"
    )
    latency = fmt.latency_line(data.bot_stats)
    return lines + table + ([] if latency is None else ["", latency])


def analysis_section(data: ReportData) -> list[str]:
    """The solver's verdicts: per bot its blunders, missed wins, conversions; the
    latest mistakes (``arena analyze``)."""
    a = data.analysis
    if a is None:
        return [data.analysis_note or "Not analysed."]
    lines = [fmt.analysis_lead(a), "", a.definitions, ""]
    lines += _table(
        fmt.analysis_headers(a.solves), [fmt.analysis_cells(b) for b in a.bots], align="l"
    )
    if a.mistakes:
        lines += ["", f"Latest mistakes ({len(a.mistakes)} of {a.missed}):", ""]
        lines += [f"- {fmt.md_text(fmt.mistake_text(m))}" for m in a.mistakes]
    return lines


def roles_section(data: ReportData) -> list[str]:
    """Per bot: how it did as player 0 and as player 1, and the game's paired figures
    (e.g. Sekigahara impact, casualties) averaged for it and against it."""
    lines = [
        f"Each bot's games and score as {data.roles[0]} and as {data.roles[1]}"
        + (
            "; figures are means per game, the bot's own then its opponents'."
            if data.figure_labels
            else "."
        ),
        "",
    ]
    return lines + _table(
        fmt.role_headers(data), [fmt.role_cells(r, data) for r in data.role_stats], align="l"
    )


def games_section(data: ReportData, games: Sequence[GameRow] | None = None) -> list[str]:
    """The game list (``games``, default all): players by role, result, the game's
    own figures (round scores, impacts), reason and the fault detail."""
    labels = data.figure_labels
    rows = games if games is not None else data.game_list
    return _table(
        ["#", "key", *data.roles, "result", *labels, "reason", "detail", "plies", "time"],
        [
            [
                str(g.index),
                g.key,
                g.players[0],
                g.players[1],
                g.result,
                *(g.figures.get(label, "") for label in labels),
                fmt.reason(g),
                g.detail,
                str(g.plies),
                fmt.seconds(g.seconds),
            ]
            for g in rows
        ],
        align="rllll" + "r" * len(labels) + "llrr",
    )


STDERR_CHARS = 4000
"""At most this much of each bot's output is printed, from both ends: a report is read,
not grepped (the first lines say why a runtime would not start, the last where it crashed)."""


def fault_details_section(data: ReportData) -> list[str]:
    """Every faulted game: what went wrong, and what each bot wrote (both ends of it)."""
    faulted = [g for g in data.game_list if g.faulty_player is not None]
    if not faulted:
        return ["No game ended by a fault."]
    lines: list[str] = []
    for g in faulted:
        detail = ": " + fmt.md_text(g.detail) if g.detail else ""
        lines.append(
            f"- game {g.index} {md_code(g.key)}, {fmt.md_text(g.players[0])} vs "
            f"{fmt.md_text(g.players[1])}: {fmt.md_text(fmt.reason(g))}{detail}"
        )
        for name, tail in zip(g.players, g.stderr, strict=True):
            if tail:
                said = f"  output of {fmt.md_text(name)} (first and last lines):"
                lines += ["", said, "", "  ```text"]
                lines += ["  " + line.replace("```", "` ` `") for line in _tail(tail)]
                lines += ["  ```"]
    return lines


def _tail(text: str) -> list[str]:
    if len(text) <= STDERR_CHARS:
        return text.splitlines()
    half = STDERR_CHARS // 2
    cut = f"[... {len(text) - STDERR_CHARS} characters]"
    return [*text[:half].splitlines(), cut, *text[-half:].splitlines()]


def write_markdown(data: ReportData, path: str | os.PathLike[str]) -> Path:
    """Write ``report.md`` beside its final name and rename it into place."""
    return write_atomic(path, markdown_report(data))
