"""Reading every stored tournament for the rating list: read-only, and incremental.

A tournament's ``games.sqlite`` is opened through SQLite's read-only URI
(``mode=ro``), never through :class:`arena.storage.store.Store`'s writer, which
creates tables, migrates and sets pragmas: the rating list must never change a
tournament's file.

What the list needs of a game is small (who played, as which bot, the score, the
day, the variant and the time control), and a tournament's games share those
values in a few hundred combinations, so SQLite groups them (``GROUP BY``) and
the list keeps one row per group with its count. A store of schema version 2
answers that query from its ``games_rating`` index alone (a covering index:
about 160 bytes a game instead of the 3 KB record); a version-1 store, which
has only the records, is read once through ``json_extract`` (slow, but then
cached) and never migrated here.

The groups are kept in ``<results>/.ratings-cache/`` beside the results, one
file per store (a JSON header line, then the raw rows: one read and
``np.frombuffer``). A file is keyed by the store's device, inode, size and
mtime (and its WAL's), so a store that grew is read again from its last rowid
on, and one replaced by another file (another inode, or another tournament) is
read again whole. The cache is safe to delete; a cache that cannot be written
is simply not kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import numpy as np

from arena.storage.store import DB_NAME, SCHEMA_VERSION

__all__ = [
    "CACHE_DIR",
    "GROUPS",
    "TC_CLASSES",
    "RatingInputError",
    "StoreGames",
    "find_stores",
    "grouped_query",
    "read_store",
    "tc_class",
    "without_copies",
]

CACHE_DIR = ".ratings-cache"
CACHE_VERSION = 3
CACHE_SUFFIX = ".groups"
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

GROUPS = np.dtype(
    [
        ("p0", "<i4"),
        ("p1", "<i4"),
        ("half", "i1"),
        ("variant", "<i2"),
        ("tc", "i1"),
        ("day", "<i4"),
        ("count", "<i4"),
        ("first", "<f8"),
        ("last", "<f8"),
    ]
)
"""One row per group of a store's games: the players (``p0`` moved first), player
0's score in half points, the variant and time-control class, the UTC day they
started, how many games, and the first and last start (Unix seconds)."""

_FIELDS_V2 = "identity0, identity1, game, variant, time_control"
_FIELDS_V1 = ", ".join(
    f"json_extract(record, '{path}')"
    for path in ("$.identities[0]", "$.identities[1]", "$.game", "$.variant", "$.time_control")
)
_DAY = f"CAST(started_at / {DAY} AS INTEGER)"


class RatingInputError(ValueError):
    """A results folder, store or option the rating list cannot use (one line)."""


def grouped_query(version: int, where: str = "") -> str:
    """The rating list's query on a store of schema ``version``, with an optional
    ``WHERE`` clause. On version 2 with no clause it reads only ``games_rating``
    (in its order: no sort); a clause on ``rowid`` (the games stored since the
    last read) reads just those rows of the table (``NOT INDEXED``: the planner
    would scan the whole index to filter it). Version 1 stores parse every
    record read (SQLite parses a record once for its five fields)."""
    fields = _FIELDS_V2 if version >= 2 else _FIELDS_V1
    source = "games NOT INDEXED" if where and version >= 2 else "games"
    return (
        f"SELECT player0, player1, {fields}, score, {_DAY}, count(*),"
        f" min(started_at), max(started_at) FROM {source} {where}"
        f" GROUP BY player0, player1, {fields}, score, {_DAY}"
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
        inner = (
            sorted(p for p in path.iterdir() if (p / DB_NAME).is_file()) if path.is_dir() else []
        )
        if not inner:
            raise RatingInputError(f"{path}: no tournament results (no {DB_NAME} in it or below)")
        found += inner
    return found


@dataclass
class StoreGames:
    """One store reduced to what the list needs: its games in groups.

    ``groups["p0"]``/``["p1"]`` index ``labels`` (the players as this store names
    them, before aliases), ``entries[i]`` is the entry name behind ``labels[i]``;
    ``groups["variant"]`` indexes ``variants``, ``groups["tc"]`` ``TC_CLASSES``
    (``len(TC_CLASSES)`` for unknown).
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
    last_rowid: int = 0
    version: int = SCHEMA_VERSION
    """The store's schema version (1: read through its records)."""
    sides: list[tuple[str, str]] = field(default_factory=list)
    """Per label: the ``(entry, identity label)`` it was made of (for splitting)."""
    meta: dict = field(default_factory=dict, repr=False)
    """The cache header it was built from (to read a part of the store again)."""

    @property
    def count(self) -> int:
        """Games in the store (up to ``last_rowid``)."""
        return int(self.groups["count"].sum())


