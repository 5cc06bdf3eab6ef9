"""The results database: one SQLite file per tournament, one transaction per game.

Layout: ``<directory>/games.sqlite``, where the directory is usually
``results/<tournament name>``. Every finished game is one row holding the
summary columns that reports and ratings query, plus the whole ``GameRecord``
as JSON so that any game can be replayed and audited later.

Schema versions (``meta.schema_version``): 1 had the summary columns and the
record; 2 adds the game, variant, time control and both bots' identities as
columns, and ``game_counts``, the games counted by kind, which the rating list
reads instead of the records (see ``SCHEMA_VERSION``). ``Store.open`` (a run,
or its resume) migrates a version-1 store in one transaction;
``Store.open_existing`` (reports, exports) reads either through a read-only
connection and changes nothing. An arena that reads only version 1 refuses a
migrated store in one line ("schema version 2, this arena reads 1").

Durability: the database runs in WAL mode with ``synchronous=FULL``. A game
whose ``add_game`` call has returned is committed; WAL alone already makes a
committed transaction survive the arena being killed with SIGKILL (the WAL
frames are in the OS page cache and are replayed on the next open), and FULL
adds an fsync of the WAL at every commit so it also survives power loss. One
fsync per game is cheap next to a game that lasts seconds, and a tournament
that runs overnight should not lose results to a power cut.

Concurrency: the store is written from a trio program. Every call is short and
synchronous (one game per call, a few milliseconds including the fsync), so the
runner may call it directly from a task; it may also call it from worker
threads (``trio.to_thread.run_sync``) because a lock serialises access to the
single connection. Only one arena process writes a tournament at a time:
``Store.open`` takes an exclusive ``flock`` on ``<directory>/lock`` (holding the
writer's pid) for as long as the store is open, so a second ``arena run`` of the
same folder stops at once, naming the first one's pid. Readers (reports) take
no lock and may open the file concurrently thanks to WAL.

The disk under a long run: ``Store.open`` writes once before returning, so a
folder or database that cannot be written is refused before any bot starts.
Before and after each game's transaction the store checks that its file is
still the one it opened (device and inode). If the database was deleted (the
folder removed, say) or replaced, the connection still holds the old file, so
nothing is lost yet: the store copies it whole (SQLite's backup API, this
game included) to ``games.sqlite`` again, or, when another file now sits
there, beside it as ``games.recovered-<pid>.sqlite``; it then writes on into
that copy and raises :class:`DatabaseMovedError`, which stops the run with one
line. A rerun resumes from the restored file. Every ``sqlite3`` error becomes
a one-line :class:`StoreError`.

The tables, versions and migration are ``schema.py``; the guards every reader of a
store from elsewhere goes through, ``reading.py`` (their names are re-exported here,
where their callers have always found them).
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import NamedTuple, ParamSpec, TypeVar
from urllib.parse import quote

import msgspec

import arena
from arena.match.record import GameRecord
from arena.storage.reading import (
    READ_SECONDS,
    STORE_TABLES,
    ReadConnection,
    StoreError,
    check_tables,
    refuse_linked,
    sql_error_text,
)
from arena.storage.schema import (
    GAME_DAY,
    READABLE_VERSIONS,
    SCHEMA,
    SCHEMA_VERSION,
    check_version,
    game_row,
    insert_game,
    migrate_v1,
    now_text,
    schema_version,
    transaction,
)

__all__ = [
    "DB_NAME",
    "GAME_DAY",
    "READABLE_VERSIONS",
    "SCHEMA_VERSION",
    "ConfigMismatchError",
    "DatabaseMovedError",
    "LOCK_NAME",
    "READ_SECONDS",
    "ReadConnection",
    "STORE_TABLES",
    "Store",
    "StoreError",
    "TournamentInfo",
    "check_tables",
    "refuse_linked",
    "sql_error_text",
    "default_directory",
    "game_row",
    "insert_game",
]

DB_NAME = "games.sqlite"
LOCK_NAME = "lock"


class TournamentInfo(NamedTuple):
    """The tournament a store holds: its name, its file's text as stored, the
    schedule's fingerprint, and the arena version and time that created it."""

    name: str
    config_text: str
    fingerprint: str
    arena_version: str
    created_at: str


class ConfigMismatchError(StoreError):
    """The tournament directory holds games played under a different config."""


class DatabaseMovedError(StoreError):
    """The database file was deleted or replaced during the run; its games were
    written again (the message says where) and the run must stop."""


