"""The Analysis section and the marked replays in chromium, at 1,400 and 420 px:
in report.html and in ``arena serve``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser import overflow, page_at
from test_analysis import BLUNDER, blunder_tournament
from test_web_browser import start, stop

SHOTS = Path(os.environ["ARENA_SCREENSHOTS"]) if os.environ.get("ARENA_SCREENSHOTS") else None


def shot(page, folder: Path, name: str) -> None:  # noqa: ANN001
    for where in (folder, SHOTS):
        if where is not None:
            where.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(where / name), full_page=True)


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The blunder tournament of test_analysis.py, played and analysed."""
    return blunder_tournament(tmp_path_factory.mktemp("analysed"))


def check_blunder_replay(page, viewer) -> None:  # noqa: ANN001
    """The replay marks the blunder (the first move, also the decisive one) and
    shows the solver's value of each position."""
    first = viewer.locator("ol.moves li").first
    first.wait_for(timeout=20_000)
    assert "blunder" in first.get_attribute("class")
    assert "decisive" in first.get_attribute("class")
    assert BLUNDER in first.inner_text() and "g1-g4 wins" in first.inner_text()
    status = viewer.locator(".status")
    assert "solver: black wins the round in 5 plies" in status.inner_text()  # the opening
    first.click()
    assert viewer.get_attribute("data-ply") == "1"
    text = status.inner_text()
    assert "decisive, blunder" in text and "solver: gold wins the round in 1 ply" in text


@pytest.mark.parametrize("width", [1400, 420])
def test_report_html_shows_the_analysis(
    browser, analysed: Path, tmp_path: Path, width: int
) -> None:
    with page_at(browser, width) as (page, errors):
        page.goto((analysed / "report.html").as_uri())
        rows = page.locator("#analysis-table tr.bot-analysis")
        assert rows.count() == 2
        scripted = page.locator("#analysis-table tr[data-player=scripted]")
        assert scripted.get_attribute("data-blunders") == "1"
        assert (
            page.locator("#analysis-table tr[data-player=alphabeta]").get_attribute("data-blunders")
            == "0"
        )
        assert "A blunder is a move that turned" in page.locator("p.definitions").inner_text()
        page.locator("#analysis-section").scroll_into_view_if_needed()
        shot(page, tmp_path, f"analysis-{width}.png")
        page.check("input[data-filter=blunder]")
        shown = page.locator("tbody.game-group:not([hidden])")
        assert shown.count() == 1
        assert "1 blunder" in shown.locator("td.analysis").inner_text()
        shown.locator("button.open").click()
        check_blunder_replay(page, shown.locator(".viewer"))
        shot(page, tmp_path, f"analysis-replay-{width}.png")
        page.uncheck("input[data-filter=blunder]")
        assert page.locator("tbody.game-group:not([hidden])").count() == 2
        assert overflow(page)["wide"] == []
        assert errors == []


def test_arena_serve_shows_the_analysis(browser, analysed: Path, tmp_path: Path) -> None:
    process, url = start(["serve", str(analysed), "--listen", "127.0.0.1:0"], tmp_path)
    try:
        for width in (1400, 420):
            with page_at(browser, width) as (page, errors):
                page.goto(url + "t/blunder")
                page.wait_for_function(
                    "() => document.getElementById('page-info').dataset.total === '2'",
                    timeout=20_000,
                )
                assert page.locator("#analysis-table tr.bot-analysis").count() == 2
                page.check("input[name=blunder]")
                page.wait_for_function(
                    "() => document.getElementById('page-info').dataset.total === '1'",
                    timeout=20_000,
                )
                row = page.locator("#games-paged tbody tr.game").first
                assert row.locator("td.analysis").inner_text() == "1 blunder"
                row.locator("button.open").click()
                check_blunder_replay(page, page.locator(".viewer"))
                shot(page, tmp_path, f"serve-analysis-{width}.png")
                assert overflow(page)["wide"] == []
                assert errors == []
    finally:
        stop(process)
