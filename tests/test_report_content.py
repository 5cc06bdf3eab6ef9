"""What the reports tell a bot author: the bots' own search figures (``info``),
round scores, fault details with the stderr tail, and the Sekigahara battle in
its own terms (impacts, casualties, attacker and defender).

The Kamisado tournament is real (``arena run`` with the info-reporting test bot
as a subprocess); the others are stored records played through the rules core.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import sys
from pathlib import Path

import msgspec
import pytest
from rich.console import Console
from test_report import markdown_table, parse_html, play_random

from arena.games import get_game
from arena.games.sekigahara.show import battle_frame
from arena.match.record import CRASH, GameRecord
from arena.report import HTML_NAME, MARKDOWN_NAME, fmt, print_standings, write_reports
from arena.report.fmt import md_text
from arena.report.replay import decode_frames, game_view
from arena.storage.store import Store

INFO_BOT = Path(__file__).parent / "info_bot.py"
SHOTS = Path(os.environ["ARENA_SCREENSHOTS"]) if os.environ.get("ARENA_SCREENSHOTS") else None


@pytest.fixture(scope="module")
def info_cup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two games of the info bot against random in a standard (multi-round) match."""
    from click.testing import CliRunner

    from arena.cli import main

    root = tmp_path_factory.mktemp("info")
    toml = root / "info.toml"
    toml.write_text(
        'name = "infocup"\nvariant = "standard"\ntc = "10+0.1"\ngames_per_pairing = 2\n'
        "seed = 3\nconcurrency = 2\n[openings]\nplies = 2\n"
        f'[[bots]]\nname = "info"\ncommand = "{sys.executable} {INFO_BOT}"\n'
        '[[bots]]\nname = "random"\ncommand = "builtin:random"\nargs = ["--seed", "2"]\n'
    )
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(root), "-q"])
    assert result.exit_code == 0, result.output
    return root / "infocup"


def build_report_for(directory: Path):  # noqa: ANN201
    from arena.report.summary import build_report

    with Store.open_existing(directory) as store:
        return build_report(store)


def _records(directory: Path) -> list[tuple[str, GameRecord]]:
    with Store.open_existing(directory) as store:
        return list(store.items())


def test_info_figures_appear_in_markdown_and_html(info_cup: Path) -> None:
    records = _records(info_cup)
    moves = [
        a for _, r in records for a in r.actions if r.players[a.player] == "info" and not a.forced
    ]
    assert moves and all(a.info for a in moves)
    depth = sum(a.info["depth"] for a in moves) / len(moves)
    last = moves[-1].info
    # Markdown: the search table, from the same records.
    text = (info_cup / MARKDOWN_NAME).read_text(encoding="utf-8")
    rows = {row[0]: row for row in markdown_table(text, "Search")}
    assert rows["info"][1] == str(len(moves))
    # CPU/move beside time/move: the mean of the CPU time each action's record holds
    cpu = [a.cpu_ms for a in moves if a.cpu_ms is not None]
    assert rows["info"][3] == (fmt.millis(sum(cpu) / len(cpu)) if cpu else "–")
    assert rows["info"][4] == str(len(moves))
    assert rows["info"][5] == f"{depth:.1f}"
    thinking = sum(a.ms for a in moves)
    speed = 1000 * sum(a.info["nodes"] for a in moves) / thinking if thinking else None
    assert rows["info"][6] == fmt.count(speed)
    assert rows["info"][7] == "–"  # no playouts: not a Monte-Carlo bot
    assert f"depth {last['depth']}" in rows["info"][8]
    assert f"score {last['score']:+g}" in rows["info"][8]
    assert "pv " + " ".join(last["pv"]) in rows["info"][8]
    assert rows["random"][4] == "0" and rows["random"][5] == "–"
    # The terminal: the search figures under the standings, plain through a pipe.
    out = io.StringIO()
    print_standings(build_report_for(info_cup), Console(file=out, width=60))
    lines = out.getvalue().splitlines()
    search = lines[lines.index("search (from info lines):") + 1 :]
    assert search[0].split()[:2] == ["player", "moves"]
    info_row = next(line.split() for line in search if line.startswith("info "))
    assert info_row[1] == str(len(moves)) and info_row[-3] == f"{depth:.1f}"
    # HTML: the same table as data, and every move's depth, score and PV in the replay.
    html = parse_html(info_cup / HTML_NAME)
    stats = {a["data-player"]: a for a in html.with_class("tr", "bot-stats")}
    assert float(stats["info"]["data-depth"]) == pytest.approx(depth, abs=1e-3)
    assert stats["random"]["data-depth"] == ""
    for index, (_, record) in enumerate(records, start=1):
        replay = json.loads(html.scripts[f"replay-{index}"])
        for entry, action in zip(replay["a"], record.actions, strict=True):
            if record.players[action.player] == "info" and not action.forced:
                depth_, score, pv = (entry[4][k] for k in ("depth", "score", "pv"))
                assert (depth_, score, pv) == (
                    action.info["depth"],
                    action.info["score"],
                    action.info["pv"],
                )
            else:
                assert len(entry) <= 4