P = ParamSpec("P")
R = TypeVar("R")


def _sql_errors(method: Callable[P, R]) -> Callable[P, R]:
    """Turn any ``sqlite3`` error (disk full, I/O error, read-only...) into one line."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as exc:
            store = args[0]
            path = getattr(store, "path", "results database")
            raise StoreError(f"{path}: {sql_error_text(exc)}") from None

    return wrapper


def _take_lock(directory: Path) -> int:
    """An exclusive ``flock`` on ``directory/lock`` holding our pid; the open fd.

    The lock lives as long as the fd (the kernel drops it when the process dies,
    however it dies), so a stale lock file from a killed run is harmless.
    """
    path = directory / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if os.path.islink(path):
            raise StoreError(
                f"{path} is a symbolic link; the arena writes no file through one: "
                "remove it and run again"
            ) from None
        raise StoreError(
            f"cannot write the results folder {directory}: {exc.strerror or exc}"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise StoreError(
                f"{directory} is in use by another arena run (pid {holder}); wait for it "
                "to end or use another results folder"
            ) from None
        raise StoreError(f"cannot lock {path}: {exc.strerror or exc}") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as exc:
        os.close(fd)
        raise StoreError(
            f"cannot write the results folder {directory}: {exc.strerror or exc}"
        ) from None
    return fd


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def default_directory(name: str, root: str | os.PathLike[str] = "results") -> Path:
    """``results/<tournament name>``: where a tournament's database lives by default."""
    return Path(root) / name


