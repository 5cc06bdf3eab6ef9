"""Reading every stored tournament for the rating list: read-only, and incremental.

A tournament's ``games.sqlite`` is opened through SQLite's read-only URI
(``mode=ro``), never through :class:`arena.storage.store.Store`'s writer, which
creates tables, migrates and sets pragmas: the rating list must never change a
tournament's file.

What the list needs of a game is small (who played, as which bot, the score, the
day, the variant and the time control), and a tournament's games share those
values in a few hundred combinations, so the list keeps one row per group of
games with its count. A store of schema version 2 keeps exactly those counts
(``game_counts``, written with each game), so a store of any size is read in a
few pages; games stored since the last read are grouped from their rows'
columns (by rowid: just those rows). A version-1 store, which has only the
records, is grouped through ``json_extract`` (slow, but once: then cached) and
never migrated here.

The groups are kept in ``<results>/.ratings-cache/stores.cache``, one file for
every store (a JSON header line, then the raw rows: one read and
``np.frombuffer``, where 500 files took a second to open). A store's entry is
keyed by its path and checked against its device, inode, size and mtime (and
its WAL's), so a store that grew is read again from its last rowid on, and one
replaced by another file (another inode, or another tournament) is read again
whole. The stores that must be read are read a few at a time (SQLite works
without the GIL). The cache is safe to delete; a cache that cannot be written
is simply not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from arena.protocol.text import visible
from arena.ratinglist.cache import CACHE_DIR, CACHE_NAME, GROUPS, Cache, Meta
from arena.storage.schema import check_version
from arena.storage.store import (
    DB_NAME,
    GAME_DAY,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    ReadConnection,
    StoreError,
    check_tables,
    refuse_linked,
    sql_error_text,
)

__all__ = [
    "CACHE_DIR",
    "CACHE_NAME",
    "GROUPS",
    "TC_CLASSES",
    "RatingInputError",
    "StoreGames",
    "find_stores",
    "COUNTS_QUERY",
    "grouped_query",
    "read_store",
    "read_stores",
    "tc_class",
    "without_copies",
]

LOCK_TIMEOUT = 2.0
"""Seconds to wait for a store another process holds locked before saying so."""

TC_CLASSES = ("bullet", "blitz", "rapid", "classical")
"""Time-control classes by a game's estimated length per player, ``base + 40 ×
increment`` seconds (``40 × movetime`` for a fixed time per move), as lichess and
fastchess estimate it: bullet under 3 minutes, blitz under 8, rapid under 25,
classical from 25 on. A handicap game takes the class of its slower control."""
_TC_LIMITS = (180.0, 480.0, 1500.0)

DAY = 86400
"""Seconds in a day: games are grouped by the UTC day they started (``--since``
takes a date)."""

_FIELDS_V2 = "identity0, identity1, game, variant, time_control"
_FIELDS_V1 = ", ".join(
    f"json_extract(record, '{path}')"
    for path in ("$.identities[0]", "$.identities[1]", "$.game", "$.variant", "$.time_control")
)

COUNTS_QUERY = f"SELECT player0, player1, {_FIELDS_V2}, score, day, games FROM game_counts"
"""All of a version-2 store's games, as groups: its ``game_counts``."""


class RatingInputError(ValueError):
    """A results folder, store or option the rating list cannot use (one line)."""


def grouped_query(version: int, where: str = "") -> str:
    """The games (those ``where`` keeps) of a store of schema ``version``, grouped
    as :data:`COUNTS_QUERY` gives them, from the games' rows: their columns
    (version 2) or their records (version 1; SQLite parses a record once for
    its five fields). With a ``rowid`` clause, just those rows are read."""
    fields = _FIELDS_V2 if version >= 2 else _FIELDS_V1
    return (
        f"SELECT player0, player1, {fields}, score, {GAME_DAY}, count(*) FROM games {where}"
        f" GROUP BY player0, player1, {fields}, score, {GAME_DAY}"
    )


