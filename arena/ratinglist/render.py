"""The rating list as a terminal table, ratings.md, ratings.html, JSON and CSV.

The terminal table follows ``arena report``: rich on a terminal, plain padded
columns through a pipe. The HTML reuses the report's ratings plot and styles;
its sections are macros (``templates/ratings_sections.html.j2``) that the web
view's ratings page renders too.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import jinja2
from rich.console import Console

from arena.ratinglist.fit import RatingList, RatingTable, Row
from arena.report import fmt
from arena.report.fmt import md_text
from arena.report.plots import rating_plot_svg
from arena.report.terminal import RIGHT, plain_table, rated_table, text_console
from arena.storage.safefile import write_atomic

__all__ = [
    "HEADERS",
    "HTML_NAME",
    "MARKDOWN_NAME",
    "crosstable_players",
    "environment",
    "history_svg",
    "print_list",
    "rating_plot",
    "to_csv",
    "to_json",
    "write_files",
]

MARKDOWN_NAME = "ratings.md"
HTML_NAME = "ratings.html"
HEADERS = [*fmt.RATED_HEADERS, "tournaments", "last played"]
CROSS_PLAYERS = 30
"""The crosstable shows the best this many players of a list (all in JSON)."""
_RIGHT = RIGHT | {"tournaments"}
SPARE = ["LOS next", "tournaments", "last played"]
"""Left out on a narrow terminal, the last first (ratings.md has every column)."""


def cells(r: Row) -> list[str]:
    return [*fmt.rated_cells(r), str(len(r.tournaments)), r.last_played or fmt.DASH]


def _title(t: RatingTable) -> str:
    anchor = f", {t.anchor[0]} fixed at {t.anchor[1]:g}" if t.anchor else ""
    return f"{t.name}: {len(t.rows)} players, {t.games} games{anchor}"


def _first_move(t: RatingTable) -> str:
    if t.first_move is None:
        return "First-move advantage: –"
    value = fmt.elo(t.first_move, signed=True)
    return f"First-move advantage: {value} Elo {fmt.error(t.first_move_error)}"


def print_list(data: RatingList, console: Console | None = None) -> None:
    console = console or text_console()
    for note in data.notes:
        console.print(note, markup=False, emoji=False, highlight=False, soft_wrap=True)
    for t in data.tables:
        rows = [cells(r) for r in t.rows]
        if console.is_terminal:
            console.print(rated_table(_title(t), HEADERS, rows, _RIGHT, SPARE))
            console.print(_first_move(t), markup=False, emoji=False, highlight=False)
            continue
        lines = [_title(t), *plain_table(HEADERS, rows, _RIGHT), _first_move(t)]
        for line in lines:
            console.print(line, markup=False, emoji=False, highlight=False, soft_wrap=True)


def to_json(data: RatingList) -> str:
    out: dict[str, Any] = {"notes": data.notes, "lists": []}
    for t in data.tables:
        out["lists"].append(
            {
                "game": t.game,
                "variant": t.variant,
                "games": t.games,
                "first_move": t.first_move,
                "first_move_error": t.first_move_error,
                "anchor": list(t.anchor) if t.anchor else None,
                "players": [
                    {
                        "rank": r.rank,
                        "player": r.player,
                        "elo": r.rating,
                        "error": r.error,
                        "games": r.games,
                        "wins": r.wins,
                        "losses": r.losses,
                        "draws": r.draws,
                        "los_next": r.los_next,
                        "tournaments": list(r.tournaments),
                        "last_played": r.last_played,
                    }
                    for r in t.rows
                ],
                "history": {
                    "points": [{"tournament": a, "date": b} for a, b in t.history_points],
                    "players": {
                        p: [None if v is None else {"elo": v[0], "error": v[1]} for v in vs]
                        for p, vs in t.history.items()
                    },
                },
                "crosstable": [
                    {"row": a, "column": b, "points": pg[0], "games": pg[1]}
                    for (a, b), pg in sorted(t.crosstable.items())
                ],
            }
        )
    return json.dumps(out, indent=1, ensure_ascii=False)


def to_csv(data: RatingList) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        [
            "list",
            "rank",
            "player",
            "elo",
            "error",
            "games",
            "wins",
            "losses",
            "draws",
            "los_next",
            "tournaments",
            "last_played",
        ]
    )
    for t in data.tables:
        for r in t.rows:
            w.writerow(
                [
                    t.name,
                    r.rank,
                    r.player,
                    "" if r.rating is None else f"{r.rating:.2f}",
                    "" if r.error is None else f"{r.error:.2f}",
                    r.games,
                    r.wins,
                    r.losses,
                    r.draws,
                    "" if r.los_next is None else f"{r.los_next:.4f}",
                    len(r.tournaments),
                    r.last_played,
                ]
            )
    return buf.getvalue()


def rating_plot(t: RatingTable) -> str:
    """The report's own ratings plot, of this list's rows."""
    return rating_plot_svg(t.rows)


PALETTE = (
    "#2f6fd6",
    "#d63a2f",
    "#2a9d4b",
    "#9b59b6",
    "#e08e0b",
    "#17a2b8",
    "#6c757d",
    "#c2185b",
    "#795548",
    "#3f51b5",
)
DASHES = ("", "6 3", "2 3")
"""Line styles beside the colours: every line drawn has a style of its own, which
its legend entry repeats."""
HISTORY_LINES = len(PALETTE) * len(DASHES)
"""The history plot draws the best this many players, each with its legend entry
(the table has them all; the plot says when it leaves some out)."""
LEGEND_ROW = 18


def history_svg(t: RatingTable, players: Sequence[str] | None = None) -> str:
    """Each player's rating after each history point, as lines (best players first),
    with a legend entry for every line: the legend column is as tall as it needs."""
    chosen = list(players) if players is not None else [r.player for r in t.rows[:HISTORY_LINES]]
    chosen = [p for p in chosen if any(v is not None for v in t.history.get(p, []))]
    values = [v[0] for p in chosen for v in t.history.get(p, []) if v is not None]
    if not values or not t.history_points:
        return ""
    low, high = min(values), max(values)
    if high - low < 1.0:
        low, high = low - 50.0, high + 50.0
    pad = (high - low) * 0.08
    low, high = low - pad, high + pad
    left, width, top, height = 50, 520, 12, 220
    count = len(t.history_points)

    def x(i: int) -> float:
        return round(left + (i / max(count - 1, 1)) * width, 1)

    def y(v: float) -> float:
        return round(top + (high - v) / (high - low) * height, 1)

    left_out = len(t.rows) - len(chosen) if players is None else 0
    legend_rows = len(chosen) + (1 if left_out > 0 else 0)
    total_w = left + width + 180
    total_h = max(top + height + 40, top + LEGEND_ROW * legend_rows + 8)
    parts = [
        f'<svg class="history-plot" viewBox="0 0 {total_w} {total_h}" '
        f'width="{total_w}" height="{total_h}" role="img" '
        f'aria-label="rating after each tournament">'
    ]
    step = (high - low) / 4
    for k in range(5):
        v = low + k * step
        parts.append(
            f'<line x1="{left}" y1="{y(v)}" x2="{left + width}" y2="{y(v)}" stroke="#ddd"/>'
            f'<text x="{left - 6}" y="{y(v) + 4}" text-anchor="end" font-size="11">{v:.0f}</text>'
        )
    parts.append(
        f'<text x="{left + width / 2}" y="{top + height + 30}" text-anchor="middle" '
        f'font-size="11">after each tournament (1–{count})</text>'
    )
    for n, p in enumerate(chosen):
        colour = PALETTE[n % len(PALETTE)]
        dash = DASHES[n // len(PALETTE) % len(DASHES)]
        style = f'stroke="{colour}" stroke-width="2"' + (
            f' stroke-dasharray="{dash}"' if dash else ""
        )
        pts = [(x(i), y(v[0])) for i, v in enumerate(t.history.get(p, [])) if v is not None]
        path = " ".join(f"{a},{b}" for a, b in pts)
        parts.append(
            f'<g class="history-line" data-player="{escape(p)}" data-points="{len(pts)}" '
            f'data-style="{colour} {dash}">'
            f"<title>{escape(p)}</title>"
            f'<polyline points="{path}" fill="none" {style}/>'
            + "".join(f'<circle cx="{a}" cy="{b}" r="3" fill="{colour}"/>' for a, b in pts)
            + "</g>"
        )
        ly = top + 10 + LEGEND_ROW * n
        label = p if len(p) <= 24 else p[:23] + "…"
        parts.append(
            f'<g class="legend" data-player="{escape(p)}"><title>{escape(p)}</title>'
            f'<line x1="{left + width + 8}" y1="{ly - 3}" x2="{left + width + 26}" '
            f'y2="{ly - 3}" {style}/>'
            f'<text x="{left + width + 30}" y="{ly + 1}" font-size="11">{escape(label)}</text></g>'
        )
    if left_out > 0:
        ly = top + 10 + LEGEND_ROW * len(chosen)
        parts.append(
            f'<text class="left-out" x="{left + width + 8}" y="{ly + 1}" font-size="11" '
            f'fill="#666">and {left_out} more (the table)</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def crosstable_players(t: RatingTable) -> list[str]:
    return [r.player for r in t.rows[:CROSS_PLAYERS]]


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [
                jinja2.PackageLoader("arena.ratinglist", "templates"),
                jinja2.PackageLoader("arena.report", "templates"),
            ]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


def page_context(data: RatingList, link: str | None = None) -> dict[str, Any]:
    """What the sections need: each list with its plots (``link``: a player page's
    address with ``{player}``, on the web view)."""
    return {
        "data": data,
        "fmt": fmt,
        "cells": cells,
        "headers": HEADERS,
        "plots": {t.slug: rating_plot(t) for t in data.tables},
        "histories": {t.slug: history_svg(t) for t in data.tables},
        "cross": {t.slug: crosstable_players(t) for t in data.tables},
        "link": link,
    }


def _markdown(data: RatingList) -> str:
    out = ["# Rating list", ""]
    # Names, notes and titles come from stores (their senders'): shown literally.
    out += [f"- {md_text(n)}" for n in data.notes] + ([""] if data.notes else [])
    out.append(
        "Joint Bradley–Terry fit with a first-move advantage per game and match kind "
        "(the tournament report's model); ± is the 95 % interval, LOS the likelihood "
        "of superiority over the next-ranked player."
    )
    for t in data.tables:
        out += [
            "",
            f"## {md_text(_title(t))}",
            "",
            "| " + " | ".join(HEADERS) + " |",
            "|" + "|".join("---:" if h in _RIGHT else "---" for h in HEADERS) + "|",
        ]
        out += ["| " + " | ".join(md_text(c) for c in cells(r)) + " |" for r in t.rows]
        out += ["", _first_move(t), "", "### History", ""]
        heads = ["player", *(f"{i + 1}. {name}" for i, (name, _) in enumerate(t.history_points))]
        out += [
            "| " + " | ".join(md_text(h) for h in heads) + " |",
            "|" + "|".join(["---"] + ["---:"] * len(t.history_points)) + "|",
        ]
        for r in t.rows:
            vals = [fmt.DASH if v is None else fmt.elo(v[0]) for v in t.history.get(r.player, [])]
            out.append("| " + " | ".join([md_text(r.player), *vals]) + " |")
        players = crosstable_players(t)
        out += [
            "",
            "### Head to head",
            "",
            "| | " + " | ".join(md_text(p) for p in players) + " |",
            "|---|" + "---:|" * len(players),
        ]
        for a in players:
            row = []
            for b in players:
                cell = t.crosstable.get((a, b))
                row.append(
                    "·" if a == b else "" if cell is None else f"{fmt.points(cell[0])}/{cell[1]}"
                )
            out.append(f"| {md_text(a)} | " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def _atomic(path: Path, text: str) -> None:
    write_atomic(path, text)


def write_files(data: RatingList, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ratings.md and ratings.html into ``out_dir`` (never into a store)."""
    from arena.report.html import asset

    out = Path(out_dir)
    md, html = out / MARKDOWN_NAME, out / HTML_NAME
    _atomic(md, _markdown(data))
    page = (
        environment()
        .get_template("ratings.html.j2")
        .render(css=asset("report.css"), **page_context(data))
    )
    _atomic(html, page)
    return md, html
