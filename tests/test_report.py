"""Reports: the numbers printed agree with the database, the HTML stands alone,
and every replay ends on the position the record says the game ended on.

The results databases here are real: games are played through the rules core
with random actions (no bot processes) and written with the Store API.
"""

from __future__ import annotations

import json
import math
import random
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import needs
import pytest
from rich.console import Console

from arena.games import get_game
from arena.games.kamisado.show import kamisado_svg, kamisado_unframe
from arena.match.record import CRASH, ILLEGAL, ActionRecord, GameRecord
from arena.report import HTML_NAME, MARKDOWN_NAME, print_standings, write_reports
from arena.report.replay import decode_frames, encode_frames, game_view, replay_frames, replay_json
from arena.stats.rating import joint_fit
from arena.storage.store import Store

BOTS = ("alpha", "beta", "gamma")


# -- building tournaments ------------------------------------------------------------


def play_random(
    game: str, variant: str, players: tuple[str, str], rng: random.Random, *, fault_at: int = 0
) -> GameRecord:
    """A game of random actions; with ``fault_at`` the player to move at that ply
    crashes there (the record then ends mid-game, as the referee writes it)."""
    g = get_game(game)
    state = g.new_state(variant)
    opening = state.to_text()
    actions: list[ActionRecord] = []
    faulty = None
    while not state.is_terminal():
        if fault_at and len(actions) == fault_at:
            faulty = state.current_player()
            break
        player = state.current_player()
        legal = state.legal_actions()
        action = rng.choice(legal)
        state.apply_action(action)
        forced = len(legal) == 1
        actions.append(ActionRecord(player, action, 0 if forced else rng.randint(1, 900), forced))
    if faulty is not None:
        score, reason = (0.0 if faulty == 0 else 1.0), CRASH
    else:
        outcome = state.outcome()
        assert outcome is not None
        score, reason = outcome.returns[0], outcome.reason
    return GameRecord(
        game=game,
        variant=variant,
        players=list(players),
        opening=opening,
        actions=actions,
        score=score,
        reason=reason,
        detail="bot exited with code 1" if faulty is not None else "",
        faulty=faulty,
        final_position=state.to_text(),
        time_control="10+0.1",
        started_at=1000.0,
        ended_at=1003.5,
    )


def round_robin(
    directory: Path, rounds: int = 2, seed: int = 7, variant: str = "standard"
) -> list[tuple[str, GameRecord]]:
    """Pairs of games (sides swapped) between every two bots; game 2 of the first
    pair is a crash of whoever moves at ply 5, so a fault is in the data."""
    rng = random.Random(seed)
    stored = []
    with Store.open(directory, name="cup", config_text="name = 'cup'", fingerprint="f") as store:
        for r in range(rounds):
            for i, a in enumerate(BOTS):
                for b in BOTS[i + 1 :]:
                    for n, players in enumerate(((a, b), (b, a)), start=1):
                        fault_at = 5 if (r, a, b, n) == (0, "alpha", "beta", 2) else 0
                        record = play_random("kamisado", variant, players, rng, fault_at=fault_at)
                        key = f"r{r}:{a}:{b}/{n}"
                        assert store.add_game(key, f"r{r}:{a}:{b}", record)
                        stored.append((key, record))
    return stored


# -- reading the reports back ---------------------------------------------------------


class _Cells(HTMLParser):
    """Collects the attributes of every element carrying ``data-*`` attributes, and
    every external reference, from the report's HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.scripts: dict[str, str] = {}
        self.external: list[str] = []
        self._script: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        for name in ("src", "href", "action", "data"):
            if re.match(r"\s*(https?:)?//", a.get(name, "")):
                self.external.append(f"{tag} {name}={a[name]}")
        if tag == "script" and a.get("type") == "application/json":
            self._script = a.get("id", "")
            self.scripts[self._script] = ""

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self.scripts[self._script] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None

    def with_class(self, tag: str, css: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and css in a.get("class", "").split()]


def parse_html(path: Path) -> _Cells:
    cells = _Cells()
    cells.feed(path.read_text(encoding="utf-8"))
    return cells


def markdown_table(text: str, heading: str) -> list[list[str]]:
    """The rows (header excluded) of the first table after ``## heading``."""
    section = text.split(f"## {heading}\n", 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("## "):
            break
        if line.startswith("|") and not set(line) <= set("|-: "):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]