def tc_class(text: str) -> str:
    """The class of a record's ``time_control`` text (``"10+0.1"``, ``"a | b"``)."""
    from arena.match.clock import TimeControl, TimeControlError

    longest = -1.0
    for part in text.split("|"):
        try:
            tc = TimeControl.parse(part.strip())
        except TimeControlError:
            continue
        seconds = 40 * tc.movetime if tc.movetime is not None else tc.base + 40 * tc.increment
        longest = max(longest, seconds)
    if longest < 0:
        return "unknown"
    for name, limit in zip(TC_CLASSES, _TC_LIMITS, strict=False):
        if longest < limit:
            return name
    return TC_CLASSES[-1]


def find_stores(paths: list[Path]) -> list[Path]:
    """Tournament folders: each path holds ``games.sqlite`` or folders that do.

    A path with neither is an error naming it (a typo must not rate nothing).
    """
    found: list[Path] = []
    for path in paths:
        if (path / DB_NAME).is_file():
            found.append(path)
            continue
        names = sorted(e.name for e in os.scandir(path)) if path.is_dir() else []
        inner = [path / n for n in names if os.path.isfile(os.path.join(path, n, DB_NAME))]
        if not inner:
            raise RatingInputError(f"{path}: no tournament results (no {DB_NAME} in it or below)")
        found += inner
    return found


@dataclass
class StoreGames:
    """One store reduced to what the list needs: its games in groups.

    ``groups["p0"]``/``["p1"]`` are sides as the store recorded them (an entry
    and what its bot said it was); ``label_of`` maps them to ``labels`` (the
    players as this store names them, before aliases), ``entries[i]`` is the
    entry name behind ``labels[i]``; ``groups["variant"]`` indexes ``variants``,
    ``groups["tc"]`` ``TC_CLASSES`` (``len(TC_CLASSES)`` for unknown).
    """

    directory: Path
    tournament: str
    created_at: str
    uid: str
    """The tournament's identity (name, creation time, first game), the same in a
    copy of its folder: games of one ``uid`` are counted once however many copies."""
    game: str
    identified: bool
    """Whether its records carry the bots' identities (older stores do not)."""
    labels: list[str]
    entries: list[str]
    variants: list[str]
    groups: np.ndarray
    label_of: np.ndarray
    last_rowid: int = 0
    version: int = SCHEMA_VERSION
    """The store's schema version (1: read through its records)."""
    sides: list[tuple[str, str]] = field(default_factory=list)
    """Per label: the ``(entry, identity label)`` it was made of (for splitting)."""
    unrated: list[bool] = field(default_factory=list)
    """Per label: an entry that never gave an identity in a store whose other bots
    did (it never started): not rated, and its games are left out."""
    meta: Meta = field(default_factory=dict, repr=False)
    """The cache header it was built from (to read a part of the store again)."""

    @property
    def count(self) -> int:
        """Games in the store (up to ``last_rowid``)."""
        return int(self.groups["count"].sum())


def _stat_key(db: str) -> list[int] | None:
    """The file's and its WAL's device, inode, size and mtime; None if the file is
    not there (or not a file). An empty WAL counts as none: reading a store in
    WAL mode leaves one behind (a read-only connection cannot remove it), and
    it holds no games."""
    try:
        st = os.stat(db)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    out = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    try:
        wal = os.stat(db + "-wal")
    except OSError:
        wal = None
    if wal is None or wal.st_size == 0:
        return out + [0, 0, 0, 0]
    return out + [wal.st_dev, wal.st_ino, wal.st_size, wal.st_mtime_ns]


def _connect(db: Path) -> sqlite3.Connection:
    try:
        refuse_linked(db)
    except StoreError as exc:
        raise RatingInputError(str(exc)) from None
    uri = f"file:{quote(str(db.resolve()))}?mode=ro"
    try:
        conn = sqlite3.connect(
            uri, uri=True, timeout=LOCK_TIMEOUT, isolation_level=None, factory=ReadConnection
        )
        check_tables(conn, db)
        conn.execute("SELECT 1 FROM games LIMIT 1").fetchall()
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            raise RatingInputError(
                f"{db}: the store is locked by another process ({text})"
            ) from None
        raise RatingInputError(
            f"{db}: not a usable results database ({sql_error_text(exc)})"
        ) from None
    except sqlite3.DatabaseError as exc:
        raise RatingInputError(f"{db}: not a usable results database ({exc})") from None
    except StoreError as exc:  # a view where a table should be
        conn.close()
        raise RatingInputError(str(exc)) from None
    return conn


