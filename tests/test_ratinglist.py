"""The rating list over real stores written by real tournaments (``arena run`` with
the built-in random and greedy bots, single rounds, a fast clock)."""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from test_store import as_version_1

from arena.cli import main
from arena.ratinglist import collect
from arena.ratinglist import fit as fit_module
from arena.ratinglist.fit import build_list
from arena.ratinglist.players import load_aliases
from arena.report.summary import build_report
from arena.storage.store import Store

RANDOM, GREEDY = "random 1", "greedy 1"


def tournament(root: Path, name: str, bots: list[tuple[str, str]], seed: int, games: int = 2):
    toml = root / f"{name}.toml"
    text = (
        f'name = "{name}"\nvariant = "single"\ntc = "2+0.05"\ngames_per_pairing = {games}\n'
        f"seed = {seed}\nconcurrency = 2\n[openings]\nplies = 2\n"
    )
    for entry, command in bots:
        text += f'[[bots]]\nname = "{entry}"\ncommand = "{command}"\n'
    toml.write_text(text)
    result = CliRunner().invoke(
        main, ["run", str(toml), "--results", str(root / "results"), "-q", "--no-report"]
    )
    assert result.exit_code == 0, result.output
    return root / "results" / name


@pytest.fixture(scope="module")
def cups(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """cup-a: two random bots (two seeds: one identity, two entries) and greedy;
    cup-b and cup-c: random against greedy under other entry names."""
    root = tmp_path_factory.mktemp("cups")
    return {
        "a": tournament(
            root,
            "cup-a",
            [
                ("rnd", "builtin:random --seed 4"),
                ("rnd2", "builtin:random --seed 5"),
                ("greedy", "builtin:greedy"),
            ],
            seed=1,
        ),
        "b": tournament(
            root,
            "cup-b",
            [("random-x", "builtin:random --seed 6"), ("greedy", "builtin:greedy")],
            seed=2,
            games=4,
        ),
        "c": tournament(
            root,
            "cup-c",
            [("rando", "builtin:random --seed 7"), ("g", "builtin:greedy")],
            seed=3,
            games=4,
        ),
    }


def ratings(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["ratings", *args])
    return result.exit_code, result.output


def test_one_folder_gives_exactly_its_reports_fit(cups: dict[str, Path]) -> None:
    with Store.open_existing(cups["a"]) as store:
        report = build_report(store)
    data = build_list([cups["a"]], cache_dir=None)
    (table,) = data.tables
    assert (table.game, table.variant, table.games) == ("kamisado", "single", report.games)
    names = {"rnd": f"{RANDOM} [rnd]", "rnd2": f"{RANDOM} [rnd2]", "greedy": GREEDY}
    assert sorted(r.player for r in table.rows) == sorted(names.values())
    for s in report.standings:
        row = table.row(names[s.player])
        assert row.rating == pytest.approx(s.rating, abs=1e-3)
        assert row.error == pytest.approx(s.error, abs=1e-3)
        assert (row.wins, row.losses, row.draws) == (s.wins, s.losses, s.draws)
    assert table.first_move == pytest.approx(report.first_move, abs=1e-3)
    assert [r.rank for r in table.rows] == [1, 2, 3]


def test_same_bot_under_two_entry_names_is_one_player(cups: dict[str, Path]) -> None:
    (table,) = build_list([cups["b"], cups["c"]], cache_dir=None).tables
    assert sorted(r.player for r in table.rows) == [GREEDY, RANDOM]
    row = table.row(RANDOM)
    assert row.games == 8 and row.tournaments == ("cup-b", "cup-c")
    assert table.history_points and [p for p, _ in table.history_points] == ["cup-b", "cup-c"]
    assert len(table.history[RANDOM]) == 2 and all(v is not None for v in table.history[RANDOM])
    assert table.crosstable[(GREEDY, RANDOM)][1] == 8


def test_aliases_merge_and_split(cups: dict[str, Path], tmp_path: Path) -> None:
    aliases = tmp_path / "aliases.toml"
    aliases.write_text(
        '"greedy (cup-b)" = ["cup-b/greedy"]\n"rnd-all" = ["rnd", "rnd2", "random 1"]\n'
    )
    data = build_list([cups["a"], cups["b"]], aliases=load_aliases(aliases), cache_dir=None)
    (table,) = data.tables
    players = {r.player: r for r in table.rows}
    assert sorted(players) == ["greedy (cup-b)", GREEDY, "rnd-all"]
    assert players["greedy (cup-b)"].tournaments == ("cup-b",)
    assert players[GREEDY].tournaments == ("cup-a",)
    # rnd v rnd2 became one player's games against itself: left out, and said.
    # cup-a: rnd and rnd2 each played greedy twice; cup-b: random 1 played greedy 4 times.
    assert players["rnd-all"].games == 2 + 2 + 4
    # rnd v rnd2 became one player's games against itself: left out, and said.
    assert any("2 games left out: the aliases made both players one" in n for n in data.notes)
    assert table.games == 8


def test_a_folder_given_twice_or_copied_counts_once(cups: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "copy" / "cup-b"
    shutil.copytree(cups["b"], copy)
    once = build_list([cups["b"]], cache_dir=None).tables[0]
    again = build_list([cups["b"], cups["b"], copy], cache_dir=None).tables[0]
    assert again.games == once.games == 4
    for _ in range(2):  # the second time, from the cache (which reads keys lazily)
        cached = build_list([cups["b"], copy], cache_dir=tmp_path / "cache").tables[0]
        assert cached.games == 4
    assert [(r.player, r.rating, r.games) for r in again.rows] == [
        (r.player, r.rating, r.games) for r in once.rows
    ]


def test_filters(cups: dict[str, Path]) -> None:
    code, out = ratings(str(cups["b"]), "--since", "2999-01-01")
    assert code != 0 and out.count("\n") == 1 and "no games match" in out
    code, out = ratings(str(cups["b"]), "--tc", "blitz", "--format", "json")
    assert code != 0 and "no games match" in out
    code, out = ratings(
        str(cups["b"]), "--tc", "bullet", "--since", "2000-01-01", "--format", "json"
    )
    assert code == 0, out
    assert json.loads(out)["lists"][0]["games"] == 4
    data = build_list([cups["a"], cups["b"], cups["c"]], min_games=5, cache_dir=None)
    # cup-a's two random entries have 4 games each: left out, with their games.
    assert {r.player: r.games for r in data.tables[0].rows} == {GREEDY: 8, RANDOM: 8}
    assert collect.tc_class("2+0.05") == "bullet"
    assert collect.tc_class("60+1") == "bullet"
    assert collect.tc_class("180+2") == "blitz"
    assert collect.tc_class("600+5") == "rapid"
    assert collect.tc_class("1800") == "classical"
    assert collect.tc_class("movetime=0.5") == "bullet"


def grow(directory: Path, **changes: object) -> None:
    """One more game in a tournament's store (its last game again, under a new
    key, with ``changes`` to its record), written through the arena's own writer."""
    with Store.open_existing(directory) as store:
        info = store.tournament
        key, record = list(store.items())[-1]
    record = msgspec.structs.replace(record, **changes)
    with Store.open(
        directory, name=info.name, config_text=info.config_text, fingerprint=info.fingerprint
    ) as store:
        assert store.add_game(f"{key}-more", key.rsplit("/", 1)[0], record)


def _fingerprint(db: Path) -> tuple[str, int]:
    return hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime_ns


def test_never_writes_a_store_and_reads_only_what_changed(
    cups: dict[str, Path], tmp_path: Path
) -> None:
    results = tmp_path / "results"
    shutil.copytree(cups["b"], results / "cup-b")
    db = results / "cup-b" / "games.sqlite"
    before = _fingerprint(db)
    code, out = ratings(str(results))
    assert code == 0, out
    assert _fingerprint(db) == before
    assert sorted(os.listdir(results / "cup-b")) == sorted(os.listdir(cups["b"]))
    assert (results / "ratings.md").is_file() and (results / "ratings.html").is_file()
    assert (results / collect.CACHE_DIR / collect.CACHE_NAME).is_file()
    # The store grows by one game (a copy of its last, under a new key), written
    # as a resumed run writes it: the next run reads it, from the cache plus the
    # new row.
    grow(results / "cup-b")
    cached = collect.read_store(results / "cup-b", results / collect.CACHE_DIR)
    assert cached.count == 5
    code, out = ratings(str(results), "--format", "json")
    assert json.loads(out)["lists"][0]["games"] == 5
    # Replaced by another tournament's store: read again whole.
    shutil.copy(cups["c"] / "games.sqlite", db.with_name("new.sqlite"))
    os.replace(db.with_name("new.sqlite"), db)
    again = collect.read_store(results / "cup-b", results / collect.CACHE_DIR)
    assert again.tournament == "cup-c" and again.count == 4


def test_the_connection_to_a_store_is_read_only(cups: dict[str, Path], tmp_path: Path) -> None:
    """Unchanged bytes show a run wrote nothing; this shows it could not have."""
    db = tmp_path / "games.sqlite"
    shutil.copyfile(cups["b"] / "games.sqlite", db)
    conn = collect._connect(db)
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("CREATE TABLE intruder (x)")
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM games")
    finally:
        conn.close()


def test_an_old_store_without_identities_rates_by_entry_name(
    cups: dict[str, Path], tmp_path: Path
) -> None:
    old = tmp_path / "old" / "cup-b"
    shutil.copytree(cups["b"], old)
    as_version_1(old / "games.sqlite")
    with (
        closing(sqlite3.connect(old / "games.sqlite")) as conn,
        conn,
    ):  # records as an older arena wrote them
        conn.execute("UPDATE games SET record = json_remove(record, '$.identities')")
    code, out = ratings(str(old), "--format", "csv")
    assert code == 0, out
    lines = out.splitlines()
    notes = [line for line in lines if "identities" in line]
    assert len(notes) == 1 and "rated by entry name" in notes[0]
    rows = list(csv.DictReader(io.StringIO("\n".join(line for line in lines if line not in notes))))
    assert sorted(r["player"] for r in rows) == ["greedy", "random-x"]


def test_bad_input_is_one_line_and_skip_bad_rates_the_rest(
    cups: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = ratings(str(empty))
    assert code != 0 and out.count("\n") == 1 and "no tournament results" in out
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "games.sqlite").write_bytes(b"this is not a database" * 100)
    code, out = ratings(str(corrupt))
    assert code != 0 and out.count("\n") == 1 and "not a usable results database" in out
    code, out = ratings(str(cups["b"]), str(corrupt), "--skip-bad", "--format", "json")
    assert code == 0, out
    assert "skipped" in out and json.loads(out[out.index("{") :])["lists"][0]["games"] == 4
    bad = tmp_path / "aliases.toml"
    bad.write_text('"x" = 3\n')
    code, out = ratings(str(cups["b"]), "--aliases", str(bad))
    assert code != 0 and out.count("\n") == 1 and "aliases file" in out
    bad.write_text("= nope")
    code, out = ratings(str(cups["b"]), "--aliases", str(bad))
    assert code != 0 and out.count("\n") == 1 and "not valid TOML" in out
    code, out = ratings(str(cups["b"]), "--anchor", "nobody=0")
    assert code != 0 and out.count("\n") == 1 and "nobody" in out
    code, out = ratings(str(cups["b"]), "--anchor", f"{GREEDY}=1000", "--format", "json")
    assert code == 0 and json.loads(out)["lists"][0]["players"][0]["elo"] == pytest.approx(1000)
    # A store another process holds locked.
    locked = tmp_path / "locked" / "cup-b"
    shutil.copytree(cups["b"], locked)
    monkeypatch.setattr(collect, "LOCK_TIMEOUT", 0.1)
    holder = sqlite3.connect(locked / "games.sqlite", isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        code, out = ratings(str(locked.parent))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert code != 0 and out.count("\n") == 1 and "locked" in out, out


def test_terminal_table_through_a_pipe_and_the_files(cups: dict[str, Path], tmp_path: Path) -> None:
    code, out = ratings(str(cups["b"]), str(cups["c"]), "--out", str(tmp_path / "new" / "out"))
    assert code == 0, out
    tmp_path = tmp_path / "new" / "out"  # --out made it
    lines = out.splitlines()
    assert lines[0].startswith("kamisado single: 2 players, 8 games")
    assert lines[1].split()[:4] == ["#", "player", "Elo", "95%"]
    assert "─" not in out and "│" not in out  # plain text through a pipe
    md = (tmp_path / "ratings.md").read_text()
    assert "## kamisado single" in md and "### History" in md and "### Head to head" in md
    html = (tmp_path / "ratings.html").read_text()
    assert 'class="rating-plot"' in html and 'class="history-plot"' in html


def _json_list(*args: str) -> dict:
    """The list as JSON, its numbers to 1e-6 (fits started from elsewhere end
    within rounding of each other)."""
    code, out = ratings(*args, "--format", "json")
    assert code == 0, out
    return json.loads(out[out.index("{") :], parse_float=lambda x: round(float(x), 6) + 0.0)


def test_a_version_1_store_rates_the_same_unwritten_and_a_resumed_run_migrates_it(
    cups: dict[str, Path], tmp_path: Path
) -> None:
    results = tmp_path / "results"
    shutil.copytree(cups["b"], results / "cup-b")
    db = results / "cup-b" / "games.sqlite"
    as_version_1(db)
    with Store.open_existing(results / "cup-b") as store:
        report = build_report(store)
    before = _fingerprint(db)
    want = _json_list(str(cups["b"]))
    assert _json_list(str(results)) == want
    assert _fingerprint(db) == before  # read through its records, written nothing
    assert _json_list(str(results)) == want  # and again from the cache
    # `arena run` resumes the tournament: nothing is left to play, the store is
    # migrated, and its report and ratings are what they were.
    toml = cups["b"].parent.parent / "cup-b.toml"
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(results), "-q"])
    assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "2",
        )
    with Store.open_existing(results / "cup-b") as store:
        again = build_report(store)
    assert again.games == report.games
    assert [(s.player, s.rating, s.wins, s.losses, s.draws) for s in again.standings] == [
        (s.player, s.rating, s.wins, s.losses, s.draws) for s in report.standings
    ]
    assert _json_list(str(results)) == want