def test_a_monte_carlo_bots_playouts_get_their_own_column(tmp_path: Path) -> None:
    """protocol.md §7: a bot that sends ``playouts`` (not ``nodes``) is shown in
    playouts/s, and a tree searcher in nodes/s, each with a dash in the other."""
    rng = random.Random(8)
    records = [play_random("kamisado", "standard", ("mc", "ab"), rng) for _ in range(2)]
    sent: dict[str, list[tuple[int, int]]] = {"mc": [], "ab": []}
    for record in records:
        for i, action in enumerate(record.actions):
            if action.forced:
                continue
            name = record.players[action.player]
            count = rng.randint(100, 5000)
            key = "playouts" if name == "mc" else "nodes"
            info = {"depth": 2, "score": 10, "pv": [action.action, "x"], key: count}
            record.actions[i] = msgspec.structs.replace(action, info=info)
            sent[name].append((count, action.ms))
    with Store.open(tmp_path, name="mc", config_text="", fingerprint="f") as store:
        for i, record in enumerate(records):
            store.add_game(f"g{i}", f"p{i}", record)
    write_reports(tmp_path)
    speed = {n: 1000 * sum(c for c, _ in s) / sum(ms for _, ms in s) for n, s in sent.items()}
    text = (tmp_path / MARKDOWN_NAME).read_text(encoding="utf-8")
    header = text.split("## Search\n", 1)[1].split("\n\n", 2)[1].splitlines()[0]
    assert "| avg depth | nodes/s | playouts/s | last info |" in header
    assert "playouts per second" in text
    rows = {row[0]: row for row in markdown_table(text, "Search")}
    assert rows["mc"][6:8] == ["–", fmt.count(speed["mc"])]
    assert rows["ab"][6:8] == [fmt.count(speed["ab"]), "–"]
    out = io.StringIO()
    print_standings(build_report_for(tmp_path), Console(file=out, width=60))
    lines = out.getvalue().splitlines()
    search = lines[lines.index("search (from info lines):") + 1 :]
    assert search[0].split()[-2:] == ["nodes/s", "playouts/s"]
    mc = next(line.split() for line in search if line.startswith("mc "))
    assert mc[-2:] == ["–", fmt.count(speed["mc"])]
    html = parse_html(tmp_path / HTML_NAME)
    stats = {a["data-player"]: a for a in html.with_class("tr", "bot-stats")}
    assert float(stats["mc"]["data-playouts-per-s"]) == pytest.approx(speed["mc"], abs=0.1)
    assert stats["mc"]["data-nodes-per-s"] == "" and stats["ab"]["data-playouts-per-s"] == ""


