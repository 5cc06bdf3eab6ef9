"""Every table of the pages the arena makes, with long bot names, in chromium at
1400 and 420 px: the HTML report, ratings.html, and the web view's live,
tournament and ratings pages (the real ``arena run --web``).

What a user on a phone needs from a table: the page itself never scrolls
sideways; a table wider than the screen scrolls in its own box, where every
cell can be brought into view (nothing clipped by a box that hides its
overflow, no cell wider than what the row's name leaves of the box); the name
saying whose row it is stays in view while the row scrolls under it; a long
name wraps inside its own cell, in a few lines, never over its neighbours; a
short cell (a result, a score) stays on one line. On a wide screen, the same
tables fit the page: a long name wraps rather than making its table scroll.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import page_at
from test_web_browser import shot, start, stop

BAD_BOT = Path(__file__).with_name("bad_bot.py")
SEVEN = "very-long-entrant-name-from-course-group-seven"
EIGHT = "another-very-long-entrant-name-from-course-group-eight"
NINE = "verylongentrantnamewithoutanyhyphensfromcoursegroupnine"  # nowhere to break
MAX_LINES = 6
"""A cell may be this many lines of its table's text tall (a game's key, which holds
two names in smaller text, may take more of its lines); one word a line took nine."""

# Per page: each table that shows one player a row, and the column of its name.
REPORT = {
    "#standings-table": 1,
    "#search": 0,
    "#roles": 0,
    "#crosstable": 0,
    "#reasons": None,
    "#games": None,
}
RATINGS = {"table.ratings": 1, "table.history": 0, "table.crosstable": 0}
LIVE = {"#live-standings": 1, "#recent": None, "#faults": None}
TOURNAMENT = {
    "#standings-table": 1,
    "#search": 0,
    "#roles": 0,
    "#crosstable": 0,
    "#faults": 0,
    "#reasons": None,
    "#games-paged": None,
}

CHECK = """({tables, wide}) => {
  const bad = [];
  const doc = document.scrollingElement;
  if (doc.scrollWidth > innerWidth)
    bad.push(`the page scrolls sideways: ${doc.scrollWidth} > ${innerWidth}`);
  const box = e => e.getBoundingClientRect();
  const lines = e => {
    const r = document.createRange(); r.selectNodeContents(e);
    const parts = [...r.getClientRects()].filter(x => x.width > 0);
    const tops = new Set(parts.map(x => Math.round(x.top)));
    return {tops: tops.size, rect: r.getBoundingClientRect()};
  };
  for (const [selector, nameColumn] of Object.entries(tables)) {
    const table = document.querySelector(selector);
    if (!table) { bad.push(`${selector}: not on the page`); continue; }
    const t = selector;
    // The box that scrolls it: the nearest ancestor not showing its overflow.
    let wrap = table.parentElement;
    while (wrap && getComputedStyle(wrap).overflowX === "visible") wrap = wrap.parentElement;
    if (!wrap || wrap === document.body || wrap === document.documentElement) {
      bad.push(`${t}: no box of its own scrolls it`);
      continue;
    }
    const ox = getComputedStyle(wrap).overflowX;
    if (ox !== "auto" && ox !== "scroll")
      bad.push(`${t}: its box hides what overflows (overflow-x ${ox})`);
    for (let p = wrap.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if ((o === "hidden" || o === "clip") && box(wrap).right > box(p).right + 1)
        bad.push(`${t}: clipped by ${p.tagName.toLowerCase()}.${p.className} (overflow-x ${o})`);
    }
    if (box(wrap).right > innerWidth + 1) bad.push(`${t}: its box passes the screen's edge`);
    if (wide && wrap.scrollWidth > wrap.clientWidth + 1)
      bad.push(`${t}: scrolls on a wide screen (${wrap.scrollWidth} > ${wrap.clientWidth})`);
    if (table.offsetWidth > wrap.clientWidth + 1 && wrap.scrollWidth <= wrap.clientWidth)
      bad.push(`${t}: wider than its box, which does not scroll`);
    const rows = [...table.rows].filter(r => r.offsetParent !== null && r.cells.length > 1);
    // Scrolled to its right end: every row's name still in view, beside the last column.
    wrap.scrollLeft = wrap.scrollWidth;
    const view = box(wrap);
    for (const row of rows) {
      const cells = [...row.cells].filter(c => getComputedStyle(c).display !== "none");
      const hidden = [...row.cells].filter(c => getComputedStyle(c).display === "none");
      for (const c of hidden)
        if (!c.classList.contains("key")) bad.push(`${t}: a hidden cell "${c.textContent}"`);
      const name = nameColumn === null ? null : row.cells[nameColumn];
      const last = cells[cells.length - 1];
      if (box(last).right > view.right + 1)
        bad.push(`${t}: the last column out of reach ("${last.textContent}")`);
      if (name && row.parentElement.tagName === "TBODY") {
        const n = box(name);
        if (n.left < view.left - 1 || n.right > view.right + 1)
          bad.push(`${t}: scrolled to the end, the name "${name.textContent}" is out of view`);
        else if (box(last).left < n.right - 1) bad.push(`${t}: the name covers the last column`);
      }
      const room = wrap.clientWidth - (name ? box(name).width : 0);
      for (const c of cells) {
        if (c !== name && box(c).width > room + 1)
          bad.push(`${t}: "${c.textContent.slice(0, 30)}" cannot be shown beside its row's name`);
        const text = c.textContent.trim();
        if (!text || c.querySelector("details, button, ul")) continue;
        const {tops, rect} = lines(c);
        const b = box(c);
        if (rect.left < b.left - 1 || rect.right > b.right + 1)
          bad.push(`${t}: "${text.slice(0, 30)}" runs out of its cell`);
        if (text.length <= 8 && tops > 1) bad.push(`${t}: "${text}" is broken over ${tops} lines`);
        const most = ${MAX_LINES} * 1.25 * parseFloat(getComputedStyle(table).fontSize);
        if (rect.height > most)
          bad.push(`${t}: "${text.slice(0, 30)}" is ${Math.round(rect.height)} px tall`);
      }
    }
    wrap.scrollLeft = 0;
  }
  return bad;
}""".replace("${MAX_LINES}", str(MAX_LINES))


def problems(page: Any, tables: dict[str, int | None], width: int) -> list[str]:
    """What :data:`CHECK` finds wrong with ``tables`` on ``page`` (``[]``: nothing)."""
    found: list[str] = page.evaluate(CHECK, {"tables": tables, "wide": width >= 1000})
    return sorted(set(found))


def entrants(*bots: tuple[str, str]) -> str:
    return "".join(f'[[bots]]\nname = "{name}"\ncommand = {command}\n' for name, command in bots)


@pytest.fixture(scope="module")
def long_cup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished round robin of four entrants, three of them with long names
    (one without a hyphen), with its report.html and a ratings.html whose players
    are given the entrants' long names (an aliases file)."""
    root = tmp_path_factory.mktemp("long-cup")
    (root / "cup.toml").write_text(
        'name = "long-names"\nvariant = "single"\ntc = "5+0.05"\ngames_per_pairing = 2\n'
        "concurrency = 2\nseed = 5\n[openings]\nplies = 2\n"
        + entrants(
            (SEVEN, '["builtin:random", "--seed", "1"]'),
            (EIGHT, '"builtin:greedy"'),
            (NINE, '["builtin:random", "--seed", "2"]'),
            ("short", '["builtin:random", "--seed", "3"]'),
        )
    )
    (root / "aliases.toml").write_text(
        "".join(f'"{name} 1" = ["{name}"]\n' for name in (SEVEN, EIGHT, NINE))
    )
    for args in (
        ["run", "cup.toml", "--results", "results", "-q"],
        ["ratings", "results", "--aliases", "aliases.toml"],
    ):
        subprocess.run(
            [sys.executable, "-m", "arena.cli", *args],
            cwd=root,
            check=True,
            capture_output=True,
            timeout=120,
        )
    return root / "results"


