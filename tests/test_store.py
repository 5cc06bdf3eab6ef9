"""The results database: round trips, idempotent inserts, resume, crash safety."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import msgspec
import pytest

import arena
import arena.storage.schema as schema_module
from arena.match.record import ActionRecord, GameRecord
from arena.storage.export import EXPORT_SCHEMA, export_jsonl
from arena.storage.store import (
    DB_NAME,
    SCHEMA_VERSION,
    ConfigMismatchError,
    Store,
    StoreError,
    default_directory,
)

CONFIG = 'name = "cup"\n[[bots]]\nname = "a"\ncommand = "x"\n'


def record(p0: str = "alpha", p1: str = "beta", score: float = 1.0, **kw: object) -> GameRecord:
    fields: dict[str, object] = {
        "game": "fake",
        "variant": "standard",
        "players": [p0, p1],
        "opening": "fake:standard:",
        "actions": [
            ActionRecord(player=0, action="a", ms=12),
            ActionRecord(player=1, action="b", ms=30, info={"depth": 3}),
        ],
        "score": score,
        "reason": "done",
        "time_control": "10+0.1",
        "stderr_tails": ["", "warning"],
        "started_at": 1.5,
        "ended_at": 9.25,
    }
    fields.update(kw)
    return GameRecord(**fields)  # type: ignore[arg-type]


V1_COLUMNS = [
    "key",
    "pair_key",
    "player0",
    "player1",
    "score",
    "reason",
    "faulty",
    "plies",
    "started_at",
    "ended_at",
    "stored_at",
    "record",
]


V1_OBJECTS = [
    "games",
    "games_pair",
    "meta",
    "sqlite_autoindex_games_1",
    "sqlite_autoindex_meta_1",
    "tournament",
]
"""The tables and indexes of a schema-version-1 store."""


def as_version_1(db: Path) -> None:
    """Make a store what an arena of schema version 1 wrote: the games table
    without the version-2 columns, no ``game_counts``, version 1 in ``meta``."""
    with closing(sqlite3.connect(db)) as conn:
        with conn:
            conn.execute("DROP TABLE game_counts")
            for column in ("game", "variant", "time_control", "identity0", "identity1"):
                conn.execute(f"ALTER TABLE games DROP COLUMN {column}")
            conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        conn.execute("VACUUM")
        assert [row[1] for row in conn.execute("PRAGMA table_info(games)")] == V1_COLUMNS
    assert _schema(db) == ("1", V1_OBJECTS)


def _schema(db: Path) -> tuple[str, list[str]]:
    """The store's schema version and its tables and indexes."""
    with closing(sqlite3.connect(db)) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        names = conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'index')"
        ).fetchall()
    return version[0], sorted(n for (n,) in names)


def open_store(directory: Path, fingerprint: str = "f1", **kw: object) -> Store:
    return Store.open(directory, name="cup", config_text=CONFIG, fingerprint=fingerprint, **kw)  # type: ignore[arg-type]


def test_round_trip(tmp_path: Path) -> None:
    rec = record(detail="reached home row", outcome={"points": 1}, final_position="fake:x")
    with open_store(tmp_path) as store:
        assert store.add_game("r1:alpha:beta/1", "r1:alpha:beta", rec) is True
        assert store.game("r1:alpha:beta/1") == rec
        assert store.game("missing") is None
        assert list(store.records()) == [rec]
        info = store.tournament
        assert info.name == "cup"
        assert info.config_text == CONFIG
        assert info.arena_version == arena.__version__
        assert info.created_at
    assert (tmp_path / DB_NAME).is_file()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        row = conn.execute("SELECT player0, player1, score, reason, plies FROM games").fetchone()
        assert row == ("alpha", "beta", 1.0, "done", 2)
        version = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        assert version == (str(SCHEMA_VERSION),)