def test_round_scores_and_stderr_in_the_games_table(info_cup: Path) -> None:
    records = _records(info_cup)
    html = parse_html(info_cup / HTML_NAME)
    text = (info_cup / MARKDOWN_NAME).read_text(encoding="utf-8")
    games = markdown_table(text, "Games")
    header = text.split("## Games\n", 1)[1].splitlines()[1]
    assert "| black | gold | result | points | rounds won |" in header
    figures = [a for a in html.with_class("td", "figure")]
    assert len(figures) == 2 * len(records)
    for (_, record), row in zip(records, games, strict=True):
        scores = get_game("kamisado").state_from_text(record.final_position).outcome()
        assert scores is not None
        black, gold = scores.details["scores"]
        assert row[5] == f"{black}-{gold}"
        won = rounds_won(record)
        assert row[6] == f"{won[0]}-{won[1]}"
    assert [cell["data-label"] for cell in figures] == ["points", "rounds won"] * len(records)
    page = (info_cup / HTML_NAME).read_text(encoding="utf-8")
    assert page.count(">points</th>") == 1 and page.count(">rounds won</th>") == 1
    assert ">points (own–opp.)</th>" in page and ">rounds won (own–opp.)</th>" in page
    for _, record in records:
        assert any("thinking about" in tail for tail in record.stderr_tails)
    assert page.count('<details class="detail"><summary>output</summary>') == len(records)
    assert "thinking about" in page


def rounds_won(record: GameRecord) -> list[int]:
    """The rounds each player won, counted by replaying the match: who won each round
    as it ended (independent of how the figures derive them)."""
    state = get_game("kamisado").state_from_text(record.opening)
    won = [0, 0]
    for action in record.actions:
        before = state.pos.round, state.pos.phase
        state.apply_action(action.action)
        if state.pos.phase != before[1] and before[1] == 0:  # PLAY -> regroup or over
            won[state.pos.last_winner] += 1
    return won


def test_points_and_rounds_won_are_told_apart(tmp_path: Path) -> None:
    """A long match where a Sumo's win counted more than one point: the figures say
    points (the match score) and rounds won, each the right count."""
    for seed in range(200):
        record = play_random("kamisado", "long", ("a", "b"), random.Random(seed))
        won = rounds_won(record)
        state = get_game("kamisado").state_from_text(record.final_position)
        points = [state.pos.score(0), state.pos.score(1)]
        if points != won:
            break
    else:
        pytest.fail("no random long match with a Sumo win in 200 seeds")
    assert max(points) >= 7 and sum(won) < sum(points)
    assert record.figures() == {
        "points": f"{points[0]}-{points[1]}",
        "rounds won": f"{won[0]}-{won[1]}",
    }
    with Store.open(tmp_path, name="long", config_text="", fingerprint="f") as store:
        store.add_game("g1", "p1", record)
    data = build_report_for(tmp_path)
    assert fmt.role_headers(data)[-2:] == ["points (own–opp.)", "rounds won (own–opp.)"]
    a = next(r for r in data.role_stats if r.player == "a")
    assert a.figures == {"points": (points[0], points[1]), "rounds won": (won[0], won[1])}


def test_fault_detail_and_stderr_are_visible(tmp_path: Path) -> None:
    record = play_random("kamisado", "standard", ("good", "bad"), random.Random(4), fault_at=6)
    faulty = record.players[record.faulty or 0]
    record.detail = f"{faulty}: bot exited with code 3 <at once>"
    record.stderr_tails = ["", ""]
    record.stderr_tails[record.faulty or 0] = "Traceback (most recent call last):\nValueError: boom"
    clean = play_random("kamisado", "standard", ("good", "bad"), random.Random(5))
    clean.stderr_tails = ["", "x" * 5000 + "END"]
    with Store.open(tmp_path, name="faulty", config_text="", fingerprint="f") as store:
        store.add_game("g1", "p1", record)
        store.add_game("g2", "p2", clean)
    write_reports(tmp_path)
    text = (tmp_path / MARKDOWN_NAME).read_text(encoding="utf-8")
    games = markdown_table(text, "Games")
    assert games[0][7] == f"{CRASH} ({faulty})"  # after points and rounds won
    assert games[0][8] == md_text(record.detail)  # shown literally: no HTML (issue 33)
    details = text.split("## Fault details\n", 1)[1]
    assert md_text(record.detail) in details and "ValueError: boom" in details
    page = (tmp_path / HTML_NAME).read_text(encoding="utf-8")
    # In a cell's text, not only in a hover title; escaped; the tail a click away.
    escaped = record.detail.replace("<", "&lt;").replace(">", "&gt;")
    assert f'<summary title="{escaped}">{escaped}</summary>' in page
    assert '<pre class="stderr">Traceback' in page and "ValueError: boom" in page
    # A clean game's tail is shown too, but only its end: the page stays small.
    assert "x" * 297 + "END" in page and "x" * 300 not in page


