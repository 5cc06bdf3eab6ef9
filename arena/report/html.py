"""``report.html``: one self-contained page with tables, a ratings plot and replays.

Self-contained because a report is archived, mailed and opened offline: CSS,
JavaScript and SVG are inline and nothing is fetched. The page is a Jinja2
template shipped as package data (``templates/report.html.j2``) and rendered
as a stream, so a tournament of thousands of games is never one string in
memory. Each game's replay is a ``<script type="application/json">`` block that
the browser parses only when the game is opened.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from functools import cache
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2

from arena.games import GameError, get_game
from arena.match.record import GameRecord
from arena.report import fmt
from arena.report.markdown import omitted_note
from arena.report.plots import rating_plot_svg
from arena.report.replay import replay_json
from arena.report.summary import GameRow, ReportData
from arena.storage.safefile import atomic_file

__all__ = [
    "asset",
    "embed_json",
    "environment",
    "picture_assets",
    "section_context",
    "write_html",
]

TEMPLATE = "report.html.j2"
"""The page; its sections are macros in ``sections.html.j2`` for other pages to reuse."""


@cache
def asset(name: str) -> str:
    """A static file shipped beside the templates (``report.css``, ``replay.js``),
    inlined as it is rather than parsed as a template."""
    return files("arena.report").joinpath("templates", name).read_text(encoding="utf-8")


def embed_json(value: Any) -> str:
    """Compact JSON safe inside ``<script>``: ``<`` is escaped so no ``</script>`` in
    a bot's name or detail text can end the block early."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("arena.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def _games(
    data: ReportData, records: Iterable[tuple[str, GameRecord]]
) -> Iterator[tuple[GameRow, str]]:
    """Each listed game with its replay JSON, computed as the page is written."""
    by_key = {row.key: row for row in data.game_list}
    analysis = data.analysis
    for key, record in records:
        row = by_key.get(key)
        if row is not None:
            replay = replay_json(record)
            if analysis is not None and key in analysis.marks:
                replay["an"] = analysis.marks[key].replay_json(analysis.solves)
            yield row, embed_json(replay)


def picture_assets(games: Iterable[str]) -> dict[str, str]:
    """What a page needs to draw the replays and boards of ``games`` in the browser
    (``arena.games.show.PageAssets``), in the order given: ``pictures``, each game's
    ``<template>`` elements and JSON data blocks; ``picture_script``, their scripts,
    to follow replay.js; ``picture_css``. A game drawn as text needs none."""
    blocks: list[str] = []
    scripts: list[str] = []
    css: list[str] = []
    for name in games:
        try:
            page = get_game(name).show().page()
        except GameError:
            continue  # a record of a game not installed here: its replay says so
        if page is None:
            continue
        for ident, content in page.templates.items():
            blocks.append(f'<template id="{escape(ident)}">{content}</template>')
        for ident, value in page.data.items():
            blocks.append(
                f'<script type="application/json" id="{escape(ident)}">{embed_json(value)}</script>'
            )
        scripts.append(page.script)
        css.append(page.css)
    return {
        "pictures": "\n".join(blocks),
        "picture_script": "\n".join(scripts),
        "picture_css": "".join(css),
    }


def section_context(data: ReportData) -> dict[str, object]:
    """What the section macros (sections.html.j2) need beside ``data``: the rating
    plot and each bot's fault total. Shared by report.html and the web view."""
    fault_bots: dict[str, int] = {}
    for (bot, _), n in data.faults.items():
        fault_bots[bot] = fault_bots.get(bot, 0) + n
    from arena.report import rounds_text
    from arena.report.bracket import bracket_svg

    return {
        "rating_plot": rating_plot_svg(data.standings),
        "fault_bots": fault_bots,
        "rounds_text": rounds_text,
        "bracket": "" if data.rounds is None else bracket_svg(data.rounds),
    }


def write_html(
    data: ReportData, records: Iterable[tuple[str, GameRecord]], path: str | os.PathLike[str]
) -> Path:
    """Render the report for ``data`` with replays of ``records`` (``(key, record)``
    pairs, as ``Store.items`` gives them) into ``path``, atomically."""
    path = Path(path)
    template = environment().get_template(TEMPLATE)
    pictures = picture_assets(data.game_names)
    stream = template.stream(
        data=data,
        fmt=fmt,
        **section_context(data),
        games=_games(data, records),
        omitted_note=omitted_note(data, code=""),
        pictures=pictures["pictures"],
        picture_script=pictures["picture_script"],
        css=asset("report.css") + pictures["picture_css"],
        script=asset("replay.js"),
    )
    with atomic_file(path) as f:
        f.writelines(stream)  # what stream.dump(f) does, which jinja2 types as bytes only
    return path