def stored_results(store: Store) -> list[tuple[str, str, float]]:
    """``(player 0, player 1, player 0's score)`` of every stored game."""
    return [(r.players[0], r.players[1], r.score) for r in store.records()]


def expected_from_db(directory: Path) -> tuple[dict[str, list[int]], dict[tuple[str, str], list]]:
    """W/L/D per player and (points, games) per ordered pair, straight from the stored records."""
    with Store.open_existing(directory) as store:
        results = stored_results(store)
    wld: dict[str, list[int]] = {}
    cross: dict[tuple[str, str], list] = {}
    for p0, p1, score in results:
        for me, other, mine in ((p0, p1, score), (p1, p0, 1 - score)):
            slot = {1.0: 0, 0.0: 1, 0.5: 2}[mine]
            wld.setdefault(me, [0, 0, 0])[slot] += 1
            cell = cross.setdefault((me, other), [0.0, 0])
            cell[0] += mine
            cell[1] += 1
    return wld, cross


# -- the tests ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    directory = tmp_path_factory.mktemp("cup")
    stored = round_robin(directory)
    return directory, stored


@pytest.fixture(scope="module")
def written(tournament: tuple[Path, list]) -> Any:
    directory, _ = tournament
    return write_reports(directory)


def test_files_written_and_data_matches_the_fit(tournament, written) -> None:
    directory, stored = tournament
    assert (directory / MARKDOWN_NAME).is_file()
    assert (directory / HTML_NAME).is_file()
    assert not list(directory.glob("*.tmp"))
    assert written.games == len(stored)
    assert [s.rank for s in written.standings] == [1, 2, 3]
    assert sorted(written.players) == sorted(BOTS)
    with Store.open_existing(directory) as store:
        fit = joint_fit(stored_results(store))
    for s in written.standings:
        assert s.rating == pytest.approx(fit.rating(s.player).value, abs=1e-6)
        assert s.error == pytest.approx(fit.rating(s.player).error, abs=1e-6)
    ratings = [s.rating for s in written.standings]
    assert ratings == sorted(ratings, reverse=True)
    top, second = written.standings[0], written.standings[1]
    assert top.los_next == pytest.approx(fit.superiority(top.player, second.player))
    assert written.standings[-1].los_next is None
    assert written.first_move == pytest.approx(fit.first_move)
    assert written.faults == {("beta", CRASH): 1} or written.faults == {("alpha", CRASH): 1}


def test_html_standings_and_crosstable_agree_with_the_database(tournament, written) -> None:
    directory, _ = tournament
    wld, cross = expected_from_db(directory)
    html = parse_html(directory / HTML_NAME)
    rows = html.with_class("tr", "standing")
    assert [r["data-player"] for r in rows] == [s.player for s in written.standings]
    for r in rows:
        w, l, d = wld[r["data-player"]]
        assert (int(r["data-wins"]), int(r["data-losses"]), int(r["data-draws"])) == (w, l, d)
        assert int(r["data-games"]) == w + l + d
        assert float(r["data-points"]) == w + d / 2
        assert math.isfinite(float(r["data-rating"])) and float(r["data-error"]) > 0
    seen = 0
    for tag, a in html.elements:
        if tag == "td" and "data-row" in a:
            points, games = cross.get((a["data-row"], a["data-col"]), [0.0, 0])
            assert float(a["data-points"]) == points
            assert int(a["data-games"]) == games
            seen += 1
    assert seen == len(BOTS) * (len(BOTS) - 1)
    first_move = next(a for t, a in html.elements if a.get("id") == "first-move")
    assert float(first_move["data-elo"]) == pytest.approx(written.first_move, abs=1e-3)
    assert int(first_move["data-games"]) == written.games
    faults = [a for t, a in html.elements if t == "td" and "data-bot" in a]
    counted = {(a["data-bot"], a["data-reason"]): int(a["data-count"]) for a in faults}
    assert {k: v for k, v in counted.items() if v} == written.faults
    plotted = html.with_class("g", "rating-row")
    assert [a["data-player"] for a in plotted] == [s.player for s in written.standings]
    assert len(html.with_class("tr", "game")) == written.games


