"""``report.md``: the tournament report as Markdown tables, readable as plain text.

Meant for a repository or an issue comment: standings, first-move advantage,
crosstable, faults, end reasons and the game list. Board replays need a browser
and live in the HTML report only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from arena.report import fmt
from arena.report.summary import ReportData

__all__ = ["markdown_report", "write_markdown"]


def _cell(text: str) -> str:
    """A table cell: a ``|`` in a bot's name must not split the row."""
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    """A pipe table; ``align`` has one letter per column, ``l`` or ``r`` (default ``r``)."""
    marks = ["---:" if (align[i : i + 1] or "r") == "r" else ":---" for i in range(len(header))]
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def markdown_report(data: ReportData) -> str:
    """The whole report as one Markdown document."""
    out = [f"# {data.tournament}", ""]
    games = ", ".join(data.game_names) or "no games"
    out += [
        f"{data.games} games ({games}); tournament created {data.created_at}, "
        f"report generated {data.generated_at} by arena {data.arena_version}.",
        "",
        "## Standings",
        "",
    ]
    anchor = (
        f"{data.anchor[0]} is fixed at {data.anchor[1]:g}"
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
    out += ["", "## First-move advantage", ""]
    if data.first_move is None:
        out.append("Not enough games to fit it.")
    else:
        out.append(
            f"The first mover (player 0) is worth {fmt.elo(data.first_move, signed=True)} Elo "
            f"{fmt.error(data.first_move_error)} (95 %); first movers scored "
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
    out += _table(
        ["#", "key", "first", "second", "result", "reason", "plies", "time"],
        [
            [
                str(g.index),
                g.key,
                g.players[0],
                g.players[1],
                g.result,
                g.reason + (f" ({g.faulty_player})" if g.faulty_player else ""),
                str(g.plies),
                fmt.seconds(g.seconds),
            ]
            for g in data.game_list
        ],
        align="rlllll",
    )
    return "\n".join(out) + "\n"


def write_markdown(data: ReportData, path: str | os.PathLike[str]) -> Path:
    """Write ``report.md`` beside its final name and rename it into place."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(markdown_report(data), encoding="utf-8")
    os.replace(tmp, path)
    return path
