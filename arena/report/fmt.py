"""Number formats shared by every report, so the terminal, Markdown and HTML agree.

Unknown values (``None``: no games, or a rating the fit could not give) print
as an en dash rather than 0, which would claim something.
"""

from __future__ import annotations

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
