"""A results database seen by the web server: read-only, paged, filtered in SQL.

The server never writes the store, so it does not use :class:`arena.storage.store.Store`
(which creates the schema and sets pragmas on open) but its own connection in
SQLite's read-only mode; WAL lets it read while ``arena run`` writes. Pages ask
for one page of games at a time and one record at a time, so a tournament of
100,000 games costs a page no more than one of ten.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec

from arena.analysis.store import ANALYSIS_NAME, ANALYSIS_TABLES
from arena.match.record import GameRecord
from arena.storage.store import (
    DB_NAME,
    ReadConnection,
    StoreError,
    TournamentInfo,
    check_tables,
    refuse_linked,
    sql_error_text,
)

__all__ = ["GameFilter", "StoreView", "SummaryView"]

MAX_PAGE = 500
"""Most games one request may list."""

_RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


@dataclass(frozen=True, slots=True)
class GameFilter:
    """Which games a page lists: by a player (either side), an end reason, a result,
    only the faulted ones, only those the analysis found a blunder in. Empty
    fields match everything."""

    player: str = ""
    reason: str = ""
    result: str = ""
    faulted: bool = False
    blunder: bool = False

    def where(self) -> tuple[str, list[object]]:
        clauses: list[str] = []
        args: list[object] = []
        if self.player:
            clauses.append("(player0 = ? OR player1 = ?)")
            args += [self.player, self.player]
        if self.reason:
            clauses.append("reason = ?")
            args.append(self.reason)
        if self.result in _RESULTS:
            clauses.append("score = ?")
            args.append(_RESULTS[self.result])
        if self.faulted:
            clauses.append("faulty IS NOT NULL")
        if self.blunder:  # analysis.sqlite, attached as "an" (none attached: no game)
            clauses.append("key IN (SELECT key FROM an.games WHERE blunders > 0)")
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", args


class StoreView:
    """Read-only queries on one tournament's ``games.sqlite``."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        refuse_linked(self.path)
        if not self.path.is_file():
            raise StoreError(f"no results database at {self.path}")
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            self._conn = sqlite3.connect(
                uri, uri=True, timeout=30.0, check_same_thread=False, factory=ReadConnection
            )
            check_tables(self._conn, self.path)
            row = self._conn.execute(
                "SELECT name, config_toml, fingerprint, arena_version, created_at FROM tournament"
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: not a usable results database ({sql_error_text(exc)})"
            ) from None
        if row is None:
            raise StoreError(f"{self.path} holds no tournament")
        self.tournament = TournamentInfo(*row)
        self._lock = threading.Lock()
        self._decoder = msgspec.json.Decoder(GameRecord)
        self._analysis = False
        """Whether ``analysis.sqlite`` is attached (as ``an``), once it exists."""

    def analysed(self) -> bool:
        """Attach the folder's ``analysis.sqlite`` read-only, if there is one yet."""
        with self._lock:
            if self._analysis:
                return True
            path = self.directory / ANALYSIS_NAME
            if not path.is_file() or path.is_symlink():
                return False
            uri = f"file:{quote(str(path.resolve()))}?mode=ro"
            try:
                self._conn.execute("ATTACH DATABASE ? AS an", (uri,))
                check_tables(self._conn, path, ANALYSIS_TABLES, schema="an")
                self._conn.execute("SELECT count(*) FROM an.games").fetchone()
            except (sqlite3.DatabaseError, StoreError):
                with contextlib.suppress(sqlite3.DatabaseError):
                    self._conn.execute("DETACH DATABASE an")
                return False
            self._analysis = True
            return True

    def close(self) -> None:
        self._conn.close()

    def _all(self, sql: str, args: list[object] | tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._lock:
                return self._conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:  # stopped at its deadline, say
            raise StoreError(f"{self.path}: {sql_error_text(exc)}") from None

    def count(self) -> int:
        return int(self._all("SELECT count(*) FROM games")[0][0])

    def games(
        self, where: GameFilter, *, offset: int = 0, limit: int = 50, newest_first: bool = False
    ) -> tuple[int, list[dict[str, object]]]:
        """``(games matching, one page of them)``; each game as the table shows it,
        with its analysis (blunders and missed wins) when it has one."""
        analysed = self.analysed()
        if where.blunder and not analysed:
            return 0, []
        clause, args = where.where()
        limit = max(0, min(limit, MAX_PAGE))
        total = self._all(f"SELECT count(*) FROM games{clause}", args)[0][0]
        order = "DESC" if newest_first else "ASC"
        rows = self._all(
            "SELECT rowid, key, player0, player1, score, reason, faulty, plies,"
            f" started_at, ended_at FROM games{clause} ORDER BY rowid {order} LIMIT ? OFFSET ?",
            [*args, limit, max(0, offset)],
        )
        games = [_row(r) for r in rows]
        if analysed and games:
            marks = ",".join("?" * len(games))
            found = {
                key: (b, m)
                for key, b, m in self._all(
                    f"SELECT key, blunders, missed FROM an.games WHERE key IN ({marks})",
                    [g["key"] for g in games],
                )
            }
            for g in games:
                blunders, missed = found.get(str(g["key"]), (None, None))
                g["blunders"], g["missed"] = blunders, missed
        return total, games

    def reasons(self) -> list[str]:
        return [r for (r,) in self._all("SELECT DISTINCT reason FROM games ORDER BY reason")]

    def record(self, key: str) -> GameRecord | None:
        rows = self._all("SELECT record FROM games WHERE key = ?", (key,))
        return self._decoder.decode(rows[0][0]) if rows else None

    def items(self) -> Iterator[tuple[str, GameRecord]]:
        """Every ``(key, record)`` in stored order, as ``Store.items`` gives them (so
        the report's summary can be built from this view), fetched in chunks."""
        last = 0
        while True:
            rows = self._all(
                "SELECT rowid, key, record FROM games WHERE rowid > ? ORDER BY rowid LIMIT 500",
                (last,),
            )
            if not rows:
                return
            for rowid, key, text in rows:
                last = rowid
                yield key, self._decoder.decode(text)


class SummaryView:
    """The store as ``build_report`` reads it, from the table's columns alone.

    Standings, crosstable, faults and end reasons need only who played, the
    score, the reason and who faulted; decoding every record for them would cost
    a live page seconds per refresh at 100,000 games. The records yielded here
    carry just those fields (no actions), so the game list built from them is
    not shown: pages list games through :meth:`StoreView.games`.
    """

    def __init__(self, view: StoreView) -> None:
        self.view = view
        self.tournament = view.tournament

    def count(self) -> int:
        return self.view.count()

    def items(self) -> Iterator[tuple[str, GameRecord]]:
        first = self.view._all("SELECT record FROM games ORDER BY rowid LIMIT 1")
        game = self.view._decoder.decode(first[0][0]).game if first else ""
        rows = self.view._all(
            "SELECT key, player0, player1, score, reason, faulty FROM games ORDER BY rowid"
        )
        for key, p0, p1, score, reason, faulty in rows:
            yield (
                key,
                GameRecord(
                    game=game,
                    variant="",
                    players=[p0, p1],
                    opening="",
                    actions=[],
                    score=score,
                    reason=reason,
                    faulty=faulty,
                ),
            )


def _row(r: tuple[Any, ...]) -> dict[str, object]:
    rowid, key, p0, p1, score, reason, faulty, plies, started, ended = r
    return {
        "index": rowid,
        "key": key,
        "players": [p0, p1],
        "result": {1.0: "1-0", 0.0: "0-1"}.get(score, "1/2-1/2"),
        "reason": reason,
        "faulty": None if faulty is None else [p0, p1][faulty],
        "plies": plies,
        "seconds": round(max(ended - started, 0.0), 2),
    }
