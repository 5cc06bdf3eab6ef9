"""What the live page shows of a Swiss or knockout: the round being played (round
N of M), its pairings with their points so far, and a knockout's bracket as the
report draws it. Plain values for the page's results stream."""

from __future__ import annotations

from typing import Any

from arena.report.bracket import bracket_svg
from arena.report.rounds import RoundsSection, stage
from arena.report.rounds_text import board_line

__all__ = ["rounds_payload"]


def rounds_payload(section: RoundsSection | None) -> dict[str, Any] | None:
    if section is None or not section.rounds:
        return None
    knockout = section.format == "knockout"
    number = section.current
    table = section.rounds[number - 1]
    title = f"Round {number} of {section.rounds_total}"
    if knockout:
        title += f" ({stage(number, section.rounds_total)})"
    if section.champion:
        title += f" · champion: {section.champion}"
    return {
        "title": title,
        "boards": [board_line(b, seeds=knockout) for b in table.boards if b.a or b.b],
        "bracket": bracket_svg(section) if knockout else "",
    }