def test_duplicate_insert_keeps_the_first(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        assert store.add_game("k/1", "k", record(score=1.0)) is True
        assert store.add_game("k/1", "k", record(score=0.0)) is False
        assert store.count() == 1
        assert store.game("k/1").score == 1.0  # type: ignore[union-attr]


def test_resume_keys_survive_reopen(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.add_game("r1:a:b/1", "r1:a:b", record("a", "b"))
        store.add_game("r1:a:b/2", "r1:a:b", record("b", "a"))
    with open_store(tmp_path) as store:
        assert store.finished_keys() == {"r1:a:b/1", "r1:a:b/2"}
        store.add_game("r1:a:c/1", "r1:a:c", record("a", "c"))
    with Store.open_existing(tmp_path) as store:
        assert len(store.finished_keys()) == 3


def test_config_mismatch_detected(tmp_path: Path) -> None:
    open_store(tmp_path, "f1").close()
    with pytest.raises(ConfigMismatchError, match="different config"):
        open_store(tmp_path, "f2")
    with pytest.raises(ConfigMismatchError, match="tournament 'cup', not 'other'"):
        Store.open(tmp_path, name="other", config_text=CONFIG, fingerprint="f1")
    with open_store(tmp_path, "f2", force=True) as store:
        assert store.tournament.fingerprint == "f2"
    open_store(tmp_path, "f2").close()  # the forced config is now the tournament's


def test_open_existing_requires_a_database(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results database"):
        Store.open_existing(tmp_path)
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable results database"):
        Store.open_existing(tmp_path)


def test_newer_schema_refused(tmp_path: Path) -> None:
    open_store(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 99"):
        open_store(tmp_path)


def test_export_jsonl(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    with open_store(tmp_path / "db") as store:
        store.add_game("p/1", "p", record("a", "b", 1.0))
        store.add_game("p/2", "p", record("b", "a", 0.5))
        assert export_jsonl(store, out) == 2
    lines = out.read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["schema"] == EXPORT_SCHEMA and first["tournament"] == "cup"
    assert first["key"] == "p/1" and first["pair_key"] == "p"
    assert first["players"] == ["a", "b"] and first["score"] == 1.0
    assert first["actions"][1] == {
        "player": 1,
        "action": "b",
        "ms": 30,
        "forced": False,
        "info": {"depth": 3},
        "cpu_ms": None,  # no cgroup counted this test's CPU
        "rtt_ms": None,  # a local bot: no connection's round trip
    }
    assert first["figures"] == {}  # no final position: nothing to figure
    assert json.loads(lines[1])["score"] == 0.5
    assert not (tmp_path / "games.jsonl.tmp").exists()


def test_pair_results(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        store.add_game("p/1", "p", record("a", "b", 1.0))
        store.add_game("p/2", "p", record("b", "a", 0.5))
        store.add_game("q/1", "q", record("a", "c", 0.0, reason="time", faulty=0))
        store.add_game("q/2", "q", record("c", "a", 1.0, reason="crash", faulty=1))
        store.add_game("r/1", "r", record("b", "c", 0.0, reason="crash", faulty=0))
        store.add_game("s/1", "s", record("b", "c", 0.5))  # its pair is not finished
        assert sorted(store.pair_results()) == [("a", "b", 1.0, 0.5), ("a", "c", 0.0, 0.0)]


def test_default_directory() -> None:
    assert default_directory("cup") == Path("results/cup")


CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[2])
    from test_store import open_store, record

    store = open_store(Path(sys.argv[1]))
    store.add_game("r1:a:b/1", "r1:a:b", record("a", "b"))
    # A second game stays mid-transaction when the kill arrives.
    store._conn.execute("BEGIN IMMEDIATE")
    store._conn.execute(
        "INSERT INTO games (key, pair_key, player0, player1, score, reason, faulty, plies,"
        " started_at, ended_at, stored_at, record) VALUES"
        " ('r1:a:b/2', 'r1:a:b', 'b', 'a', 1, 'done', NULL, 0, 0, 0, '', '{}')"
    )
    print("committed", flush=True)
    time.sleep(60)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_committed_game_survives_sigkill(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path), str(Path(__file__).parent)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "committed"
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with Store.open_existing(tmp_path) as store:
        assert store.integrity_check() == "ok"
        assert store.finished_keys() == {"r1:a:b/1"}
        assert store.game("r1:a:b/1") == record("a", "b")


def _v2_columns(db: Path) -> list[tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(
            "SELECT key, game, variant, time_control, identity0, identity1 FROM games ORDER BY key"
        ).fetchall()


def _counts(db: Path) -> list[tuple]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute(
            "SELECT * FROM game_counts ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9"
        ).fetchall()


V2_OBJECTS = sorted([*V1_OBJECTS, "game_counts"])


def _bytes_and_mtime(db: Path) -> tuple[bytes, int]:
    return db.read_bytes(), db.stat().st_mtime_ns


GAMES = [
    ("r1:a:b/1", record("a", "b", 1.0, identities=[{"name": "A", "version": "2"}, {}])),
    ("r1:a:b/2", record("b", "a", 0.5, variant="match", time_control="60+1")),
    ("r2:a:c/1", record("a", "c", 0.0, identities=[{"name": "A"}, {"name": "C", "author": "x"}])),
]


def test_a_new_store_keeps_the_rating_columns_and_counts(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        for key, rec in GAMES:
            store.add_game(key, key[:-2], rec)
        assert store.add_game(*GAMES[0][:1], "r1:a:b", GAMES[0][1]) is False  # not counted
        assert store.add_game("r3:a:b/1", "r3:a:b", GAMES[0][1]) is True  # the same kind
        late = msgspec.structs.replace(GAMES[0][1], started_at=86400.0 * 2 + 5)
        assert store.add_game("r4:a:b/1", "r4:a:b", late) is True  # two days later
    db = tmp_path / DB_NAME
    assert _v2_columns(db)[:3] == [
        ("r1:a:b/1", "fake", "standard", "10+0.1", '{"name":"A","version":"2"}', "{}"),
        ("r1:a:b/2", "fake", "match", "60+1", "", ""),
        ("r2:a:c/1", "fake", "standard", "10+0.1", '{"name":"A"}', '{"name":"C","author":"x"}'),
    ]
    a = ("fake", "standard", "10+0.1")
    assert _counts(db) == [
        ("a", "b", '{"name":"A","version":"2"}', "{}", *a, 1.0, 0, 2),
        ("a", "b", '{"name":"A","version":"2"}', "{}", *a, 1.0, 2, 1),
        ("a", "c", '{"name":"A"}', '{"name":"C","author":"x"}', *a, 0.0, 0, 1),
        ("b", "a", "", "", "fake", "match", "60+1", 0.5, 0, 1),
    ]
    assert _schema(db) == ("2", V2_OBJECTS)


def test_a_version_1_store_is_read_as_it_is_and_migrated_when_a_run_resumes(
    tmp_path: Path,
) -> None:
    new = tmp_path / "new"
    with open_store(new) as store:
        for key, rec in GAMES:
            store.add_game(key, key[:-2], rec)
    old = tmp_path / "old"
    shutil.copytree(new, old)
    db = old / DB_NAME
    as_version_1(db)
    # Readers take it as it is, and write nothing (not even the WAL mode).
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    before = _bytes_and_mtime(db)
    with Store.open_existing(old) as store:
        assert store.finished_keys() == {key for key, _ in GAMES}
        assert sorted(store.items()) == sorted(GAMES)
        assert store.pair_results() == [("a", "b", 1.0, 0.5)]
    assert _bytes_and_mtime(db) == before
    assert _schema(db) == ("1", V1_OBJECTS)
    # A resumed run migrates it: the same games, and the columns and counts a new
    # store has.
    with open_store(old) as store:
        assert sorted(store.items()) == sorted(GAMES)
        assert store.add_game("r2:a:c/2", "r2:a:c", record("c", "a", 1.0)) is True
    with open_store(new) as store:
        store.add_game("r2:a:c/2", "r2:a:c", record("c", "a", 1.0))
    assert _schema(db) == ("2", V2_OBJECTS)
    assert _v2_columns(db) == _v2_columns(new / DB_NAME)
    assert _counts(db) == _counts(new / DB_NAME)
    assert sum(row[-1] for row in _counts(db)) == 4


def test_a_failed_migration_leaves_the_store_at_version_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(tmp_path) as store:
        for key, rec in GAMES:
            store.add_game(key, key[:-2], rec)
    as_version_1(tmp_path / DB_NAME)
    monkeypatch.setattr(schema_module, "_GAME_COUNTS", "CREATE INDEX broken ON nowhere (x)")
    with pytest.raises(StoreError, match="cannot bring schema version 1 to 2 .*nowhere.*unchanged"):
        open_store(tmp_path)
    assert _schema(tmp_path / DB_NAME) == ("1", V1_OBJECTS)
    with closing(sqlite3.connect(tmp_path / DB_NAME)) as conn:
        assert [row[1] for row in conn.execute("PRAGMA table_info(games)")] == V1_COLUMNS
    monkeypatch.undo()
    with open_store(tmp_path) as store:
        assert store.count() == 3


def test_an_older_arena_is_told_the_schema_in_one_line(tmp_path: Path) -> None:
    open_store(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    for opening in (lambda: open_store(tmp_path), lambda: Store.open_existing(tmp_path)):
        with pytest.raises(StoreError, match="schema version 3, this arena reads 2$"):
            opening()


def test_every_reader_of_a_store_refuses_its_version_alike(tmp_path: Path) -> None:
    """The store, the analysis and the rating list read one results database: one
    check of its schema version (``storage/schema.py``), one line."""
    from arena.analysis.store import GamesReader
    from arena.ratinglist.collect import RatingInputError, read_store

    open_store(tmp_path).close()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    line = f"{tmp_path / DB_NAME}: written by another arena version, schema version 3, "
    line += "this arena reads 2"
    errors = []
    for reading in (
        lambda: Store.open_existing(tmp_path),
        lambda: GamesReader(tmp_path),
        lambda: read_store(tmp_path),
    ):
        with pytest.raises((StoreError, RatingInputError)) as caught:
            reading()
        errors.append(str(caught.value))
    assert errors == [line, f"{line}; analyse it with the arena that wrote it", line]