def _stat_key(db: Path) -> list[int]:
    out: list[int] = []
    for p in (db, db.with_name(db.name + "-wal")):
        try:
            st = os.stat(p)
        except OSError:
            out += [0, 0, 0, 0]
            continue
        out += [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]
    return out


def _connect(db: Path) -> sqlite3.Connection:
    uri = f"file:{quote(str(db.resolve()))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=LOCK_TIMEOUT, isolation_level=None)
        conn.execute("SELECT 1 FROM games LIMIT 1").fetchall()
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "locked" in text or "busy" in text:
            raise RatingInputError(
                f"{db}: the store is locked by another process ({text})"
            ) from None
        raise RatingInputError(f"{db}: not a usable results database ({text})") from None
    except sqlite3.DatabaseError as exc:
        raise RatingInputError(f"{db}: not a usable results database ({exc})") from None
    return conn


def _schema_version(conn: sqlite3.Connection, db: Path) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    try:
        version = int(row[0]) if row is not None else 1
    except (TypeError, ValueError):
        version = -1
    if version not in (1, SCHEMA_VERSION):
        raise RatingInputError(
            f"{db}: schema version {row[0] if row else '?'}, this arena reads {SCHEMA_VERSION}"
        )
    return version


def _options_by_entry(config_text: str) -> dict[str, str]:
    """``entry name -> "Hash=64, Threads=1"`` from the stored tournament file."""
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
            out[bot["name"]] = ", ".join(f"{k}={options[k]}" for k in sorted(options))
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
    name = " ".join(ident["name"].split())[:64]
    version = ident.get("version")
    return f"{name} {version}" if isinstance(version, str) and version else name


def _cache_path(cache_dir: Path | None, db: Path) -> Path | None:
    if cache_dir is None:
        return None
    digest = hashlib.blake2b(str(db.resolve()).encode(), digest_size=10).hexdigest()
    return cache_dir / f"{digest}{CACHE_SUFFIX}"


def _load_cache(path: Path | None) -> tuple[dict, np.ndarray] | None:
    if path is None:
        return None
    try:
        data = path.read_bytes()
        end = data.index(b"\n")
        meta = json.loads(data[:end])
        if not isinstance(meta, dict) or meta.get("version") != CACHE_VERSION:
            return None
        groups = np.frombuffer(data, GROUPS, offset=end + 1)
    except (OSError, ValueError):
        return None
    return meta, groups


def _save_cache(path: Path | None, meta: dict, groups: np.ndarray) -> None:
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(json.dumps(meta).encode() + b"\n" + groups.tobytes())
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only results folder: rate without a cache