def test_markdown_agrees_with_the_database(tournament, written) -> None:
    directory, stored = tournament
    wld, cross = expected_from_db(directory)
    text = (directory / MARKDOWN_NAME).read_text(encoding="utf-8")
    standings = markdown_table(text, "Standings")
    assert [row[1] for row in standings] == [s.player for s in written.standings]
    for row in standings:
        w, l, d = wld[row[1]]
        assert row[4] == str(w + l + d)
        assert row[5] == f"{w}-{l}-{d}"
        assert row[6] == f"{100 * (w + d / 2) / (w + l + d):.1f}%"
        assert row[2] == str(round(written.standing(row[1]).rating))
    crosstable = markdown_table(text, "Crosstable")
    order = [s.player for s in written.standings]
    for row in crosstable:
        for col, value in zip(order, row[1:-1], strict=True):
            if col == row[0]:
                assert value == "·"
            else:
                points, games = cross[(row[0], col)]
                assert value == f"{points:g}/{games}"
    faults = markdown_table(text, "Faults")
    assert len(faults) == 1 and faults[0][-1] == "1"
    games = markdown_table(text, "Games")
    assert [row[1] for row in games] == [key for key, _ in stored]


def test_html_needs_no_network(tournament, written) -> None:
    directory, _ = tournament
    text = (directory / HTML_NAME).read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text, re.IGNORECASE)
    assert "@import" not in text
    assert not re.search(r"url\(\s*['\"]?(https?:)?//", text)
    assert parse_html(directory / HTML_NAME).external == []
    assert "<script src" not in text and "<link" not in text


def test_replay_ends_on_the_recorded_final_position(tournament, written) -> None:
    directory, stored = tournament
    html = parse_html(directory / HTML_NAME)
    kamisado = get_game("kamisado")
    for index, (_, record) in enumerate(stored, start=1):
        data = json.loads(html.scripts[f"replay-{index}"])
        assert data["k"] == "kamisado" and "e" not in data
        assert [a[0] for a in data["a"]] == [a.action for a in record.actions]
        frames = decode_frames(data["f"])
        assert len(frames) == len(record.actions) + 1
        expected = kamisado.state_from_text(record.final_position).observation(0)
        expected.pop("you")
        last = kamisado_unframe(frames[-1])
        key = lambda t: t["square"]  # noqa: E731
        assert sorted(last.pop("towers"), key=key) == sorted(expected.pop("towers"), key=key)
        assert last == expected
        opening = kamisado.state_from_text(record.opening).observation(0)
        assert sorted(kamisado_unframe(frames[0])["towers"], key=key) == sorted(
            opening["towers"], key=key
        )


def test_final_board_picture_shows_the_towers(tournament) -> None:
    _, stored = tournament
    _, record = stored[0]
    frames = replay_frames(record).frames
    picture = kamisado_svg(kamisado_unframe(frames[-1]))
    final = get_game("kamisado").state_from_text(record.final_position).observation(0)
    drawn = re.findall(
        r'data-square="(\w+)" data-owner="(\w+)" data-colour="(\w+)" data-rank="(\d)"', picture
    )
    assert sorted(drawn) == sorted(
        (t["square"], t["owner"], t["colour"], str(t["rank"])) for t in final["towers"]
    )


def test_fault_game_replays_to_where_it_stopped(tournament) -> None:
    _, stored = tournament
    _, record = next((k, r) for k, r in stored if r.faulty is not None)
    assert len(record.actions) == 5
    replay = replay_frames(record)
    assert replay.error is None and len(replay.frames) == 6
    final = get_game("kamisado").state_from_text(record.final_position).observation(0)
    last = kamisado_unframe(replay.frames[-1])
    assert sorted(t["square"] for t in last["towers"]) == sorted(
        t["square"] for t in final["towers"]
    )
    assert last["to_move"] == final["to_move"] == ("black", "gold")[record.faulty]


