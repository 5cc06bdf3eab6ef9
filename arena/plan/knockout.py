"""Knockout: a seeded bracket of matches, each of K pairs of games.

The bracket has a power-of-two number of places; seeds are placed so that the
best two can only meet in the final, the best four in the semi-finals, and so
on (seed 1 meets seed 8 in round 1 of eight, 4 meets 5, 2 meets 7, 3 meets 6).
A field that is not a power of two leaves places empty: the top seeds facing an
empty place get a bye into round 2, so byes go to the best seeds.

A match is won on game points. A tied match gets one extra pair at a time, up to
``extra_pairs``; still tied after those, the entrant who lost fewer of the
match's games by a fault goes through, and if that is equal too, the better seed
(the :func:`decide` rule, stated in the README).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path

__all__ = ["bracket_order", "bracket_size", "decide", "resolve_seeds"]

MAX_RATINGS_BYTES = 64 << 20


def bracket_size(entrants: int) -> int:
    return 1 << max(1, math.ceil(math.log2(max(entrants, 2))))


def bracket_order(size: int) -> list[int]:
    """Seed numbers (1-based) of the bracket's places, top to bottom: places 2i and
    2i+1 meet in round 1. ``bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]``."""
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [x for s in order for x in (s, total - s)]
    return order


def decide(
    a: str,
    b: str,
    points: tuple[float, float],
    faults: tuple[int, int],
    seed: dict[str, int],
) -> tuple[str, str]:
    """The winner of a finished match between ``a`` and ``b`` and how it was decided:
    a tie on points goes to fewer faults, then to the better seed (whether a tie first
    plays extra pairs is the caller's choice)."""
    if points[0] != points[1]:
        return (a if points[0] > points[1] else b), ""
    if faults[0] != faults[1]:
        return (a if faults[0] < faults[1] else b), "tie: fewer faults"
    return (a if seed[a] < seed[b] else b), "tie: better seed"


def resolve_seeds(
    names: Sequence[str],
    seeds: Sequence[str],
    seed_from: str | None,
    *,
    seed: int,
    ratings: Path | None,
    game: str,
    variant: str,
) -> list[str]:
    """Every entrant (``names``, in file order) in seed order, best first: ``seeds``
    from the file, the rating list's order (``seed_from = "ratings"``, the file
    ``ratings`` of ``game``/``variant``; unrated entrants after the rated ones in file
    order), or drawn with the tournament ``seed``. Raises ValueError with what is wrong."""
    names = list(names)
    how = seed_from or ("file" if seeds else "draw")
    if how == "file":
        if sorted(seeds) != sorted(names):
            missing = [n for n in names if n not in seeds]
            unknown = [n for n in seeds if n not in names]
            doubled = sorted({n for n in seeds if list(seeds).count(n) > 1})
            parts = []
            if missing:
                parts.append(f"missing {', '.join(missing)}")
            if unknown:
                parts.append(f"unknown {', '.join(unknown)}")
            if doubled:
                parts.append(f"listed twice {', '.join(doubled)}")
            raise ValueError(
                "expected every bot exactly once, best first ("
                + ("; ".join(parts) or "empty")
                + ")"
            )
        return list(seeds)
    if seeds:
        raise ValueError(f"seeds are given in the file, but seed_from = {how!r}")
    if how == "draw":
        order = list(names)
        random.Random(f"knockout:{seed}").shuffle(order)
        return order
    if ratings is None:
        raise ValueError("seed_from = 'ratings' needs ratings = 'file of arena ratings --json'")
    elo = _ratings(ratings, game, variant)
    rated = sorted((n for n in names if n in elo), key=lambda n: (-elo[n], names.index(n)))
    return rated + [n for n in names if n not in elo]


def _ratings(path: Path, game: str, variant: str) -> dict[str, float]:
    """Player -> Elo of the rating list (``arena ratings --json``) of ``game``/``variant``."""
    try:
        with path.open("rb") as f:
            data = json.loads(f.read(MAX_RATINGS_BYTES))
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read rating list {str(path)!r}: {e}") from None
    lists = data.get("lists") if isinstance(data, dict) else None
    if not isinstance(lists, list):
        raise ValueError(f"{str(path)!r} is not a rating list of arena ratings --json")
    for table in lists:
        if not isinstance(table, dict) or table.get("game") != game:
            continue
        if table.get("variant") not in (variant, None, ""):
            continue
        out: dict[str, float] = {}
        for row in table.get("players") or []:
            if not isinstance(row, dict):
                continue
            name, value = row.get("player"), row.get("elo")
            if isinstance(name, str) and isinstance(value, int | float) and math.isfinite(value):
                out[name] = float(value)
        return out
    raise ValueError(f"rating list {str(path)!r} has no list for {game} {variant}")


def seeded(entrants: Sequence[str]) -> dict[str, int]:
    return {name: i + 1 for i, name in enumerate(entrants)}
