"""Where analysis lives: ``analysis.sqlite`` beside a tournament's ``games.sqlite``.

The games are only ever read (SQLite's read-only mode, so an analysis can
never change a game record, even while ``arena run`` writes more). Each
analysed game is one row, written in its own transaction the moment its
values arrive (WAL), so an analysis interrupted or killed loses at most the
games in flight and the next run goes on from there. The file is derived
data: deleting it only means analysing again.

A row is keyed by the game's key and remembers a digest of the game's
record and the budget it was solved with: a game whose record changed (a
results folder played again from scratch) or that was solved with a smaller
budget than asked is analysed again; one solved with a larger budget is kept.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import msgspec

import arena
from arena.analysis.values import GameValues
from arena.match.record import GameRecord
from arena.storage.safefile import refuse_link
from arena.storage.schema import check_version, schema_version
from arena.storage.store import (
    DB_NAME,
    READABLE_VERSIONS,
    ReadConnection,
    StoreError,
    check_tables,
    refuse_linked,
    sql_error_text,
)

ANALYSIS_NAME = "analysis.sqlite"
ANALYSIS_SCHEMA = 1
ANALYSIS_TABLES = ("meta", "games")
"""What the arena reads of an analysis: plain tables only (``check_tables``)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    key           TEXT PRIMARY KEY,
    digest        TEXT NOT NULL,
    budget_ms     REAL NOT NULL,
    positions     INTEGER NOT NULL,
    proven        INTEGER NOT NULL,
    blunders      INTEGER NOT NULL,
    missed        INTEGER NOT NULL,
    nodes         INTEGER NOT NULL,
    seconds       REAL NOT NULL,
    arena_version TEXT NOT NULL,
    analysed_at   TEXT NOT NULL,
    "values"      TEXT NOT NULL
);
"""

_decoder = msgspec.json.Decoder(GameValues)
_encoder = msgspec.json.Encoder()


def digest(record_text: str) -> str:
    """A record's fingerprint (its stored JSON text)."""
    return hashlib.blake2b(record_text.encode(), digest_size=12).hexdigest()


def _other_version(path: Path, found: str) -> str:
    return (
        f"{path}: written by another arena version (analysis schema {found}, this arena's "
        f"is {ANALYSIS_SCHEMA}); delete it to analyse again"
    )