def test_the_not_analysed_note_shows_code_not_markdown(browser, info_cup: Path) -> None:
    """The note written for report.md (`arena analyze` in backticks) is code in HTML."""
    from browser import page_at

    text = (info_cup / MARKDOWN_NAME).read_text(encoding="utf-8")
    assert "Not analysed yet: `arena analyze` solves" in text  # Markdown keeps its own
    with page_at(browser, 1400) as (page, errors):
        page.goto((info_cup / HTML_NAME).as_uri())
        note = page.locator("p#analysis")
        assert note.inner_text().startswith("Not analysed yet: arena analyze solves")
        assert "`" not in note.inner_text()
        assert note.locator("code").all_inner_texts() == ["arena analyze"]
        assert errors == []


@pytest.mark.parametrize("width", [1400, 420])
def test_a_long_fault_detail_keeps_its_row_short(browser, tmp_path: Path, width: int) -> None:
    """A tournament with one broken entry: each faulted row is as tall as a clean one
    (its detail one line, cut with an ellipsis), and one click opens the whole detail
    and the stderr tail."""
    from browser import overflow, page_at

    detail = "crashy: bot exited with code 3; " + "the last words it wrote were long " * 8
    with Store.open(tmp_path, name="broken", config_text="", fingerprint="f") as store:
        for n in range(6):
            players = ("crashy", "good") if n % 2 else ("good", "crashy")
            if n % 3:
                fault = play_random("kamisado", "standard", players, random.Random(n), fault_at=4)
                fault.detail = detail
                fault.stderr_tails = ["", ""]
                fault.stderr_tails[fault.faulty or 0] = "Traceback\nValueError: boom"
                store.add_game(f"g{n}", f"p{n}", fault)
            else:
                store.add_game(
                    f"g{n}", f"p{n}", play_random("kamisado", "standard", players, random.Random(n))
                )
    write_reports(tmp_path)
    with page_at(browser, width) as (page, errors):
        page.goto((tmp_path / HTML_NAME).as_uri())
        heights = page.evaluate(
            "() => [...document.querySelectorAll('tr.game')].map(r => "
            "[r.classList.contains('fault'), r.getBoundingClientRect().height])"
        )
        clean = [h for fault, h in heights if not fault]
        faulted = [h for fault, h in heights if fault]
        assert len(faulted) == 4 and clean
        assert max(faulted) <= max(clean) * 1.5, heights  # one or two lines, never ten
        summary = page.locator("tr.fault td.detail summary").first
        assert summary.inner_text() == detail.strip()  # the whole text, cut by CSS alone
        assert summary.evaluate("e => e.scrollWidth > e.clientWidth")  # ... with "…"
        assert summary.get_attribute("title") == detail
        assert not page.locator("tr.fault pre.stderr").first.is_visible()
        page.screenshot(path=str(tmp_path / f"faults-{width}.png"), full_page=True)
        if SHOTS is not None:  # the table, scrolled to the details, as a reader sees it
            summary.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / f"faults-{width}.png"))
        summary.click()
        assert page.locator("tr.fault pre.stderr").first.is_visible()
        assert "ValueError: boom" in page.locator("tr.fault td.detail").first.inner_text()
        assert summary.evaluate("e => e.scrollWidth <= e.clientWidth")  # all of it shown
        if SHOTS is not None:
            page.screenshot(path=str(SHOTS / f"faults-open-{width}.png"))
        assert overflow(page) == {"scroll": width, "width": width, "wide": []}
        assert errors == []


