"""The ratings plot as inline SVG: one row per player, a dot and its 95 % interval.

Drawn by hand rather than with a plotting library so the HTML report needs no
extra dependency and no network to open, and the picture stays a few kilobytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from arena.stats.rating import RatedRow

__all__ = ["rating_plot_svg"]

ROW = 26
LABEL = 150
PLOT = 460
PAD = 16
AXIS = 34


def _ticks(low: float, high: float) -> list[float]:
    """About five round tick values covering ``[low, high]``."""
    span = max(high - low, 1e-9)
    raw = span / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    ticks = []
    k = 0
    while first + k * step <= high + 1e-9:
        ticks.append(first + k * step)
        k += 1
    return ticks


def _short(name: str, limit: int = 18) -> str:
    """A label that fits the label column; the full name is in the row's title."""
    return name if len(name) <= limit else name[: limit - 1] + "…"


def rating_plot_svg(standings: Sequence[RatedRow]) -> str:
    """Ratings with interval bars, best first; an empty string when nothing is rated."""
    # Each rated row with its rating and error as floats (no error known: no bar).
    rated = [(s, s.rating, s.error or 0.0) for s in standings if s.rating is not None]
    if not rated:
        return ""
    lows = [rating - err for _, rating, err in rated]
    highs = [rating + err for _, rating, err in rated]
    low, high = min(lows), max(highs)
    if high - low < 1.0:
        low, high = low - 50.0, high + 50.0
    margin = (high - low) * 0.05
    low, high = low - margin, high + margin

    def x(value: float) -> float:
        return round(LABEL + (value - low) / (high - low) * PLOT, 1)

    width = LABEL + PLOT + PAD
    height = PAD + ROW * len(rated) + AXIS
    bottom = PAD + ROW * len(rated)
    parts = [
        f'<svg class="rating-plot" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="ratings with 95% intervals">'
    ]
    for t in _ticks(low, high):
        parts.append(
            f'<line x1="{x(t)}" y1="{PAD - 6}" x2="{x(t)}" y2="{bottom}" stroke="#ddd"/>'
            f'<text x="{x(t)}" y="{bottom + 16}" text-anchor="middle" font-size="11">'
            f"{t:g}</text>"
        )
    parts.append(
        f'<line x1="{LABEL}" y1="{bottom}" x2="{LABEL + PLOT}" y2="{bottom}" stroke="#555"/>'
        f'<text x="{LABEL + PLOT / 2}" y="{bottom + 30}" text-anchor="middle" '
        'font-size="11">Elo (95% interval)</text>'
    )
    for i, (s, rating, err) in enumerate(rated):
        y = PAD + ROW * i + ROW / 2
        parts.append(
            f'<g class="rating-row" data-player="{escape(s.player)}" '
            f'data-rating="{rating:.1f}" data-error="{err:.1f}">'
            f"<title>{escape(s.player)}: {rating:.0f} ± {err:.0f}</title>"
            f'<text x="{LABEL - 8}" y="{y + 4}" text-anchor="end" font-size="12">'
            f"{escape(_short(s.player))}</text>"
            f'<line x1="{x(rating - err)}" y1="{y}" x2="{x(rating + err)}" y2="{y}" '
            'stroke="#2f6fd6" stroke-width="2"/>'
            f'<line x1="{x(rating - err)}" y1="{y - 5}" x2="{x(rating - err)}" '
            f'y2="{y + 5}" stroke="#2f6fd6"/>'
            f'<line x1="{x(rating + err)}" y1="{y - 5}" x2="{x(rating + err)}" '
            f'y2="{y + 5}" stroke="#2f6fd6"/>'
            f'<circle cx="{x(rating)}" cy="{y}" r="4" fill="#d63a2f"/></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
