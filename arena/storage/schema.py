"""The results database's schema: its tables, its versions and the migration
between them, and the one way a game row is written (:func:`insert_game`).

Schema versions (``meta.schema_version``): 1 had the summary columns and the
record; 2 adds the game, variant, time control and both bots' identities as
columns, and ``game_counts``, the games counted by kind, which the rating list
reads instead of the records (see ``SCHEMA_VERSION``). The store (``store.py``)
opens, locks and guards the file; what is here is SQL and plain values.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from arena.match.record import GameRecord
from arena.storage.reading import StoreError

__all__ = [
    "GAME_DAY",
    "READABLE_VERSIONS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "check_version",
    "game_row",
    "insert_game",
    "migrate_v1",
    "now_text",
    "schema_version",
    "transaction",
]

SCHEMA_VERSION = 2
"""1: the first schema. 2 adds the columns the rating list needs of a game (the
game, variant, time control and the two bots' identities as JSON, copied from
the record; they come after ``record`` so that a migrated store and a new one
have the same layout) and ``game_counts``, the games counted by those columns,
the result and the day, kept in the same transaction as each game: a reader of
a million games reads some thousand counts instead of parsing a million 3 KB
records. ``Store.open`` migrates a version-1 store in one transaction; readers
take either version as it is."""
READABLE_VERSIONS = (1, SCHEMA_VERSION)
"""The versions a reader (report, ratings, serve, export, analyze) takes as they are."""

_GAME_COUNTS = """
CREATE TABLE IF NOT EXISTS game_counts (
    player0      TEXT NOT NULL,
    player1      TEXT NOT NULL,
    identity0    TEXT NOT NULL,
    identity1    TEXT NOT NULL,
    game         TEXT NOT NULL,
    variant      TEXT NOT NULL,
    time_control TEXT NOT NULL,
    score        REAL NOT NULL,
    day          INTEGER NOT NULL,
    games        INTEGER NOT NULL,
    PRIMARY KEY (player0, player1, identity0, identity1, game, variant, time_control, score, day)
) WITHOUT ROWID"""
"""How many games of each kind: who played (entries and identities), the game,
variant and clock, player 0's score and the UTC day the game started (days
since 1970-01-01). A tournament of thousands of games has a few hundred kinds;
``arena ratings`` reads these (a few pages) rather than the games."""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tournament (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    name          TEXT NOT NULL,
    config_toml   TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    arena_version TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    key          TEXT PRIMARY KEY,
    pair_key     TEXT NOT NULL,
    player0      TEXT NOT NULL,
    player1      TEXT NOT NULL,
    score        REAL NOT NULL CHECK (score IN (0, 0.5, 1)),
    reason       TEXT NOT NULL,
    faulty       INTEGER CHECK (faulty IN (0, 1)),
    plies        INTEGER NOT NULL,
    started_at   REAL NOT NULL,
    ended_at     REAL NOT NULL,
    stored_at    TEXT NOT NULL,
    record       TEXT NOT NULL,
    game         TEXT NOT NULL DEFAULT '',
    variant      TEXT NOT NULL DEFAULT '',
    time_control TEXT NOT NULL DEFAULT '',
    identity0    TEXT NOT NULL DEFAULT '',
    identity1    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS games_pair ON games (pair_key);
{_GAME_COUNTS};
"""

_KIND = "player0, player1, identity0, identity1, game, variant, time_control, score"
GAME_DAY = "CAST(started_at / 86400 AS INTEGER)"
"""A game's UTC day (days since 1970-01-01) in SQL, as ``game_counts`` keeps it."""

_V2_COLUMNS = ("game", "variant", "time_control", "identity0", "identity1")
_V2_FROM_RECORD = ("$.game", "$.variant", "$.time_control", "$.identities[0]", "$.identities[1]")
"""Where each version-2 column is in the record (a missing identity is '')."""