_ABOUT = (
    "SELECT name, config_toml, created_at,"
    " (SELECT value FROM meta WHERE key = 'schema_version'),"
    " (SELECT key FROM games ORDER BY rowid LIMIT 1),"
    " (SELECT started_at FROM games ORDER BY rowid LIMIT 1),"
    " (SELECT max(rowid) FROM games)"
    " FROM tournament"
)
"""A store's tournament, schema version, first game and last rowid, in one query."""


def _schema_version(text: object, db: Path) -> int:
    """The store's schema version, refused as the store refuses it (one with none is
    read as version 1)."""
    # The value is whatever the store holds (SQLite: text, a number or a blob).
    version: int | None = 1 if text is None else None
    if isinstance(text, str | bytes | int | float):
        with contextlib.suppress(ValueError, OverflowError):
            version = int(text)
    if version is None:
        raise RatingInputError(f"{db}: schema version {text!r} is not a number")
    try:
        check_version(db, version, READABLE_VERSIONS)
    except StoreError as exc:
        raise RatingInputError(str(exc)) from None
    return version


def _options_by_entry(config_text: str) -> dict[str, str]:
    """``entry name -> "Hash=64, Threads=1"`` from the stored tournament file."""
    if "options" not in config_text:  # most files: no need to parse them
        return {}
    try:
        config = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError:
        return {}
    out: dict[str, str] = {}
    for bot in config.get("bots", []) if isinstance(config.get("bots"), list) else []:
        if not isinstance(bot, dict) or not isinstance(bot.get("name"), str):
            continue
        options = bot.get("options")
        if isinstance(options, dict) and options:
            out[bot["name"]] = visible(", ".join(f"{k}={options[k]}" for k in sorted(options)))
    return out


