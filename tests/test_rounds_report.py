"""A Swiss's and a knockout's reports: the tie-breaks computed by hand, the bracket
as text and as a picture, checked in chromium at 1400 and 420 px."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
from browser import overflow, page_at

from arena.plan.config import parse_config
from arena.report.rounds import build_rounds
from arena.report.summary import build_report
from arena.storage.rounds import Board, DrawnRound, RoundsRecord
from arena.storage.store import Store
from arena.tournament import Tournament

SHOTS = Path(os.environ["ARENA_SCREENSHOTS"]) if os.environ.get("ARENA_SCREENSHOTS") else None


def run(tmp_path: Path, name: str, top: str, bots: int) -> Path:
    text = f'name = "{name}"\nvariant = "single"\ntc = "5+0.1"\nseed = 2\n{top}\n' + "".join(
        f'[[bots]]\nname = "{kind}-{i}"\ncommand = "builtin:{kind}"\nargs = ["--seed", "{i}"]\n'
        for i in range(bots)
        for kind in ["random" if i % 2 else "greedy"]
    )
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    t = Tournament(parse_config(text, path), text, results_root=tmp_path, config_path=path)
    outcome = trio.run(t.run)
    t.close()
    assert outcome.complete
    return tmp_path / name


@pytest.fixture(scope="module")
def cups(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("cups")
    return {
        "swiss": run(tmp, "swiss", 'format = "swiss"\nconcurrency = 2', 9),
        "knockout": run(tmp, "knockout", 'format = "knockout"\nconcurrency = 2', 8),
    }


def test_tie_breaks_by_hand() -> None:
    """a beats b 2-0, b beats c 1½-½, c beats a 2-0, d has a bye (2 points):
    c 2½, then a and d on 2 points, separated by Buchholz (a met b and c: 4;
    a bye adds nothing), then b 1½."""
    record = RoundsRecord(
        format="swiss",
        entrants=["a", "b", "c", "d"],
        rounds=3,
        bye_points=2.0,
        drawn=[
            DrawnRound(number=1, boards=[Board(a="a", b="b", pair_keys=["r1:a:b"])]),
            DrawnRound(number=2, boards=[Board(a="b", b="c", pair_keys=["r2:b:c"])]),
            DrawnRound(
                number=3,
                boards=[
                    Board(a="c", b="a", pair_keys=["r3:c:a"]),
                    Board(a="d", b=None, winner="d", how="bye"),
                ],
            ),
        ],
    )
    games = {
        "r1:a:b/1": ("a", "b", 1.0),
        "r1:a:b/2": ("b", "a", 0.0),
        "r2:b:c/1": ("b", "c", 1.0),
        "r2:b:c/2": ("c", "b", 0.5),
        "r3:c:a/1": ("c", "a", 1.0),
        "r3:c:a/2": ("a", "c", 0.0),
    }
    section = build_rounds(record, games, {})
    rows = {r.player: r for r in section.swiss}
    assert [r.player for r in section.swiss] == ["c", "a", "d", "b"]
    assert rows["a"].points == 2 and rows["b"].points == 1.5 and rows["c"].points == 2.5
    assert rows["d"].points == 2 and rows["d"].byes == 1 and rows["d"].buchholz == 0
    # Buchholz: a met b (1.5) and c (2.5); S-B: a's game points times each opponent's points.
    assert rows["a"].buchholz == 4 and rows["a"].sonneborn_berger == 2 * 1.5
    assert rows["c"].sonneborn_berger == 0.5 * 1.5 + 2 * 2
    # a and d are tied on points only: Buchholz separates them, no direct encounter needed.
    assert rows["a"].direct is None and rows["a"].rank < rows["d"].rank


def test_markdown_shows_rounds_and_the_bracket(cups: dict[str, Path]) -> None:
    from arena.report.markdown import markdown_report

    with Store.open_existing(cups["swiss"]) as store:
        data = build_report(store, directory=cups["swiss"])
    md = markdown_report(data)
    assert data.rounds is not None and len(data.rounds.rounds) == 6  # ⌈log2 9⌉ + 2
    assert "## Swiss standings" in md and "### Round 6 of 6" in md
    assert sum(r.byes for r in data.rounds.swiss) == 6
    assert all(r.byes <= 1 for r in data.rounds.swiss)
    total = sum(r.points for r in data.rounds.swiss)
    assert total == data.games + 6 * 2  # every game point plus the byes
    with Store.open_existing(cups["knockout"]) as store:
        data = build_report(store, directory=cups["knockout"])
    md = markdown_report(data)
    assert data.rounds is not None and data.rounds.champion
    assert "Round 1 of 3: quarter-finals" in md and f"champion: {data.rounds.champion}" in md


@pytest.mark.parametrize("width", [1400, 420])
def test_swiss_table_and_bracket_in_chromium(
    browser, cups: dict[str, Path], tmp_path: Path, width: int
) -> None:
    from arena.report import write_reports

    for name, directory in cups.items():
        write_reports(directory)
        with page_at(browser, width) as (page, errors):
            page.goto((directory / "report.html").as_uri())
            section = page.locator("#rounds-section")
            assert section.is_visible()
            if name == "swiss":
                assert page.locator("#swiss-table tbody tr").count() == 9
                assert page.locator("#rounds-table tbody tr").count() == 6
            else:
                assert page.locator("svg.bracket g.match").count() == 7
                champion = page.locator("#champion").inner_text()
                final = page.locator('svg.bracket g.match[data-round="3"]')
                assert final.get_attribute("data-winner") == champion
            assert overflow(page)["wide"] == []
            assert errors == []
            top, bottom = page.evaluate(
                """(sel) => {
                const y = window.scrollY;
                const a = document.querySelector('#rounds-section').getBoundingClientRect();
                const b = document.querySelector(sel).getBoundingClientRect();
                return [a.top + y - 10, b.bottom + y + 20];
            }""",
                "#swiss-table" if name == "swiss" else "svg.bracket",
            )
            for folder in (tmp_path, SHOTS):
                if folder is not None:
                    folder.mkdir(parents=True, exist_ok=True)
                    page.screenshot(
                        path=str(folder / f"{name}-{width}.png"),
                        full_page=True,
                        clip={"x": 0, "y": top, "width": width, "height": bottom - top},
                    )


async def test_the_web_view_shows_the_rounds(cups: dict[str, Path]) -> None:
    """``arena serve``'s tournament page holds the same rounds section as the report."""
    import httpx

    from arena.web.app import Site, find_tournaments
    from arena.web.server import parse_listen, serve

    site = Site(find_tournaments([cups["swiss"].parent]))
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, site, parse_listen("127.0.0.1:0"))
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                swiss = await client.get("/t/swiss")
                knockout = await client.get("/t/knockout")
            nursery.cancel_scope.cancel()
    assert swiss.status_code == 200 and 'id="swiss-table"' in swiss.text
    assert swiss.text.count('class="swiss-row"') == 9
    assert knockout.status_code == 200 and 'class="bracket"' in knockout.text
    assert knockout.text.count('<g class="match"') == 7