class Store:
    """One tournament's results database. Use ``Store.open`` or ``Store.open_existing``."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._conn = connection
        self._lock = threading.Lock()
        self._lock_fd: int | None = None
        """The results-folder lock of a writing store (``Store.open``)."""
        self._file_id = _file_id(path)
        """Device and inode of the file the connection opened."""

    # -- opening ------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        *,
        name: str,
        config_text: str,
        fingerprint: str,
        force: bool = False,
    ) -> Store:
        """Create the database for a new tournament, or reopen it to resume.

        ``fingerprint`` identifies the schedule-relevant config (see
        ``arena.plan.schedule.schedule_fingerprint``). Reopening with a different
        fingerprint raises ``ConfigMismatchError``: its finished games belong to
        another schedule and would be silently mixed in. With ``force`` the new
        config replaces the stored one and the run goes on.
        """
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the results folder {directory}: {exc.strerror or exc}"
            ) from None
        lock_fd = _take_lock(directory)
        try:
            if os.path.islink(directory / DB_NAME):  # SQLite would write where it points
                raise StoreError(
                    f"{directory / DB_NAME} is a symbolic link; the arena writes no file "
                    "through one: remove it and run again"
                )
            store = cls._connect(directory / DB_NAME)
        except BaseException:
            os.close(lock_fd)
            raise
        store._lock_fd = lock_fd
        try:
            store._init_tournament(name, config_text, fingerprint, force)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def open_existing(cls, directory: str | os.PathLike[str]) -> Store:
        """Open a tournament's database for reading (reports, exports, ratings).

        The connection is read-only and changes nothing: a version-1 store stays
        one (only ``Store.open``, which resumes a run, migrates it).
        """
        path = Path(directory) / DB_NAME
        refuse_linked(path)
        if not path.is_file():
            raise StoreError(f"no results database at {path}")
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(
                uri,
                uri=True,
                timeout=30.0,
                isolation_level=None,
                check_same_thread=False,
                factory=ReadConnection,
            )
        except sqlite3.Error as e:
            raise StoreError(f"{path}: cannot open the results database ({e})") from None
        store = cls(path, conn)
        try:
            check_tables(conn, path)
            check_version(path, schema_version(conn, path), READABLE_VERSIONS)
            if store._tournament_row() is None:
                raise StoreError(f"{path} holds no tournament")
        except sqlite3.DatabaseError as e:
            store.close()
            raise StoreError(
                f"{path}: not a usable results database ({sql_error_text(e)})"
            ) from None
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def _connect(cls, path: Path) -> Store:
        """A writer's connection, the schema made (a new file) or migrated to
        this version (a version-1 store)."""
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, one per game.
        try:
            conn = sqlite3.connect(
                path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as e:
            raise StoreError(f"{path}: cannot open the results database ({e})") from None
        try:
            check_tables(conn, path)  # a received folder resumed: no view runs here
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            version = schema_version(conn, path)
            if version is None:  # a new file
                conn.executescript(SCHEMA)
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif version == 1:
                try:
                    migrate_v1(conn)
                except sqlite3.Error as e:  # a full disk, say: the transaction rolled back
                    raise StoreError(
                        f"{path}: cannot bring schema version 1 to {SCHEMA_VERSION} ({e}); "
                        "the store is unchanged"
                    ) from None
            else:
                check_version(path, version, (SCHEMA_VERSION,))
        except sqlite3.DatabaseError as e:
            conn.close()
            raise StoreError(f"{path}: not a usable results database ({e})") from None
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    def _tournament_row(self) -> TournamentInfo | None:
        row = self._conn.execute(
            "SELECT name, config_toml, fingerprint, arena_version, created_at FROM tournament"
        ).fetchone()
        return None if row is None else TournamentInfo(*row)

    def _init_tournament(self, name: str, config_text: str, fingerprint: str, force: bool) -> None:
        try:
            self._init_tournament_rows(name, config_text, fingerprint, force)
        except sqlite3.Error as exc:  # read-only file, full disk...
            raise StoreError(f"cannot write {self.path}: {exc}") from None

    def _init_tournament_rows(
        self, name: str, config_text: str, fingerprint: str, force: bool
    ) -> None:
        with self._lock, transaction(self._conn):
            row = self._tournament_row()
            now = now_text()
            if row is None:
                self._conn.execute(
                    "INSERT INTO tournament (id, name, config_toml, fingerprint, arena_version,"
                    " created_at, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?)",
                    (name, config_text, fingerprint, arena.__version__, now, now),
                )
                return
            old_name, _, old_fingerprint, _, created = row
            if (old_name, old_fingerprint) == (name, fingerprint):
                # A write on every open: a database that cannot be written is
                # found now, before any bot starts, not when the first game ends.
                self._conn.execute("UPDATE tournament SET updated_at = ? WHERE id = 1", (now,))
                return
            if not force:
                what = (
                    f"tournament {old_name!r}, not {name!r}"
                    if old_name != name
                    else f"games of {name!r} played under a different config"
                )
                raise ConfigMismatchError(
                    f"{self.path} holds {what} (created {created}); restore the original "
                    "file, use another results directory, or run with --force to continue anyway"
                )
            self._conn.execute(
                "UPDATE tournament SET name = ?, config_toml = ?, fingerprint = ?,"
                " arena_version = ?, updated_at = ? WHERE id = 1",
                (name, config_text, fingerprint, arena.__version__, now),
            )

    def close(self) -> None:
        self._conn.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the folder lock
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- tournament ---------------------------------------------------------------------

    @property
    @_sql_errors
    def tournament(self) -> TournamentInfo:
        """What the store says of its tournament (read anew: ``--force`` replaces it)."""
        with self._lock:
            row = self._tournament_row()
        if row is None:
            raise StoreError(f"{self.path} holds no tournament")
        return row

    # -- writing ------------------------------------------------------------------------

    @_sql_errors
    def add_game(self, key: str, pair_key: str, record: GameRecord) -> bool:
        """Store one finished game in its own transaction; True if it was new.

        A key already present keeps its first record (a resumed or retried run
        may finish a game twice; the first result stands), and False is returned.
        When this returns, the game is durable.
        """
        row = game_row(key, pair_key, record)
        with self._lock:
            moved = self._file_id != _file_id(self.path)
            with transaction(self._conn):
                new = insert_game(self._conn, row)
            if moved or self._file_id != _file_id(self.path):
                self._recover()
            return new

    @_sql_errors
    def check_file(self) -> None:
        """Raise :class:`DatabaseMovedError` (after writing the games again) if
        the database file is no longer the one this store opened."""
        with self._lock:
            if self._file_id != _file_id(self.path):
                self._recover()

    def _recover(self) -> None:
        """The file was deleted or replaced: copy what the connection still holds
        to a file at the path (or beside it), write on into that copy, and stop."""
        path = self.path
        gone = _file_id(path) is None
        target = path if gone else path.with_name(f"games.recovered-{os.getpid()}.sqlite")
        what = "deleted" if gone else "replaced by another file"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if gone and self._lock_fd is not None:  # the folder's lock file went too
                os.close(self._lock_fd)
                self._lock_fd = None
                self._lock_fd = _take_lock(path.parent)
            if os.path.islink(target):
                raise StoreError(f"{target} is a symbolic link; nothing is written through one")
            copy = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
            self._conn.backup(copy)
            copy.execute("PRAGMA journal_mode=WAL")
            copy.execute("PRAGMA synchronous=FULL")
            games = copy.execute("SELECT count(*) FROM games").fetchone()[0]
        except (OSError, sqlite3.Error, StoreError) as exc:
            raise DatabaseMovedError(
                f"{path} was {what} during the run, and its games could not be written "
                f"again to {target}: {exc}"
            ) from None
        self._conn.close()
        self._conn = copy
        self.path = target
        self._file_id = _file_id(target)
        resume = "run the same command again to resume" if gone else "it is not merged"
        raise DatabaseMovedError(
            f"{path} was {what} during the run; its {games} games were written again "
            f"to {target}; {resume}"
        )

    # -- reading ------------------------------------------------------------------------

    @_sql_errors
    def finished_keys(self) -> set[str]:
        """Keys of every stored game, for resuming: these are not played again."""
        with self._lock:
            return {key for (key,) in self._conn.execute("SELECT key FROM games")}

    @_sql_errors
    def count(self) -> int:
        with self._lock:
            (n,) = self._conn.execute("SELECT count(*) FROM games").fetchone()
            return int(n)

    @_sql_errors
    def game(self, key: str) -> GameRecord | None:
        """The record of one game, or None."""
        with self._lock:
            row = self._conn.execute("SELECT record FROM games WHERE key = ?", (key,)).fetchone()
        return None if row is None else msgspec.json.decode(row[0], type=GameRecord)

    def records(self) -> Iterator[GameRecord]:
        """Every game's record, in the order they were stored."""
        for _, record in self.items():
            yield record

    def items(self) -> Iterator[tuple[str, GameRecord]]:
        """``(key, record)`` of every game, in the order they were stored.

        Rows are fetched in chunks (a short lock each) and decoded lazily, so a
        report of 100,000 games never holds them all in memory.
        """
        decoder = msgspec.json.Decoder(GameRecord)
        last = 0
        while rows := self._chunk(last):
            for rowid, key, text in rows:
                last = rowid
                yield key, decoder.decode(text)

    @_sql_errors
    def _chunk(self, after: int) -> list[tuple[int, str, str]]:
        """The next 1000 ``(rowid, key, record)`` rows after rowid ``after``."""
        with self._lock:
            return self._conn.execute(
                "SELECT rowid, key, record FROM games WHERE rowid > ? ORDER BY rowid LIMIT 1000",
                (after,),
            ).fetchall()

    def pair_items(self) -> Iterator[tuple[str, str, GameRecord]]:
        """``(key, pair_key, record)`` of every game, in stored order (for export)."""
        rows = self._rows("SELECT key, pair_key, record FROM games ORDER BY rowid")
        decoder = msgspec.json.Decoder(GameRecord)
        for key, pair_key, text in rows:
            yield key, pair_key, decoder.decode(text)

    @_sql_errors
    def _rows(self, query: str) -> list[tuple[str, ...]]:
        with self._lock:
            return self._conn.execute(query).fetchall()

    @_sql_errors
    def pair_results(self) -> list[tuple[str, str, float, float]]:
        """``(a, b, a's score in game 1, a's score in game 2)`` per complete pair.

        For pentanomial statistics: the two games of a pair share an opening, so
        they are counted together. Pairs with a game missing are left out.
        """
        with self._lock:
            rows = self._conn.execute(
                "SELECT pair_key, key, player0, player1, score FROM games ORDER BY pair_key, key"
            ).fetchall()
        by_pair: dict[str, dict[str, tuple[str, str, float]]] = {}
        for pair_key, key, p0, p1, score in rows:
            by_pair.setdefault(pair_key, {})[key] = (p0, p1, score)
        result = []
        for pair_key, games in by_pair.items():
            first, second = games.get(f"{pair_key}/1"), games.get(f"{pair_key}/2")
            if first is None or second is None:
                continue
            a, b, s1 = first
            result.append((a, b, s1, 1.0 - second[2]))
        return result

    @_sql_errors
    def integrity_check(self) -> str:
        """SQLite's own verdict on the file: ``"ok"`` when healthy."""
        with self._lock:
            rows = self._conn.execute("PRAGMA integrity_check").fetchall()
        return "; ".join(row[0] for row in rows)
