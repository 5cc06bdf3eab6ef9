"""Number formats shared by every report, so the terminal, Markdown and HTML agree.

Unknown values (``None``: no games, or a rating the fit could not give) print
as an en dash rather than 0, which would claim something.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.report.summary import Standing

DASH = "–"


def elo(value: float | None, *, signed: bool = False) -> str:
    """An Elo value to the nearest point."""
    if value is None:
        return DASH
    rounded = round(value)  # an int: no "-0"
    return f"{rounded:+d}" if signed else f"{rounded:d}"


def error(value: float | None) -> str:
    """The half-width of a 95 % interval, as ``±12``."""
    return DASH if value is None else f"±{value:.0f}"


def pct(value: float | None) -> str:
    """A percentage to one decimal."""
    return DASH if value is None else f"{value:.1f}%"


def prob(value: float | None) -> str:
    """A probability (LOS) as a percentage to one decimal."""
    return DASH if value is None else f"{100 * value:.1f}%"


def points(value: float) -> str:
    """Half points as ``2.5``, whole points as ``3``."""
    return f"{value:g}"


def seconds(value: float) -> str:
    return f"{value:.1f}s"


STANDING_HEADERS = ["#", "player", "Elo", "95%", "games", "W-L-D", "score", "LOS next", "faults"]


def standing_cells(s: Standing, *, blank_zero_faults: bool = False) -> list[str]:
    """One standings row as text, in the order of :data:`STANDING_HEADERS`."""
    faults = "" if blank_zero_faults and not s.faults else str(s.faults)
    return [
        str(s.rank),
        s.player,
        elo(s.rating),
        error(s.error),
        str(s.games),
        f"{s.wins}-{s.losses}-{s.draws}",
        pct(s.score_pct),
        prob(s.los_next),
        faults,
    ]
