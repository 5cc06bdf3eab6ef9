"""A knockout's bracket as inline SVG: one column per round, one box per match
(each side's seed, name and points; the winner in bold), lines joining each
match to the one its winner plays next. Drawn by hand like the ratings plot:
no dependency, a few kilobytes, every name escaped."""

from __future__ import annotations

from html import escape

from arena.report import fmt
from arena.report.rounds import BoardResult, RoundsSection, stage

__all__ = ["bracket_svg"]

BOX_W = 180
BOX_H = 44
GAP_X = 36
SLOT = 56
TOP = 26
NAME = 17


def _short(name: str, limit: int = NAME) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _side(board: BoardResult, i: int, x: float, y: float) -> str:
    name = (board.a, board.b)[i]
    seed = board.seeds[i]
    if name is None:
        label = "bye" if board.bye and i == 1 else "?"
        return f'<text x="{x + 8}" y="{y}" font-size="12" fill="#888">{label}</text>'
    bold = ' font-weight="bold"' if board.winner == name else ""
    seed_text = f"{seed} " if seed is not None else ""
    points = "" if board.bye or (board.games == 0) else fmt.points(board.points[i])
    return (
        f'<text x="{x + 8}" y="{y}" font-size="12"{bold}>'
        f'<tspan fill="#888">{seed_text}</tspan>{escape(_short(name))}</text>'
        f'<text x="{x + BOX_W - 8}" y="{y}" font-size="12" text-anchor="end"{bold}>{points}</text>'
    )


def bracket_svg(section: RoundsSection) -> str:
    """The bracket of a knockout section; an empty string for anything else."""
    if section.format != "knockout" or not section.rounds:
        return ""
    first = len(section.rounds[0].boards)
    columns = len(section.rounds)
    width = columns * BOX_W + (columns - 1) * GAP_X + 2
    height = TOP + first * SLOT + 6
    parts = [
        '<svg xmlns="http://www.w3.org/2000/svg" class="bracket" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'role="img" aria-label="knockout bracket">'
    ]
    for c, table in enumerate(section.rounds):
        x = 1 + c * (BOX_W + GAP_X)
        parts.append(
            f'<text x="{x + BOX_W / 2}" y="14" font-size="12" text-anchor="middle" '
            f'font-weight="bold">{escape(stage(table.number, section.rounds_total))}</text>'
        )
        span = SLOT * (1 << c)
        for m, board in enumerate(table.boards):
            centre = TOP + span * m + span / 2
            y = centre - BOX_H / 2
            how = f"; {board.how}" if board.how else ""
            title = escape(
                f"{board.a or '?'} – {board.b or ('bye' if board.bye else '?')}: "
                f"{fmt.points(board.points[0])}–{fmt.points(board.points[1])} "
                f"in {board.games} games{how}"
            )
            parts.append(
                f'<g class="match" data-round="{table.number}" data-match="{m + 1}" '
                f'data-winner="{escape(board.winner or "")}"><title>{title}</title>'
                f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="4" '
                f'fill="#fff" stroke="{"#2f6fd6" if board.winner else "#bbb"}"/>'
                f'<line x1="{x}" y1="{centre}" x2="{x + BOX_W}" y2="{centre}" stroke="#eee"/>'
                + _side(board, 0, x, centre - 6)
                + _side(board, 1, x, centre + 16)
                + "</g>"
            )
            if c + 1 < columns:
                nxt = TOP + 2 * span * (m // 2) + span
                mid = x + BOX_W + GAP_X / 2
                parts.append(
                    f'<path d="M{x + BOX_W} {centre} H{mid} V{nxt} H{x + BOX_W + GAP_X}" '
                    'fill="none" stroke="#999"/>'
                )
    parts.append("</svg>")
    return "".join(parts)
