"""The results database: round trips, idempotent inserts, resume, crash safety."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import arena
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