def test_print_standings(written) -> None:
    console = Console(record=True, width=120)
    print_standings(written, console)
    text = console.export_text()
    for s in written.standings:
        assert s.player in text
    assert "First-move advantage" in text and "crash" in text


def test_a_bot_that_won_everything_keeps_finite_ratings(tmp_path: Path) -> None:
    rng = random.Random(1)
    with Store.open(tmp_path, name="rout", config_text="", fingerprint="f") as store:
        n = 0
        for other in ("beta", "gamma"):
            for players in (("ace", other), (other, "ace"), ("ace", other), (other, "ace")):
                record = play_random("kamisado", "single", players, rng)
                record.score = 1.0 if players[0] == "ace" else 0.0
                n += 1
                store.add_game(f"g{n}", f"p{n}", record)
        store.add_game("g-x", "p-x", play_random("kamisado", "single", ("beta", "gamma"), rng))
    data = write_reports(tmp_path)
    assert data.standings[0].player == "ace"
    assert data.standings[0].score_pct == 100.0
    for s in data.standings:
        assert s.rating is not None and math.isfinite(s.rating)
        assert s.error is not None and math.isfinite(s.error)
    assert data.first_move is not None and math.isfinite(data.first_move)
    assert data.standings[0].los_next is not None and data.standings[0].los_next > 0.9
    assert "NaN" not in (tmp_path / HTML_NAME).read_text() + (tmp_path / MARKDOWN_NAME).read_text()


def test_anchor_fixes_a_rating(tournament, tmp_path: Path) -> None:
    directory, _ = tournament
    copy = tmp_path / "cup"
    shutil.copytree(directory, copy)
    data = write_reports(copy, anchor=("gamma", 1500.0))
    assert data.standing("gamma").rating == pytest.approx(1500.0)
    assert data.anchor == ("gamma", 1500.0)
    assert "gamma is fixed at 1500" in (copy / MARKDOWN_NAME).read_text()


def test_empty_tournament(tmp_path: Path) -> None:
    Store.open(tmp_path, name="empty", config_text="", fingerprint="f").close()
    data = write_reports(tmp_path)
    assert data.games == 0 and data.standings == ()
    assert (tmp_path / HTML_NAME).is_file()
    print_standings(data, Console(record=True))


def test_broken_record_still_reports(tmp_path: Path) -> None:
    rng = random.Random(2)
    good = play_random("kamisado", "single", ("alpha", "beta"), rng)
    bad = play_random("kamisado", "single", ("beta", "alpha"), rng)
    bad.actions[3] = ActionRecord(bad.actions[3].player, "a1-a1", 5)
    bad.reason, bad.faulty, bad.score = ILLEGAL, 1, 1.0
    with Store.open(tmp_path, name="broken", config_text="", fingerprint="f") as store:
        store.add_game("g1", "p1", good)
        store.add_game("g2", "p2", bad)
    write_reports(tmp_path)
    scripts = parse_html(tmp_path / HTML_NAME).scripts
    replay = json.loads(scripts["replay-2"])
    assert "ply 4" in replay["e"] and len(decode_frames(replay["f"])) == 4