def _identity_label(text: object) -> str | None:
    """``name version`` of an identity stored as JSON, or None (none, or unreadable)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        ident = json.loads(text)
    except ValueError:
        return None
    if not isinstance(ident, dict) or not isinstance(ident.get("name"), str):
        return None
    # An older arena stored a bot's words as it wrote them: shown as escapes here,
    # so no list, terminal table or ratings.md carries an escape sequence.
    name = visible(" ".join(ident["name"].split()))[:64]
    version = ident.get("version")
    return f"{name} {visible(version)}" if isinstance(version, str) and version else name


def _new_meta(name: str, created_at: str, uid: str, version: int, options: dict[str, str]) -> Meta:
    return {
        "tournament": name,
        "created_at": created_at,
        "uid": uid,
        "schema": version,
        "options": options,
        "game": "",
        "identified": False,
        "raw": [],
        "variants": [],
        "tcs": {},
        "last_rowid": 0,
    }


def read_store(directory: Path, cache_dir: Path | None = None) -> StoreGames:
    """The games of one tournament folder, from the cache where it is still valid."""
    (got,) = read_stores([directory], cache_dir)
    if isinstance(got, RatingInputError):
        raise got
    return got


READERS = 4
"""Stores read at once. SQLite works without the GIL and a store not in the OS
cache is mostly waiting for the disk, so a first run over hundreds of stores
overlaps those waits (and uses two cores where it has them)."""


def read_stores(
    folders: list[Path], cache_dir: Path | None = None
) -> list[StoreGames | RatingInputError]:
    """Each folder's games (or why it cannot be rated), from the cache where it is
    still valid; the stores that changed are read at once, ``READERS`` at a time."""
    cache = Cache(cache_dir)
    out: list[StoreGames | RatingInputError | None] = [None] * len(folders)
    todo: list[tuple[int, Path, str, list[int], tuple[Meta, np.ndarray] | None]] = []
    for i, folder in enumerate(folders):
        key = os.path.abspath(os.path.join(folder, DB_NAME))
        stat_key = _stat_key(key)
        if stat_key is None:
            out[i] = RatingInputError(f"{folder}: no results database ({DB_NAME})")
            continue
        cached = cache.get(key)
        if cached is not None and cached[0].get("stat") == stat_key:
            out[i] = _from_parts(folder, *cached)
        else:
            todo.append((i, folder / DB_NAME, key, stat_key, cached))
    if todo:
        with ThreadPoolExecutor(max_workers=READERS) as pool:
            read = list(pool.map(lambda job: _read(*job[1:]), todo))
        for (i, db, key, _, _), got in zip(todo, read, strict=True):
            if isinstance(got, RatingInputError):
                out[i] = got
            else:
                cache.put(key, *got)
                out[i] = _from_parts(db.parent, *got)
    cache.save()
    return [x for x in out if x is not None]


def _read(
    db: Path, key: str, stat_key: list[int], cached: tuple[Meta, np.ndarray] | None
) -> tuple[Meta, np.ndarray] | RatingInputError:
    """A store's groups: the cached ones and the games stored since, or all of
    them again (another file, or not the one cached)."""
    try:
        conn = _connect(db)
    except RatingInputError as exc:
        return exc
    try:
        try:
            conn.execute("BEGIN")  # one snapshot: the last rowid and the rows agree
            row = conn.execute(_ABOUT).fetchone()
            if row is None:
                return RatingInputError(f"{db}: holds no tournament")
            name, config_text, created_at, version_text, first_key, first_start, last_rowid = row
            version = _schema_version(version_text, db)
            first = None if first_key is None else (first_key, first_start)
            last_rowid = last_rowid or 0
            uid = hashlib.blake2b(
                f"{name}\0{created_at}\0{first!r}".encode(), digest_size=12
            ).hexdigest()
            if (
                cached is not None
                and cached[0]["uid"] == uid
                and cached[0]["schema"] == version
                and cached[0]["stat"][:2] == stat_key[:2]  # the same file, grown
                and last_rowid >= cached[0]["last_rowid"]  # not put back to an older copy
            ):
                meta = {k: v for k, v in cached[0].items() if k not in _DERIVED}
                old = cached[1]
                where = "WHERE rowid > ?"
                args: tuple[int, ...] = (meta["last_rowid"],)
            else:
                shown = visible(str(name)), visible(str(created_at))
                meta = _new_meta(*shown, uid, version, _options_by_entry(config_text))
                old = np.zeros(0, GROUPS)
                where, args = "", ()
            if not where and version >= 2 and _counts_agree(conn, last_rowid):
                rows = conn.execute(COUNTS_QUERY).fetchall()
            else:
                rows = conn.execute(grouped_query(version, where), args).fetchall()
        except sqlite3.OperationalError as exc:
            return RatingInputError(f"{db}: cannot be read ({sql_error_text(exc)})")
        except sqlite3.DatabaseError as exc:
            return RatingInputError(f"{db}: not a usable results database ({exc})")
        except RatingInputError as exc:
            return exc
    finally:
        conn.close()
    meta["raw"] = [list(x) for x in meta["raw"]]
    meta["variants"] = list(meta["variants"])
    meta["tcs"] = dict(meta["tcs"])
    new = _groups(meta, rows)
    groups = _merge(old, new) if len(old) else new
    meta["last_rowid"] = last_rowid
    meta["stat"] = stat_key
    return meta, groups


def _counts_agree(conn: sqlite3.Connection, last_rowid: int) -> bool:
    """Whether ``game_counts`` counts every game (the arena keeps it so; a store
    edited by other hands is grouped from its games instead). Games are never
    deleted, so their count is usually the last rowid, known already; else
    they are counted (the smallest index)."""
    (counted,) = conn.execute("SELECT total(games) FROM game_counts").fetchone()
    if counted == last_rowid:
        return True
    (games,) = conn.execute("SELECT count(*) FROM games").fetchone()
    return bool(counted == games)


_DERIVED = ("start", "end", "stat", "players")
"""Cache header fields that are not a store's own (where its rows are, its stat
when read, and its players as :func:`_from_parts` resolved them)."""


def _groups(meta: Meta, rows: list[tuple[Any, ...]]) -> np.ndarray:
    """SQL groups as :data:`GROUPS` rows. A side's raw player is ``(entry, identity
    label)``, coded in ``meta["raw"]``; which raw players become which labels is
    decided in :func:`_from_parts`, once every game of the store is known. Only
    the distinct values (a few per store) are decoded; the rest is lookups."""
    out = np.zeros(len(rows), GROUPS)
    if not rows:
        return out
    e0, e1, id0, id1, games, variants, tcs, score, day, count = zip(*rows, strict=True)
    if not meta["game"]:
        meta["game"] = next((g for g in games if isinstance(g, str) and g), "")
    raw = {(entry, label): i for i, (entry, label) in enumerate(meta["raw"])}
    options: dict[str, str] = meta["options"]
    labels = {ident: _identity_label(ident) for ident in {*id0, *id1}}
    sides = {*zip(e0, id0, strict=True), *zip(e1, id1, strict=True)}
    code: dict[tuple[object, object], int] = {}
    for entry, ident in sorted(sides, key=repr):  # codes in a stable order
        label = labels[ident]
        if label is not None:
            meta["identified"] = True
            opts = options.get(entry, "")
            label = f"{label} ({opts})" if opts else label
        key = (visible(entry) if isinstance(entry, str) else entry, label or "")
        if key not in raw:
            raw[key] = len(raw)
            meta["raw"].append([key[0], label or ""])
            meta.pop("players", None)  # resolved anew by _from_parts
        code[(entry, ident)] = raw[key]
    out["p0"] = [code[side] for side in zip(e0, id0, strict=True)]
    out["p1"] = [code[side] for side in zip(e1, id1, strict=True)]
    variant_code: dict[object, int] = {}
    for v in dict.fromkeys(variants):
        text = v if isinstance(v, str) else ""
        if text not in meta["variants"]:
            meta["variants"].append(text)
        variant_code[v] = meta["variants"].index(text)
    out["variant"] = [variant_code[v] for v in variants]
    tc_code: dict[str, int] = meta["tcs"]
    for t in dict.fromkeys(tcs):
        text = t if isinstance(t, str) else ""
        if text not in tc_code:
            cls = tc_class(text)
            tc_code[text] = TC_CLASSES.index(cls) if cls in TC_CLASSES else len(TC_CLASSES)
    out["tc"] = [tc_code[t if isinstance(t, str) else ""] for t in tcs]
    out["half"] = np.rint(np.array(score, float) * 2)
    out["day"] = [d or 0 for d in day]
    out["count"] = count
    return out


_KEY = ("p0", "p1", "half", "variant", "tc", "day")


def _merge(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Old and new groups as one set of groups (a group that got more games is
    summed), so the cache of a store that grows game by game stays small."""
    both = np.concatenate([old, new])
    order = np.lexsort([both[k] for k in reversed(_KEY)])
    both = both[order]
    same = np.ones(len(both), bool)
    for k in _KEY:
        same[1:] &= both[k][1:] == both[k][:-1]
    same[0] = False
    starts = np.flatnonzero(~same)
    out = both[starts].copy()
    out["count"] = np.add.reduceat(both["count"], starts)
    return out


