"""The rating list in the web view, in chromium against the real ``arena serve``: the
list, its plots and a player's page with its games across tournaments."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser import overflow, page_at
from test_ratinglist import tournament
from test_web_browser import shot, start, stop

from arena.ratinglist.fit import build_list


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served")
    tournament(
        root,
        "cup-b",
        [("random-x", "builtin:random --seed 6"), ("greedy", "builtin:greedy")],
        seed=2,
        games=4,
    )
    tournament(
        root,
        "cup-c",
        [
            ("rando", "builtin:random --seed 7"),
            ("g", "builtin:greedy"),
            ("r2", "builtin:random --seed 8"),
        ],
        seed=3,
        games=2,
    )
    return root / "results"


def test_ratings_page_plots_and_a_players_games(browser, tmp_path: Path, served: Path) -> None:
    expected = build_list([served], cache_dir=None).tables[0]
    process, url = start(["serve", str(served), "--listen", "127.0.0.1:0"], tmp_path)
    try:
        for width in (1400, 420):
            with page_at(browser, width) as (page, errors):
                page.goto(url)
                page.click("a[href='/ratings']")
                rows = page.locator("table.ratings tbody tr.rated")
                rows.first.wait_for(timeout=20_000)
                assert rows.count() == len(expected.rows)
                shown = [r.get_attribute("data-player") for r in rows.all()]
                assert shown == [r.player for r in expected.rows]
                for r, want in zip(rows.all(), expected.rows, strict=True):
                    assert float(r.get_attribute("data-rating")) == pytest.approx(
                        want.rating, abs=1e-3
                    )
                assert page.locator("svg.rating-plot g.rating-row").count() == len(expected.rows)
                assert page.locator("svg.history-plot g.history-line").count() >= 2
                shot(page, tmp_path, f"ratings-{width}.png")
                assert overflow(page)["wide"] == []
                # A player's page: its games in both tournaments, then a replay.
                page.locator("table.ratings tbody tr.rated[data-player='greedy 1'] a").click()
                page.wait_for_function(
                    "() => document.getElementById('page-info').dataset.total === "
                    f"'{expected.row('greedy 1').games}'",
                    timeout=20_000,
                )
                games = page.locator("#games-paged tbody tr.game")
                tours = {g.get_attribute("data-tournament") for g in games.all()}
                assert tours == {"cup-b", "cup-c"}
                assert page.locator("svg.history-plot g.history-line").count() == 1
                games.first.locator("button.open").click()
                page.locator(".viewer svg.board").wait_for(timeout=20_000)
                shot(page, tmp_path, f"player-{width}.png")
                assert overflow(page)["wide"] == []
                assert errors == []
    finally:
        stop(process)