def test_other_games_replay_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generic fallback (a game without a picture of its own) shows merged
    views; Sekigahara (hidden hands) stands in for such a game here."""
    from arena.games.show import Show

    monkeypatch.setattr(get_game("sekigahara"), "show", Show)
    record = play_random("sekigahara", "battle", ("alpha", "beta"), random.Random(3))
    data = replay_json(record)
    assert data["k"] == "text"
    frames = decode_frames(data["f"])
    assert len(frames) == len(record.actions) + 1
    final = get_game("sekigahara").state_from_text(record.final_position)
    assert frames[-1] == json.loads(json.dumps(game_view(final)))
    # the growing log is stored as appends, not again in full each ply
    assert sum("+log" in d for d in data["f"]) >= len(record.actions) // 2


def test_delta_codec_round_trip() -> None:
    frames = [
        {"a": 1, "log": [], "x": None},
        {"a": 1, "log": ["m1"], "x": "y"},
        {"a": 2, "log": ["m1", "m2"]},
        {"a": 2, "log": ["other"], "z": [1]},
        {"a": 2, "log": ["other"], "z": [1]},
    ]
    deltas = encode_frames(frames)
    assert deltas[1] == {"+log": ["m1"], "x": "y"}
    assert deltas[2] == {"a": 2, "+log": ["m2"], "-": ["x"]}
    assert deltas[4] == {}
    assert decode_frames(deltas) == frames


def test_replay_script_draws_the_final_position(tournament, written, tmp_path: Path) -> None:
    """Run the page's own script in node with a tiny DOM, press "last" on a game
    and read back the towers it drew."""
    node = needs.node()
    directory, stored = tournament
    page = (directory / HTML_NAME).read_text(encoding="utf-8")
    html = parse_html(directory / HTML_NAME)
    # The page's scripts (replay.js, then each game's picture) in their order.
    script = "\n".join(re.findall(r"<script>(.*?)</script>", page, re.DOTALL))
    index = 3
    harness = (Path(__file__).parent / "report_dom.js").read_text(encoding="utf-8")
    payload = {
        "scripts": {
            k: v for k, v in html.scripts.items() if k in (f"replay-{index}", "kamisado-style")
        },
        "index": str(index),
    }
    (tmp_path / "run.js").write_text(
        harness.replace("/*PAYLOAD*/null", json.dumps(payload)).replace("/*SCRIPT*/", script),
        encoding="utf-8",
    )
    out = subprocess.run(
        [node, str(tmp_path / "run.js")], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    drawn = json.loads(out.stdout)
    record = stored[index - 1][1]
    final = get_game("kamisado").state_from_text(record.final_position).observation(0)
    assert sorted(map(tuple, drawn["towers"])) == sorted(
        (t["square"], t["owner"], t["colour"], t["rank"]) for t in final["towers"]
    )
    assert f"ply {len(record.actions)}/{len(record.actions)}" in drawn["status"]


def test_report_of_a_real_tournament_run(tmp_path: Path) -> None:
    """``arena run`` writes the reports at the end; they agree with its database."""
    from click.testing import CliRunner

    from arena.cli import main

    toml = tmp_path / "real.toml"
    toml.write_text(
        'name = "real"\nvariant = "standard"\ntc = "5+0.05"\ngames_per_pairing = 4\nseed = 2\n'
        "[openings]\nplies = 2\n"
        '[[bots]]\nname = "random"\ncommand = "builtin:random"\nargs = ["--seed", "4"]\n'
        '[[bots]]\nname = "greedy"\ncommand = "builtin:greedy"\n'
        '[[bots]]\nname = "random-2"\ncommand = "builtin:random"\nargs = ["--seed", "5"]\n'
    )
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(tmp_path), "-q"])
    assert result.exit_code == 0, result.output
    directory = tmp_path / "real"
    wld, cross = expected_from_db(directory)
    html = parse_html(directory / HTML_NAME)
    rows = html.with_class("tr", "standing")
    assert sorted(r["data-player"] for r in rows) == ["greedy", "random", "random-2"]
    for r in rows:
        w, l, d = wld[r["data-player"]]
        assert (int(r["data-wins"]), int(r["data-losses"]), int(r["data-draws"])) == (w, l, d)
    cells = [
        (a["data-row"], a["data-col"], float(a["data-points"]), int(a["data-games"]))
        for t, a in html.elements
        if t == "td" and "data-row" in a
    ]
    assert len(cells) == 6
    for row, col, points, games in cells:
        assert [points, games] == cross[(row, col)]
    assert "greedy" in result.output  # the standings were printed too
    # The last game's replay ends on its recorded final position.
    with Store.open_existing(directory) as store:
        items = list(store.items())
    kamisado = get_game("kamisado")
    index, (_, record) = len(items), items[-1]
    data = json.loads(html.scripts[f"replay-{index}"])
    last = kamisado_unframe(decode_frames(data["f"])[-1])
    final = kamisado.state_from_text(record.final_position).observation(0)
    assert sorted(t["square"] for t in last["towers"]) == sorted(
        t["square"] for t in final["towers"]
    )