_INSERT_GAME = (
    "INSERT OR IGNORE INTO games (key, pair_key, player0, player1, score, reason, faulty,"
    " plies, started_at, ended_at, stored_at, record, game, variant, time_control,"
    " identity0, identity1) VALUES (:key, :pair_key, :player0, :player1, :score, :reason,"
    " :faulty, :plies, :started_at, :ended_at, :stored_at, :record, :game, :variant,"
    " :time_control, :identity0, :identity1)"
)
_COUNT_GAME = (
    f"INSERT INTO game_counts ({_KIND}, day, games) VALUES (:player0, :player1, :identity0,"
    " :identity1, :game, :variant, :time_control, :score, CAST(:started_at / 86400 AS INTEGER),"
    " 1) ON CONFLICT DO UPDATE SET games = games + 1"
)


def insert_game(conn: sqlite3.Connection, row: dict[str, object]) -> bool:
    """Store one game (a :func:`game_row`) and count it in ``game_counts``, in the
    caller's transaction; False if its key was stored already (nothing changes).

    Every game the arena stores goes through here (the rating list's benchmark
    too, many to a transaction), so the counts always match the games."""
    if conn.execute(_INSERT_GAME, row).rowcount != 1:
        return False
    conn.execute(_COUNT_GAME, row)
    return True


def now_text() -> str:
    """The time now, as the store keeps it (UTC, ISO 8601, seconds)."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def game_row(key: str, pair_key: str, record: GameRecord) -> dict[str, object]:
    """The values :func:`insert_game` stores for one game."""
    if len(record.players) != 2:
        raise ValueError(f"game {key}: expected two players, got {record.players!r}")
    encode = msgspec.json.encode
    identities = [encode(i).decode() for i in record.identities[:2]]
    identities += [""] * (2 - len(identities))
    return {
        "key": key,
        "pair_key": pair_key,
        "player0": record.players[0],
        "player1": record.players[1],
        "score": float(record.score),
        "reason": record.reason,
        "faulty": record.faulty,
        "plies": len(record.actions),
        "started_at": record.started_at,
        "ended_at": record.ended_at,
        "stored_at": now_text(),
        "record": encode(record).decode(),
        "game": record.game,
        "variant": record.variant,
        "time_control": record.time_control,
        "identity0": identities[0],
        "identity1": identities[1],
    }


def check_version(path: Path, version: int | None, taken: tuple[int, ...], hint: str = "") -> None:
    """Refuse a store of a schema version this arena does not take (a newer arena's),
    in one line (``hint``: what to do instead, if there is something to say)."""
    if version not in taken:
        found = "no schema version" if version is None else f"schema version {version}"
        raise StoreError(
            f"{path}: written by another arena version, {found}, this arena reads "
            f"{SCHEMA_VERSION}{hint}"
        )


def schema_version(conn: sqlite3.Connection, path: Path) -> int | None:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return None
    try:
        return int(row[0])
    except (TypeError, ValueError, OverflowError):  # a store's own column types: any value
        raise StoreError(f"{path}: schema version {row[0]!r} is not a number") from None


def migrate_v1(conn: sqlite3.Connection) -> None:
    """Version 1 to 2, in one transaction (killed halfway, the store stays version 1):
    add the columns, fill them from each record, count the games. SQLite parses a
    record once for its five fields; a record that is not valid JSON leaves them
    empty. About 0.12 ms a game (2,000 games of 3 KB records in 0.24 s), once."""
    fill = ", ".join(
        f"{column} = coalesce(json_extract(record, '{path}'), '')"
        for column, path in zip(_V2_COLUMNS, _V2_FROM_RECORD, strict=True)
    )
    with transaction(conn):
        for column in _V2_COLUMNS:
            conn.execute(f"ALTER TABLE games ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
        conn.execute(f"UPDATE games SET {fill} WHERE json_valid(record)")
        conn.execute(_GAME_COUNTS)
        conn.execute(
            f"INSERT INTO game_counts ({_KIND}, day, games)"
            f" SELECT {_KIND}, {GAME_DAY}, count(*) FROM games GROUP BY {_KIND}, {GAME_DAY}"
        )
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
        )


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on an exception).

    IMMEDIATE takes the write lock at the start, so a concurrent writer fails
    fast with "database is locked" instead of halfway through.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