def _new_meta(name: str, created_at: str, uid: str, version: int, options: dict) -> dict:
    return {
        "version": CACHE_VERSION,
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
    db = directory / DB_NAME
    if not db.is_file():
        raise RatingInputError(f"{directory}: no results database ({DB_NAME})")
    stat = _stat_key(db)
    cache = _cache_path(cache_dir, db)
    cached = _load_cache(cache)
    if cached is not None and cached[0].get("stat") == stat:
        return _from_parts(directory, *cached)

    conn = _connect(db)
    try:
        try:
            conn.execute("BEGIN")  # one snapshot: the last rowid and the rows agree
            row = conn.execute("SELECT name, config_toml, created_at FROM tournament").fetchone()
            if row is None:
                raise RatingInputError(f"{db}: holds no tournament")
            version = _schema_version(conn, db)
            name, config_text, created_at = row
            first = conn.execute(
                "SELECT key, started_at FROM games ORDER BY rowid LIMIT 1"
            ).fetchone()
            last_rowid = conn.execute("SELECT max(rowid) FROM games").fetchone()[0] or 0
            uid = hashlib.blake2b(
                f"{name}\0{created_at}\0{first!r}".encode(), digest_size=12
            ).hexdigest()
            if (
                cached is not None
                and cached[0]["uid"] == uid
                and cached[0]["schema"] == version
                and cached[0]["stat"][:2] == stat[:2]  # the same file, grown
                and last_rowid >= cached[0]["last_rowid"]  # not put back to an older copy
            ):
                meta, old = cached
                meta = dict(meta)
                where, args = "WHERE rowid > ?", (meta["last_rowid"],)
            else:
                meta = _new_meta(name, created_at, uid, version, _options_by_entry(config_text))
                old = np.zeros(0, GROUPS)
                where, args = "", ()
            rows = conn.execute(grouped_query(version, where), args).fetchall()
        except sqlite3.OperationalError as exc:
            raise RatingInputError(f"{db}: cannot be read ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise RatingInputError(f"{db}: not a usable results database ({exc})") from None
    finally:
        conn.close()
    groups = _merge(old, _groups(meta, rows)) if len(old) else _groups(meta, rows)
    meta["last_rowid"] = last_rowid
    meta["stat"] = stat
    _save_cache(cache, meta, groups)
    return _from_parts(directory, meta, groups)


def _groups(meta: dict, rows: Iterable[tuple]) -> np.ndarray:
    """SQL groups as :data:`GROUPS` rows. A side's raw player is ``(entry, identity
    label)``, coded in ``meta["raw"]``; which raw players become which labels is
    decided in :func:`_from_parts`, once every game of the store is known. Equal
    texts (the same bots, variant, clock) are decoded once per call."""
    raw = {(e, lab): i for i, (e, lab) in enumerate(meta["raw"])}
    variants: list[str] = meta["variants"]
    tcs: dict[str, int] = meta["tcs"]
    options: dict[str, str] = meta["options"]
    labels: dict[object, str | None] = {}
    unknown = object()
    rows = list(rows)
    out = np.zeros(len(rows), GROUPS)
    for i, (e0, e1, id0, id1, game, variant, tc, score, day, count, first, last) in enumerate(rows):
        if isinstance(game, str) and game and not meta["game"]:
            meta["game"] = game
        codes = []
        for entry, ident in ((e0, id0), (e1, id1)):
            label = labels.get(ident, unknown)
            if label is unknown:
                label = labels[ident] = _identity_label(ident)
            if label is not None:
                meta["identified"] = True
                opts = options.get(entry, "")
                label = f"{label} ({opts})" if opts else label
            key = (entry, label or "")
            code = raw.get(key)
            if code is None:
                code = raw[key] = len(raw)
                meta["raw"].append([entry, label or ""])
            codes.append(code)
        v = variant if isinstance(variant, str) else ""
        if v not in variants:
            variants.append(v)
        t = tc if isinstance(tc, str) else ""
        if t not in tcs:
            cls = tc_class(t)
            tcs[t] = TC_CLASSES.index(cls) if cls in TC_CLASSES else len(TC_CLASSES)
        out[i] = (
            codes[0],
            codes[1],
            round(float(score) * 2),
            variants.index(v),
            tcs[t],
            day or 0,
            count,
            first or 0.0,
            last or 0.0,
        )
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
    out["first"] = np.minimum.reduceat(both["first"], starts)
    out["last"] = np.maximum.reduceat(both["last"], starts)
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
            raise RatingInputError(f"{db}: cannot be read ({exc})") from None
        finally:
            conn.close()
        meta = json.loads(json.dumps(s.meta))  # its codes, not shared with the cached one
        out.append(_from_parts(s.directory, meta, _groups(meta, part)))
    return out


def _from_parts(directory: Path, meta: dict, groups: np.ndarray) -> StoreGames:
    """Turn raw players (entry, identity) into the store's players.

    A side with no identity (its bot never answered the handshake, or the store
    predates identities) takes the identity its entry showed in other games of
    the store, else the entry name. Two entries of one tournament showing the same
    identity (the same bot under two names, e.g. two seeds) stay two players, each
    marked with its entry name: a player cannot play itself.
    """
    pairs = [(entry, label) for entry, label in meta["raw"]]
    seen: dict[str, dict[str, int]] = {}
    for entry, label in pairs:
        if label:
            seen.setdefault(entry, {}).setdefault(label, 0)
            seen[entry][label] += 1
    resolved: list[tuple[str, str]] = []
    for entry, label in pairs:
        if not label:
            label = next(iter(seen[entry])) if entry in seen else entry
        resolved.append((entry, label))
    entries_of: dict[str, set[str]] = {}
    for entry, label in resolved:
        entries_of.setdefault(label, set()).add(entry)
    labels: list[str] = []
    entries: list[str] = []
    sides: list[tuple[str, str]] = []
    index: dict[str, int] = {}
    remap = np.zeros(max(len(pairs), 1), np.int32)
    for code, (entry, label) in enumerate(resolved):
        final = label if len(entries_of[label]) == 1 or label == entry else f"{label} [{entry}]"
        if final not in index:
            index[final] = len(labels)
            labels.append(final)
            entries.append(entry)
            sides.append((entry, label))
        remap[code] = index[final]
    players = groups.copy()
    if len(players):
        players["p0"] = remap[groups["p0"]]
        players["p1"] = remap[groups["p1"]]
    return StoreGames(
        directory=directory,
        tournament=meta["tournament"],
        created_at=meta["created_at"],
        uid=meta["uid"],
        game=meta["game"],
        identified=bool(meta["identified"]),
        labels=labels,
        entries=entries,
        variants=list(meta["variants"]),
        groups=players,
        last_rowid=int(meta["last_rowid"]),
        version=int(meta["schema"]),
        sides=sides,
        meta=meta,
    )
