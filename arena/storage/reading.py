"""Reading a results database as data: one from elsewhere may be built to hang,
mislead or run code in the reader, so every reader's query has a deadline, the
tables read must be plain tables, no trigger may sit in the file, and no store is
reached through a symbolic link. Every failure is a one-line :class:`StoreError`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

__all__ = [
    "READ_SECONDS",
    "STORE_TABLES",
    "ReadConnection",
    "StoreError",
    "check_tables",
    "refuse_linked",
    "sql_error_text",
]


class StoreError(RuntimeError):
    """The results database cannot be used as asked."""


READ_SECONDS = 30.0
"""Longest a reader's single query may run: a store from elsewhere is data, and
no report, rating list or page waits on it for ever (SQLite's progress handler
stops the query; a real store's queries take milliseconds to a few seconds)."""
STORE_TABLES = ("meta", "tournament", "games", "game_counts")
"""What the arena reads of a store: each must be a plain table, never a view
(an endless recursive view would hang every reader) or a virtual table."""


class ReadConnection(sqlite3.Connection):
    """A connection whose every ``execute`` (with the fetching that follows) must
    finish within ``seconds``; past that SQLite stops it ("interrupted")."""

    seconds = READ_SECONDS

    # The arguments pass through unchanged to sqlite3, which checks them (it
    # calls this class with those of ``sqlite3.connect(..., factory=...)``);
    # typeshed's names for their types are private, hence ``Any``.
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = time.monotonic() + self.seconds
        self.set_progress_handler(self._past_deadline, 10_000)

    def _past_deadline(self) -> int:
        return time.monotonic() > self._deadline

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self._deadline = time.monotonic() + self.seconds
        return super().execute(sql, parameters)


def sql_error_text(exc: sqlite3.Error) -> str:
    """SQLite's message, with what "interrupted" means here."""
    text = str(exc)
    if text == "interrupted":
        return (
            f"a query ran longer than {ReadConnection.seconds:g} s and was stopped "
            "(a store from elsewhere?)"
        )
    return text


def refuse_linked(path: Path) -> None:
    """A store or analysis reached through a symbolic link is refused, not read: a
    link in a results folder from elsewhere points where its sender chose, and
    SQLite would make its ``-wal`` and ``-shm`` files beside the target."""
    if os.path.islink(path):
        raise StoreError(
            f"{path} is a symbolic link; the arena reads no results database through "
            "one (a results folder from elsewhere is data): copy the file itself there"
        )


def check_tables(
    conn: sqlite3.Connection,
    path: object,
    names: tuple[str, ...] = STORE_TABLES,
    schema: str = "main",
) -> None:
    """Refuse a store whose tables the arena reads are views or virtual tables, or
    that holds a trigger (the arena makes none; one would run on the arena's
    writes when a received folder is resumed or analysed)."""
    marks = ", ".join("?" * len(names))
    rows = conn.execute(
        f"SELECT name, type, sql FROM {schema}.sqlite_master"
        f" WHERE lower(name) IN ({marks}) OR type = 'trigger'",
        names,
    ).fetchall()
    for name, kind, sql in rows:
        if kind == "table" and not str(sql or "").lstrip().upper().startswith("CREATE VIRTUAL"):
            continue
        if kind == "trigger":
            raise StoreError(
                f"{path} holds a trigger ({name!r}), which no arena makes; the arena "
                "uses no store built so (a results folder from elsewhere?)"
            )
        what = "a virtual table" if kind == "table" else f"a {kind}"
        raise StoreError(
            f"{path}: {name!r} is {what}, not a plain table; the arena reads no store "
            "built so (a results folder from elsewhere?)"
        )