@pytest.mark.parametrize("width", [1400, 420])
def test_report_tables_with_long_names(browser, long_cup: Path, width: int, tmp_path: Path) -> None:
    with page_at(browser, width) as (page, errors):
        page.goto((long_cup / "long-names" / "report.html").as_uri())
        shot(page, tmp_path, f"tables-report-{width}.png")
        assert problems(page, REPORT, width) == []
        assert errors == []


@pytest.mark.parametrize("width", [1400, 420])
def test_ratings_tables_with_long_names(
    browser, long_cup: Path, width: int, tmp_path: Path
) -> None:
    with page_at(browser, width) as (page, errors):
        page.goto((long_cup / "ratings.html").as_uri())
        assert page.locator(f"table.ratings tr[data-player='{NINE} 1']").count() == 1
        shot(page, tmp_path, f"tables-ratings-{width}.png")
        assert problems(page, RATINGS, width) == []
        assert errors == []


@pytest.fixture(scope="module")
def live_long(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The web view of a run that stays under way: two random bots with long names
    play their games at once; an entrant that exits at its first move faults
    every game (the faults table); one that never answers keeps the run going."""
    root = tmp_path_factory.mktemp("live-long")
    bad = [sys.executable, str(BAD_BOT)]
    (root / "live.toml").write_text(
        'name = "live-long"\nvariant = "single"\ntc = "900+0"\ngames_per_pairing = 2\n'
        "concurrency = 12\nseed = 3\n"
        + entrants(
            (SEVEN, '"builtin:random"'),
            (EIGHT, str([*bad, "exit"]).replace("'", '"')),
            (NINE, str([*bad, "sleep_each", "600"]).replace("'", '"')),
            ("short", '["builtin:random", "--seed", "3"]'),
        )
    )
    process, url = start(
        [
            "run",
            "live.toml",
            "--results",
            "results",
            "--quiet",
            "--no-report",
            "--web",
            "127.0.0.1:0",
        ],
        root,
    )
    try:
        yield url.removesuffix("live")
    finally:
        stop(process)


READY = (
    "() => document.querySelectorAll('#live-standings tbody tr').length === 4"
    " && document.querySelectorAll('#recent tbody tr').length >= 6"
    " && document.querySelectorAll('#faults tbody tr').length >= 4"
)


@pytest.mark.parametrize("width", [1400, 420])
def test_web_view_tables_with_long_names(
    browser, live_long: str, width: int, tmp_path: Path
) -> None:
    """The live page, the running tournament's page and the ratings page."""
    with page_at(browser, width) as (page, errors):
        page.goto(live_long + "live")
        page.wait_for_function(READY, timeout=60_000)
        shot(page, tmp_path, f"tables-live-{width}.png")
        assert problems(page, LIVE, width) == []
        page.goto(live_long + "t/live-long")
        page.locator("#games-paged tbody tr.game").nth(5).wait_for(timeout=20_000)
        shot(page, tmp_path, f"tables-tournament-{width}.png")
        assert problems(page, TOURNAMENT, width) == []
        page.goto(live_long + "ratings")
        page.locator("table.ratings tbody tr.rated").nth(2).wait_for(timeout=20_000)
        shot(page, tmp_path, f"tables-web-ratings-{width}.png")
        assert problems(page, RATINGS, width) == []
        assert errors == []