def test_the_reader_reads_the_counts_not_the_records(cups: dict[str, Path], tmp_path: Path) -> None:
    with closing(sqlite3.connect(cups["b"] / "games.sqlite")) as conn:
        full = conn.execute("EXPLAIN QUERY PLAN " + collect.COUNTS_QUERY).fetchall()
        grown = conn.execute(
            "EXPLAIN QUERY PLAN " + collect.grouped_query(2, "WHERE rowid > ?"), (3,)
        ).fetchall()
    # All of a store: its counts.
    assert [row[3] for row in full] == ["SCAN game_counts"]
    # The games stored since the last read: just those rows, never their records.
    assert "SEARCH games USING INTEGER PRIMARY KEY (rowid>?)" in [row[3] for row in grown]
    assert "record" not in collect.COUNTS_QUERY + collect.grouped_query(2)
    assert "record" in collect.grouped_query(1)
    # Counts that do not match the games (a store edited by other hands): the
    # games are grouped instead.
    results = tmp_path / "results"
    shutil.copytree(cups["b"], results / "cup-b")
    with closing(sqlite3.connect(results / "cup-b" / "games.sqlite")) as conn, conn:
        conn.execute("UPDATE game_counts SET games = games + 10")
    assert collect.read_store(results / "cup-b").count == 4