def test_the_live_page_shows_the_round_and_the_bracket(browser, tmp_path: Path) -> None:
    """``arena run --web``: while a knockout of slow bots plays, the live page shows
    round N of M, the round's pairings and the bracket."""
    import subprocess
    import sys

    bot = Path(__file__).with_name("bad_bot.py")
    names = ["a", "b", "c", "d", "e"]
    toml = tmp_path / "live.toml"
    toml.write_text(
        'name = "live"\nvariant = "single"\ntc = "30+0"\nformat = "knockout"\nconcurrency = 2\n'
        + "".join(
            f'[[bots]]\nname = "{n}"\ncommand = ["{sys.executable}", "{bot}", "sleep_each", '
            '"0.02"]\n'
            for n in names
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(toml), "--results", str(tmp_path)]
        + ["--quiet", "--no-report", "--web", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        url = next(
            line.split(": ", 1)[1].strip()
            for line in process.stderr
            if line.startswith("web view: ")
        )
        for width in (1400, 420):
            with page_at(browser, width) as (page, errors):
                page.goto(url)
                page.wait_for_function(
                    "() => !document.getElementById('live-rounds').hidden", timeout=60_000
                )
                title = page.locator("#round-title").inner_text()
                assert title.startswith("Round ") and " of 3 (" in title
                assert page.locator("#round-boards li").count() >= 1
                assert page.locator("#live-bracket svg.bracket g.match").count() == 7
                # Drawn as SVG (in its namespace, boxes of their size), not as text.
                assert page.evaluate(
                    "() => { const g = document.querySelector('#live-bracket g.match rect');"
                    " return g.namespaceURI === 'http://www.w3.org/2000/svg'"
                    " && g.getBBox().width > 100; }"
                )
                assert overflow(page)["wide"] == []
                assert errors == []
                for folder in (tmp_path, SHOTS):
                    if folder is not None:
                        folder.mkdir(parents=True, exist_ok=True)
                        page.screenshot(path=str(folder / f"live-knockout-{width}.png"))
    finally:
        process.terminate()
        process.wait(30)


def test_the_round_being_played() -> None:
    """A knockout's round 1 with a tied match waiting for its extra pair is still the
    round being played: the later rounds' sides are not known yet."""
    record = RoundsRecord(
        format="knockout",
        entrants=["a", "b", "c", "d"],
        rounds=2,
        pairs=1,
        extra_pairs=1,
        drawn=[
            DrawnRound(
                number=1,
                boards=[
                    Board(a="a", b="d", pair_keys=["r1m1.1:a:d"], winner="a"),
                    Board(a="b", b="c", pair_keys=["r1m2.1:b:c"]),
                ],
            ),
            DrawnRound(number=2, boards=[Board(a=None, b=None)]),
        ],
    )
    games = {
        "r1m1.1:a:d/1": ("a", "d", 1.0),
        "r1m1.1:a:d/2": ("d", "a", 0.0),
        "r1m2.1:b:c/1": ("b", "c", 0.5),
        "r1m2.1:b:c/2": ("c", "b", 0.5),
    }
    section = build_rounds(record, games, {})
    assert section.current == 1
    from arena.web.rounds import rounds_payload

    payload = rounds_payload(section)
    assert payload is not None and payload["title"] == "Round 1 of 2 (semi-finals)"
    assert payload["boards"] == ["[1] a 2–0 [4] d → a", "[2] b 1–1 [3] c"]


def test_names_from_a_received_rounds_file_are_data() -> None:
    """A results folder from elsewhere may hold any name in rounds.json: the Markdown
    keeps it on its line and inert, the bracket picture escapes it."""
    from arena.report.bracket import bracket_svg
    from arena.report.rounds_text import markdown_rounds

    bad = "x|<script>alert(1)</script>\n# head`"
    for fmt_ in ("swiss", "knockout"):
        record = RoundsRecord(
            format=fmt_,
            entrants=[bad, "b"],
            rounds=1,
            drawn=[DrawnRound(number=1, boards=[Board(a=bad, b="b", pair_keys=["r1:k"])])],
            champion=bad if fmt_ == "knockout" else None,
        )
        section = build_rounds(record, {"r1:k/1": (bad, "b", 1.0)}, {})
        lines = markdown_rounds(section)
        assert not any(line.startswith("# head") for line in lines)
        # Inline text escapes the name; inside the bracket's fence it is plain text,
        # which cannot end the fence (it never starts a line).
        fenced = lines.index("```text") if "```text" in lines else len(lines)
        assert all("<script>" not in line for line in lines[:fenced])
        assert sum(line.startswith("```") for line in lines) in (0, 2)
        table = [line for line in lines if line.startswith("| 1 ")]
        if fmt_ == "swiss":
            assert table and table[0].count(" | ") == 8  # nine cells: no extra column
        svg = bracket_svg(section)
        assert "<script>" not in svg