@pytest.fixture(scope="module")
def battle_cup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    directory = tmp_path_factory.mktemp("battle")
    rng = random.Random(11)
    stored = []
    with Store.open(directory, name="battle", config_text="", fingerprint="f") as store:
        for i in range(6):
            players = ("ishida-bot", "tokugawa-bot") if i % 2 else ("tokugawa-bot", "ishida-bot")
            variant = "siege" if i == 5 else "battle"
            record = play_random("sekigahara", variant, players, rng)
            state = get_game("sekigahara").state_from_text(record.final_position)
            outcome = state.outcome()
            assert outcome is not None
            record.outcome = dict(outcome.details)
            assert store.add_game(f"g{i}", f"p{i // 2}", record)
            stored.append((f"g{i}", record))
    write_reports(directory)
    return directory, stored


def test_sekigahara_report_shows_impacts_casualties_and_roles(battle_cup) -> None:
    directory, stored = battle_cup
    text = (directory / MARKDOWN_NAME).read_text(encoding="utf-8")
    assert "## Attacker's advantage" in text and "The attacker (player 0)" in text
    header = text.split("## Games\n", 1)[1].splitlines()[1]
    assert "| attacker | defender | result | impact | casualties |" in header
    games = markdown_table(text, "Games")
    html = parse_html(directory / HTML_NAME)
    cells = html.with_class("td", "figure")
    for (_, record), row in zip(stored, games, strict=True):
        impacts, lost = record.outcome["impacts"], record.outcome["casualties"]
        assert row[5] == f"{impacts['attacker']}-{impacts['defender']}"
        assert row[6] == f"{lost['attacker']}-{lost['defender']}"
    by_label = [(c["data-label"]) for c in cells]
    assert by_label == ["impact", "casualties"] * len(stored)
    page = (directory / HTML_NAME).read_text(encoding="utf-8")
    assert "Attacker&#39;s advantage" in page or "Attacker's advantage" in page
    assert '<th class="sortable" data-sort="first">attacker</th>' in page
    # No solver for a game of hidden information: the Analysis section says why.
    why = "sekigahara games are not analysed: no exact solver: hidden information"
    assert text.split("## Analysis\n\n", 1)[1].startswith(why)
    assert re.search(r'<p id="analysis">' + why, page)


def test_sekigahara_replay_draws_the_battle(battle_cup) -> None:
    """The replay frames are the battle (armies, impacts, cards), not raw JSON, and
    the last one holds the outcome with both sides' removed blocks."""
    directory, stored = battle_cup
    html = parse_html(directory / HTML_NAME)
    sekigahara = get_game("sekigahara")
    for index, (_, record) in enumerate(stored, start=1):
        data = json.loads(html.scripts[f"replay-{index}"])
        assert data["k"] == "sekigahara" and "e" not in data
        frames = decode_frames(data["f"])
        assert len(frames) == len(record.actions) + 1
        final = sekigahara.state_from_text(record.final_position)
        assert frames[-1] == json.loads(json.dumps(battle_frame(game_view(final))))
        out = frames[-1]["out"]
        assert out["impacts"] == [record.outcome["impacts"][r] for r in ("attacker", "defender")]
        assert out["removed"] == [record.outcome["removed"][r] for r in ("attacker", "defender")]
        # the running impact moves with the plies, and cards shown only grow
        assert frames[0]["im"] == [0, 0]
        shown = [len(f["cards"]) for f in frames]
        assert shown == sorted(shown)
        assert any("+cards" in d for d in data["f"]) or not shown[-1]