def test_copies_holding_different_games_count_each_game_once(
    cups: dict[str, Path], tmp_path: Path
) -> None:
    early = tmp_path / "early" / "cup-b"  # a copy taken before the last game
    late = tmp_path / "late" / "cup-b"
    shutil.copytree(cups["b"], early)
    shutil.copytree(cups["b"], late)
    grow(late)
    for order in ([early, late], [late, early], [early, late, early, late]):
        (table,) = build_list(order, cache_dir=tmp_path / "cache").tables
        assert table.games == 5


def test_since_keeps_the_games_of_that_day_on(cups: dict[str, Path], tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(cups["b"], results / "cup-b")
    day = datetime.datetime(2001, 2, 3, 23, 59, tzinfo=datetime.UTC).timestamp()
    grow(results / "cup-b", started_at=day)
    assert _json_list(str(results))["lists"][0]["games"] == 5
    assert _json_list(str(results), "--since", "2001-02-03")["lists"][0]["games"] == 5
    assert _json_list(str(results), "--since", "2001-02-04")["lists"][0]["games"] == 4
    (table,) = build_list([results], since=day, cache_dir=None).tables  # from the next midnight
    assert table.games == 4


def test_a_fit_of_unchanged_games_is_not_made_again(
    cups: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "results"
    shutil.copytree(cups["b"], results / "cup-b")
    shutil.copytree(cups["c"], results / "cup-c")
    made: list[list[str]] = []
    real = fit_module.joint_fit

    def counted(*args: object, **kw: object) -> object:
        made.append(list(kw["players"]))  # type: ignore[call-overload]
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(fit_module, "joint_fit", counted)
    first = build_list([results])
    assert len(made) == 2  # after cup-b; after cup-c (the list itself)
    made.clear()
    assert build_list([results]).tables[0].rows == first.tables[0].rows
    assert made == []
    grow(results / "cup-c")
    assert build_list([results]).tables[0].games == 9
    assert len(made) == 1  # the point after cup-b is unchanged


def test_the_rating_list_imports_no_scipy(cups: dict[str, Path]) -> None:
    code = (
        "import sys; from arena.ratinglist.fit import build_list;"
        f"build_list([{str(cups['b'])!r}], cache_dir=None);"
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("players", [15, 40])
def test_history_plot_has_a_legend_entry_for_every_line(browser, players: int) -> None:
    """Fifteen players: fifteen lines, each with a legend entry naming it in its own
    colour and dash, every entry inside the drawing; forty: the best thirty, and the
    legend says how many more the table holds."""
    from types import SimpleNamespace

    from browser import page_at

    from arena.ratinglist.render import HISTORY_LINES, history_svg

    names = [f"player-{n:02d}" for n in range(players)]
    table = SimpleNamespace(
        rows=[SimpleNamespace(player=p) for p in names],
        history_points=[("cup-1", "2026-01-01"), ("cup-2", "2026-02-01")],
        history={p: [(10.0 * n, 5.0), (20.0 * n - 100, 5.0)] for n, p in enumerate(names)},
    )
    svg = history_svg(table)  # type: ignore[arg-type]
    drawn = names[:HISTORY_LINES]
    with page_at(browser, 1400) as (page, errors):
        page.set_content(f"<!DOCTYPE html><html><body>{svg}</body></html>")
        lines = page.locator("svg.history-plot g.history-line")
        legend = page.locator("svg.history-plot g.legend")
        assert [lines.nth(i).get_attribute("data-player") for i in range(lines.count())] == drawn
        texts = [legend.nth(i).locator("text").text_content() for i in range(legend.count())]
        assert texts == drawn
        styles = [lines.nth(i).get_attribute("data-style") for i in range(lines.count())]
        assert len(set(styles)) == len(drawn)  # no two lines look alike
        for i in range(legend.count()):  # the entry's swatch is its line's style
            swatch = legend.nth(i).locator("line")
            line = lines.nth(i).locator("polyline")
            for attr in ("stroke", "stroke-dasharray"):
                assert swatch.get_attribute(attr) == line.get_attribute(attr)
        inside = page.evaluate(
            """() => { const svg = document.querySelector('svg.history-plot');
            const box = svg.getBoundingClientRect();
            return [...svg.querySelectorAll('g.legend text, text.left-out')].every(t => {
                const r = t.getBoundingClientRect();
                return r.top >= box.top && r.bottom <= box.bottom && r.right <= box.right; }); }"""
        )
        assert inside
        more = page.locator("svg.history-plot text.left-out")
        if players > HISTORY_LINES:
            assert more.text_content() == f"and {players - HISTORY_LINES} more (the table)"
        else:
            assert more.count() == 0
        assert errors == []


def test_an_entry_that_never_gave_an_identity_is_not_rated(
    cups: dict[str, Path], tmp_path: Path
) -> None:
    """Games an arena before the pre-flight stored for a bot that never started: its
    entry has no identity in any of them, while its opponent has one. Its games say
    nothing of either side's strength: left out, with a note (they used to be rated
    under the entry name, and its opponent's wins with them)."""
    with Store.open_existing(cups["b"]) as store:
        records = list(store.records())
    ghost = tmp_path / "results" / "ghost-cup"
    with Store.open(ghost, name="ghost-cup", config_text="", fingerprint="f") as store:
        for i, record in enumerate(records):
            side = record.players.index("random-x")
            record.players[side] = "ghost"
            record.identities[side] = {}  # it never answered hello
            record.score, record.reason, record.faulty = float(side), "crash", side
            store.add_game(f"g{i}", f"p{i}", record)
    before = build_list([cups["b"]], cache_dir=None)
    data = build_list([cups["b"], ghost], cache_dir=None)
    (table,) = data.tables
    assert sorted(r.player for r in table.rows) == [GREEDY, RANDOM]
    assert table.row(GREEDY).games == before.tables[0].row(GREEDY).games == 4
    notes = [n for n in data.notes if "ghost" in n]
    assert len(notes) == 1 and f"{len(records)} games left out" in notes[0], data.notes
    assert "never gave an identity" in notes[0]