def _file_key(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _ro_uri(path: Path) -> str:
    return f"file:{quote(str(path.resolve()))}?mode=ro"


class GamesReader:
    """A tournament's games, read-only: what analysis reads and never writes."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        if not self.directory.is_dir():
            raise StoreError(f"{self.directory}: no such results folder")
        refuse_linked(self.path)
        if not self.path.is_file():
            raise StoreError(f"{self.directory}: no results (no {DB_NAME}); run a tournament first")
        try:
            self._conn = sqlite3.connect(
                _ro_uri(self.path), uri=True, timeout=30.0, factory=ReadConnection
            )
            check_tables(self._conn, self.path)
            version = schema_version(self._conn, self.path)
            name = self._conn.execute("SELECT name, config_toml FROM tournament").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: not a usable results database ({sql_error_text(exc)})"
            ) from None
        # A version-1 store (before the rating list's columns) holds the same
        # records: read as it is, never migrated here.
        check_version(
            self.path, version, READABLE_VERSIONS, "; analyse it with the arena that wrote it"
        )
        if name is None:
            raise StoreError(f"{self.path} holds no tournament")
        self.tournament_name: str = name[0]
        self.config_text: str = name[1]
        """The tournament file's text as stored."""
        self._decoder = msgspec.json.Decoder(GameRecord)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> GamesReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def count(self) -> int:
        (n,) = self._conn.execute("SELECT count(*) FROM games").fetchone()
        return int(n)

    def first_game(self) -> str | None:
        """The game name of the first stored record (a tournament plays one game)."""
        row = self._conn.execute("SELECT record FROM games ORDER BY rowid LIMIT 1").fetchone()
        if row is None:
            return None
        return self.decode("first game", row[0]).game

    def decode(self, key: str, text: str) -> GameRecord:
        try:
            return self._decoder.decode(text)
        except msgspec.DecodeError as exc:
            raise StoreError(
                f"{self.path}: game {key} is not a record this arena reads ({exc})"
            ) from None

    def rows(self) -> Iterator[tuple[str, str]]:
        """``(key, record text)`` of every game in stored order, in chunks."""
        last = 0
        while True:
            chunk = self._conn.execute(
                "SELECT rowid, key, record FROM games WHERE rowid > ? ORDER BY rowid LIMIT 500",
                (last,),
            ).fetchall()
            if not chunk:
                return
            for rowid, key, text in chunk:
                last = rowid
                yield key, text


class AnalysisStore:
    """``analysis.sqlite``: one row per analysed game. Open it to write with
    :meth:`open`, to read (reports, the web view) with :meth:`open_readonly`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._lock = threading.Lock()
        self._lock_fd: int | None = None

    @classmethod
    def open(cls, directory: str | os.PathLike[str]) -> AnalysisStore:
        """Open (or create) the analysis to write it; one writer at a time: a second
        ``arena analyze`` of the same folder stops at once (an ``flock`` on the file)."""
        path = Path(directory) / ANALYSIS_NAME
        refuse_link(path)  # SQLite would follow it (its -wal and -shm it never follows)
        try:
            lock = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(os.fstat(lock).st_mode):
            os.close(lock)
            raise StoreError(f"{path} is not a regular file; remove it and run again")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(lock)
            raise StoreError(
                f"{path} is being written by another arena analyze; wait for it to end"
            ) from None
        try:
            if _file_key(os.fstat(lock)) != _file_key(os.lstat(path)):
                raise StoreError(f"{path} was replaced while being opened; run again")
            store = cls._open(path)
        except BaseException:
            os.close(lock)
            raise
        store._lock_fd = lock
        return store

    @classmethod
    def _open(cls, path: Path) -> AnalysisStore:
        try:
            conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            check_tables(conn, path, ANALYSIS_TABLES)
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            except sqlite3.OperationalError:
                row = None  # a new file
            if row is not None and row[0] != str(ANALYSIS_SCHEMA):
                conn.close()
                raise StoreError(_other_version(path, row[0]))
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                (str(ANALYSIS_SCHEMA),),
            )
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: cannot write the analysis ({exc})") from None
        store = cls(path, conn)
        store._check_version()
        return store

    @classmethod
    def open_readonly(cls, directory: str | os.PathLike[str]) -> AnalysisStore | None:
        """The analysis of a results folder, or ``None`` when it has none."""
        path = Path(directory) / ANALYSIS_NAME
        refuse_linked(path)
        if not path.is_file():
            return None
        try:
            conn = sqlite3.connect(
                _ro_uri(path),
                uri=True,
                timeout=30.0,
                check_same_thread=False,
                factory=ReadConnection,
            )
            check_tables(conn, path, ANALYSIS_TABLES)
            conn.execute("SELECT count(*) FROM games").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{path}: not a usable analysis ({sql_error_text(exc)}); delete it"
            ) from None
        store = cls(path, conn)
        store._check_version()
        return store

    def _check_version(self) -> None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or row[0] != str(ANALYSIS_SCHEMA):
            self._conn.close()
            raise StoreError(_other_version(self.path, "none" if row is None else row[0]))

    def close(self) -> None:
        self._conn.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> AnalysisStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def done(self) -> dict[str, tuple[str, float]]:
        """``key -> (digest, budget_ms)`` of every analysed game."""
        with self._lock:
            rows = self._conn.execute("SELECT key, digest, budget_ms FROM games").fetchall()
        return {key: (d, b) for key, d, b in rows}

    def put(
        self, key: str, record_digest: str, values: GameValues, blunders: int, missed: int
    ) -> None:
        """One game's analysis, in its own transaction."""
        row = (
            key,
            record_digest,
            values.budget_ms,
            values.positions,
            values.proven,
            blunders,
            missed,
            values.nodes,
            values.seconds,
            arena.__version__,
            _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            _encoder.encode(values).decode(),
        )
        try:
            with self._lock:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.execute(
                    "INSERT OR REPLACE INTO games (key, digest, budget_ms, positions, proven,"
                    ' blunders, missed, nodes, seconds, arena_version, analysed_at, "values")'
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from None

    def values(self, key: str) -> GameValues | None:
        with self._lock:
            row = self._conn.execute('SELECT "values" FROM games WHERE key = ?', (key,)).fetchone()
        return None if row is None else _decoder.decode(row[0])

    def all_values(self) -> Iterator[tuple[str, str, GameValues]]:
        """``(key, digest, values)`` of every analysed game."""
        with self._lock:
            rows = self._conn.execute('SELECT key, digest, "values" FROM games').fetchall()
        for key, d, text in rows:
            yield key, d, _decoder.decode(text)

    def with_blunders(self) -> set[str]:
        """Keys of the games with at least one blunder."""
        with self._lock:
            rows = self._conn.execute("SELECT key FROM games WHERE blunders > 0").fetchall()
        return {key for (key,) in rows}