def without_copies(stores: list[StoreGames]) -> list[StoreGames]:
    """Each game of a tournament once, however many copies of its folder were given.

    Copies share a ``uid`` and differ only in which games they hold. The first of
    them counts whole; a later one counts only its games whose keys none before
    it holds: the keys are read from the store (the key index alone), and those
    games' groups again from it. Copies are rare, so none of this is cached.
    """
    copies: dict[str, int] = {}
    for s in stores:
        copies[s.uid] = copies.get(s.uid, 0) + 1
    seen: dict[str, set[str]] = {}
    out: list[StoreGames] = []
    for s in stores:
        if copies[s.uid] == 1:
            out.append(s)
            continue
        db = s.directory / DB_NAME
        conn = _connect(db)
        try:
            rows = conn.execute(
                "SELECT rowid, key FROM games WHERE rowid <= ?", (s.last_rowid,)
            ).fetchall()
            keys = seen.setdefault(s.uid, set())
            fresh = [rowid for rowid, key in rows if key not in keys]
            keys.update(key for _, key in rows)
            if len(fresh) == len(rows):
                out.append(s)
                continue
            if not fresh:
                continue
            part = conn.execute(
                grouped_query(s.version, "WHERE rowid IN (SELECT value FROM json_each(?))"),
                (json.dumps(fresh),),
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise RatingInputError(f"{db}: cannot be read ({sql_error_text(exc)})") from None
        finally:
            conn.close()
        meta = json.loads(json.dumps(s.meta))  # its codes, not shared with the cached one
        out.append(_from_parts(s.directory, meta, _groups(meta, part)))
    return out


def _from_parts(directory: Path, meta: Meta, groups: np.ndarray) -> StoreGames:
    """The store's games with its players resolved (see :func:`_players`; kept in
    ``meta`` and so in the cache: a store read from the cache costs no loop)."""
    players = meta.get("players")
    if players is None:
        players = meta["players"] = _players(meta["raw"])
    return StoreGames(
        directory=directory,
        tournament=meta["tournament"],
        created_at=meta["created_at"],
        uid=meta["uid"],
        game=meta["game"],
        identified=bool(meta["identified"]),
        labels=list(players["labels"]),
        entries=list(players["entries"]),
        variants=list(meta["variants"]),
        groups=groups,
        label_of=np.array(players["remap"], dtype=np.int32),
        last_rowid=int(meta["last_rowid"]),
        version=int(meta["schema"]),
        sides=[(entry, label) for entry, label in players["sides"]],
        unrated=[bool(x) for x in players["unrated"]],
        meta=meta,
    )


def _players(raw: list[list[str]]) -> dict[str, list[Any]]:
    """Turn raw players (entry, identity) into the store's players.

    A side with no identity (its bot did not answer the handshake that game, or
    the store predates identities) takes the identity its entry showed in other
    games of the store. An entry that showed none in a store whose other entries
    did never started: it keeps its entry name but is marked ``unrated`` (the
    list leaves its games out: a forfeit says nothing of either side's
    strength). In a store with no identity at all (an older arena) every entry
    is rated by its name. Two entries of one tournament showing the same
    identity (the same bot under two names, e.g. two seeds) stay two players,
    each marked with its entry name: a player cannot play itself.
    """
    seen: dict[str, dict[str, int]] = {}
    for entry, label in raw:
        if label:
            seen.setdefault(entry, {}).setdefault(label, 0)
            seen[entry][label] += 1
    identified = bool(seen)
    resolved: list[tuple[str, str]] = []
    for entry, label in raw:
        if not label:
            label = next(iter(seen[entry])) if entry in seen else entry
        resolved.append((entry, label))
    entries_of: dict[str, set[str]] = {}
    for entry, label in resolved:
        entries_of.setdefault(label, set()).add(entry)
    labels: list[str] = []
    entries: list[str] = []
    sides: list[list[str]] = []
    unrated: list[bool] = []
    index: dict[str, int] = {}
    remap: list[int] = []
    for entry, label in resolved:
        final = label if len(entries_of[label]) == 1 or label == entry else f"{label} [{entry}]"
        if final not in index:
            index[final] = len(labels)
            labels.append(final)
            entries.append(entry)
            sides.append([entry, label])
            unrated.append(identified and entry not in seen)
        remap.append(index[final])
    return {
        "labels": labels,
        "entries": entries,
        "sides": sides,
        "remap": remap,
        "unrated": unrated,
    }