@pytest.mark.parametrize("width", [1400, 420])
def test_reports_in_a_browser_fit_the_page(browser, info_cup, battle_cup, width, tmp_path) -> None:
    """Both reports in chromium: nothing wider than the page, replays that step and
    draw, a games table that filters and sorts, and no script errors."""
    from browser import overflow, page_at

    for name, path in (("kamisado", info_cup / HTML_NAME), ("battle", battle_cup[0] / HTML_NAME)):
        with page_at(browser, width) as (page, errors):
            page.goto(path.as_uri())
            assert overflow(page) == {"scroll": width, "width": width, "wide": []}
            page.click("#game-1 button.open")
            page.click("#replay-row-1 button[title=next]")
            page.click("#replay-row-1 button[title=next]")
            if name == "kamisado":
                assert page.locator("#replay-row-1 g.tower").count() == 16
                assert page.locator("#replay-row-1 rect.last-move").count() in (0, 2)
                moves = page.locator("#replay-row-1 ol.moves").inner_text()
                assert "depth" in moves and "(black)" in moves and "(gold)" in moves
            else:
                army = page.locator("#replay-row-1 .battle .army")
                assert army.count() == 2
                page.click("#replay-row-1 button[title=last]")
                assert "casualties" in page.locator("#replay-row-1 .battle .outcome").inner_text()
                moves = page.locator("#replay-row-1 ol.moves").inner_text()
                assert "(attacker)" in moves and "(defender)" in moves
            assert overflow(page) == {"scroll": width, "width": width, "wide": []}
            page.screenshot(path=str(tmp_path / f"{name}-{width}.png"), full_page=True)
            # Filter by a bot, then by a result; then sort by plies.
            groups = page.locator("#games tbody.game-group")
            total = groups.count()
            bot = page.locator("#standings-table tr.standing").first.get_attribute("data-player")
            page.select_option("#games-filter select[data-filter=bot]", bot)
            visible = page.locator("#games tbody.game-group:not([hidden])")
            expected = sum(
                bot
                in (
                    groups.nth(i).get_attribute("data-first"),
                    groups.nth(i).get_attribute("data-second"),
                )
                for i in range(total)
            )
            assert visible.count() == expected
            assert page.locator("#games-shown").inner_text() == f"{expected} of {total} games"
            page.select_option("#games-filter select[data-filter=bot]", "")
            page.select_option("#games-filter select[data-filter=result]", "1-0")
            assert all(
                visible.nth(i).get_attribute("data-result") == "1-0" for i in range(visible.count())
            )
            page.select_option("#games-filter select[data-filter=result]", "")
            page.click("#games th[data-sort=plies]")
            plies = [int(groups.nth(i).get_attribute("data-plies")) for i in range(total)]
            assert plies == sorted(plies)
            page.click("#games th[data-sort=plies]")
            plies = [int(groups.nth(i).get_attribute("data-plies")) for i in range(total)]
            assert plies == sorted(plies, reverse=True)
            assert errors == []


def test_by_role_table_averages_impacts_and_casualties_per_bot(battle_cup) -> None:
    directory, stored = battle_cup
    expected: dict[str, dict[str, list[float]]] = {}
    for _, record in stored:
        for role, name in enumerate(record.players):
            me, them = ("attacker", "defender")[role], ("attacker", "defender")[1 - role]
            mine = expected.setdefault(name, {"games": [0, 0], "impact": [], "casualties": []})
            mine["games"][role] += 1
            for label, key in (("impact", "impacts"), ("casualties", "casualties")):
                mine[label].append((record.outcome[key][me], record.outcome[key][them]))
    html = parse_html(directory / HTML_NAME)
    rows = {a["data-player"]: a for a in html.with_class("tr", "role-stats")}
    assert sorted(rows) == sorted(expected)
    for name, want in expected.items():
        assert rows[name]["data-games"] == ",".join(map(str, want["games"]))
        for label in ("impact", "casualties"):
            pairs = want[label]
            mean = (sum(p[0] for p in pairs) / len(pairs), sum(p[1] for p in pairs) / len(pairs))
            assert rows[name][f"data-{label}"] == f"{mean[0]:.3f},{mean[1]:.3f}"
    text = (directory / MARKDOWN_NAME).read_text(encoding="utf-8")
    table = markdown_table(text, "By role")
    assert {row[0] for row in table} == set(expected)
