"""Reading every stored tournament for the rating list: read-only, and incremental.

A tournament's ``games.sqlite`` is opened through SQLite's read-only URI
(``mode=ro``), never through :class:`arena.storage.store.Store`, which creates tables and
sets pragmas on open: the rating list must never change a tournament's file.

What the list needs of a game is small (who played, as which bot, the score,
when, the variant and the time control), so each store is reduced once to a few
numpy columns and kept in ``<results>/.ratings-cache/`` beside the results. The
cache is keyed by the file's device, inode, size and mtime (and its WAL's), so a
store that grew is read again from its last rowid on, and one replaced by
another file (another inode, or another tournament) is read again whole. The
cache is safe to delete; a cache that cannot be written is simply not kept.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import numpy as np

from arena.protocol.text import visible
from arena.storage.store import DB_NAME

__all__ = [
    "CACHE_DIR",
    "TC_CLASSES",
    "RatingInputError",
    "StoreGames",
    "find_stores",
    "read_store",
    "tc_class",
]

CACHE_DIR = ".ratings-cache"
CACHE_VERSION = 3
"""3: identity names and versions with control characters shown as escapes."""
LOCK_TIMEOUT = 2.0
"""Seconds to wait for a store another process holds locked before saying so."""

TC_CLASSES = ("bullet", "blitz", "rapid", "classical")
"""Time-control classes by a game's estimated length per player, ``base + 40 ×
increment`` seconds (``40 × movetime`` for a fixed time per move), as lichess and
fastchess estimate it: bullet under 3 minutes, blitz under 8, rapid under 25,
classical from 25 on. A handicap game takes the class of its slower control."""
_TC_LIMITS = (180.0, 480.0, 1500.0)


class RatingInputError(ValueError):
    """A results folder, store or option the rating list cannot use (one line)."""


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
    """One store reduced to what the list needs; the columns are per game.

    ``p0``/``p1`` index ``labels`` (the players as this store names them, before
    aliases), ``entries[i]`` is the entry name behind ``labels[i]``; ``half`` is
    player 0's score in half points (0, 1, 2); ``when`` is the game's start (Unix
    seconds); ``variant`` and ``tc`` index ``variants`` and ``TC_CLASSES``
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
    key_array: np.ndarray | None
    """The game keys, read from the cache only when asked (only copies need them)."""
    p0: np.ndarray
    p1: np.ndarray
    half: np.ndarray
    when: np.ndarray
    variant: np.ndarray
    tc: np.ndarray
    last_rowid: int = 0
    sides: list[tuple[str, str]] = field(default_factory=list)
    """Per label: the ``(entry, identity label)`` it was made of (for splitting)."""

    key_file: Path | None = None

    @property
    def keys(self) -> np.ndarray:
        if self.key_array is None:
            assert self.key_file is not None
            with np.load(self.key_file, allow_pickle=False) as z:
                self.key_array = z["keys"]
        return self.key_array

    @property
    def count(self) -> int:
        return len(self.p0)


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
        conn = sqlite3.connect(uri, uri=True, timeout=LOCK_TIMEOUT)
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


def _identity_label(ident: object, options: str) -> str | None:
    if not isinstance(ident, dict) or not isinstance(ident.get("name"), str):
        return None
    # An older arena stored a bot's words as it wrote them: shown as escapes here,
    # so no list, terminal table or ratings.md carries an escape sequence.
    name = visible(" ".join(ident["name"].split()))[:64]
    version = ident.get("version")
    label = f"{name} {visible(version)}" if isinstance(version, str) and version else name
    return f"{label} ({options})" if options else label


def _cache_path(cache_dir: Path | None, db: Path) -> Path | None:
    if cache_dir is None:
        return None
    digest = hashlib.blake2b(str(db.resolve()).encode(), digest_size=10).hexdigest()
    return cache_dir / f"{digest}.npz"


_ARRAYS = ("keys", "p0", "p1", "half", "when", "variant", "tc")
_COLUMNS = np.dtype(
    [
        ("p0", "<i4"),
        ("p1", "<i4"),
        ("half", "i1"),
        ("when", "<f8"),
        ("variant", "<i2"),
        ("tc", "i1"),
    ]
)
"""The cache holds the columns as one record array (one read per store, not six)."""


def _load_cache(path: Path | None, *, keys: bool) -> tuple[dict, dict] | None:
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            cols = z["cols"]
            arrays = {k: cols[k] for k in _COLUMNS.names}
            if keys:
                arrays["keys"] = z["keys"]
    except (OSError, ValueError, KeyError):
        return None
    if meta.get("version") != CACHE_VERSION:
        return None
    return meta, arrays


def _save_cache(path: Path | None, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    if path is None:
        return
    cols = np.empty(len(arrays["p0"]), _COLUMNS)
    for k in _COLUMNS.names:
        cols[k] = arrays[k]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp.npz")
        np.savez(tmp, meta=np.array(json.dumps(meta)), cols=cols, keys=arrays["keys"])
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only results folder: rate without a cache


def read_store(directory: Path, cache_dir: Path | None = None) -> StoreGames:
    """The games of one tournament folder, from the cache where it is still valid."""
    db = directory / DB_NAME
    if not db.is_file():
        raise RatingInputError(f"{directory}: no results database ({DB_NAME})")
    stat = _stat_key(db)
    cache = _cache_path(cache_dir, db)
    cached = _load_cache(cache, keys=False)
    if cached is not None and cached[0]["stat"] == stat:
        return _from_parts(directory, *cached, key_file=cache)
    if cached is not None:
        cached = _load_cache(cache, keys=True)  # it may grow: its keys are needed

    conn = _connect(db)
    try:
        try:
            row = conn.execute("SELECT name, config_toml, created_at FROM tournament").fetchone()
        except sqlite3.DatabaseError as exc:
            raise RatingInputError(f"{db}: not a usable results database ({exc})") from None
        if row is None:
            raise RatingInputError(f"{db}: holds no tournament")
        name, config_text, created_at = row
        first = conn.execute("SELECT key, started_at FROM games ORDER BY rowid LIMIT 1").fetchone()
        uid = hashlib.blake2b(
            f"{name}\0{created_at}\0{first!r}".encode(), digest_size=12
        ).hexdigest()
        meta: dict
        arrays: dict[str, np.ndarray]
        start = 0
        if (
            cached is not None
            and cached[0]["uid"] == uid
            and cached[0]["stat"][:2] == stat[:2]  # the same file, grown
            and (conn.execute("SELECT max(rowid) FROM games").fetchone()[0] or 0)
            >= cached[0]["last_rowid"]  # not put back to an older copy of itself
        ):
            meta, arrays = cached
            start = meta["last_rowid"]
        else:
            meta = {
                "version": CACHE_VERSION,
                "tournament": name,
                "created_at": created_at,
                "uid": uid,
                "game": "",
                "identified": False,
                "labels": [],
                "sides": [],
                "variants": [],
                "last_rowid": 0,
                "raw": {},
            }
            arrays = {
                "keys": np.zeros(0, dtype="U1"),
                "p0": np.zeros(0, np.int32),
                "p1": np.zeros(0, np.int32),
                "half": np.zeros(0, np.int8),
                "when": np.zeros(0, np.float64),
                "variant": np.zeros(0, np.int16),
                "tc": np.zeros(0, np.int8),
            }
        options = _options_by_entry(config_text)
        try:
            rows = conn.execute(
                # One JSON parse per record for the four fields (not one each).
                "SELECT rowid, key, player0, player1, score, started_at,"
                " json_extract(record, '$.game', '$.variant', '$.time_control', '$.identities')"
                " FROM games WHERE rowid > ? ORDER BY rowid",
                (start,),
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise RatingInputError(f"{db}: cannot be read ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise RatingInputError(f"{db}: not a usable results database ({exc})") from None
    finally:
        conn.close()
    _append(meta, arrays, rows, options)
    meta["stat"] = stat
    _save_cache(cache, meta, arrays)
    return _from_parts(directory, meta, arrays)


def _append(meta: dict, arrays: dict[str, np.ndarray], rows: list[tuple], options: dict) -> None:
    """Reduce new rows into the columns. A side's raw player is ``entry\\0identity``;
    which raw players become which labels is decided in :func:`_from_parts`, once
    every game of the store is known."""
    raw: dict[str, int] = meta["raw"]
    variants: list[str] = meta["variants"]
    tc_memo: dict[str, int] = {}
    ident_memo: dict[str, list[str | None]] = {}
    fields_memo: dict[str | None, tuple[str, str, str, str]] = {}
    n = len(rows)
    keys: list[str] = []
    p0 = np.empty(n, np.int32)
    p1 = np.empty(n, np.int32)
    half = np.empty(n, np.int8)
    when = np.empty(n, np.float64)
    variant = np.empty(n, np.int16)
    tcs = np.empty(n, np.int8)
    for i, (rowid, key, e0, e1, score, started, fields) in enumerate(rows):
        meta["last_rowid"] = rowid
        parsed_fields = fields_memo.get(fields)
        if parsed_fields is None:  # equal texts (same bots, same variant) parse once
            parsed_fields = fields_memo[fields] = _fields(fields)
        game, var, tc, idents = parsed_fields
        if game and not meta["game"]:
            meta["game"] = game
        keys.append(key)
        labels = ident_memo.get(idents or "")
        if labels is None:
            try:
                parsed = json.loads(idents) if idents else []
            except ValueError:
                parsed = []
            parsed = parsed if isinstance(parsed, list) else []
            labels = [_identity_label(parsed[s], "") if s < len(parsed) else None for s in (0, 1)]
            ident_memo[idents or ""] = labels
        for side, entry, out in ((0, e0, p0), (1, e1, p1)):
            label = labels[side]
            if label is not None:
                meta["identified"] = True
                opts = options.get(entry, "")
                label = f"{label} ({opts})" if opts else label
            rk = f"{entry}\0{label or ''}"
            code = raw.get(rk)
            if code is None:
                code = raw[rk] = len(raw)
            out[i] = code
        half[i] = round(float(score) * 2)
        when[i] = float(started) if started is not None and math.isfinite(started) else 0.0
        v = var or ""
        if v not in variants:
            variants.append(v)
        variant[i] = variants.index(v)
        tc_text = tc or ""
        code = tc_memo.get(tc_text)
        if code is None:
            cls = tc_class(tc_text)
            code = tc_memo[tc_text] = (
                TC_CLASSES.index(cls) if cls in TC_CLASSES else len(TC_CLASSES)
            )
        tcs[i] = code
    new = {
        "keys": np.array(keys, dtype=str) if keys else np.zeros(0, dtype="U1"),
        "p0": p0,
        "p1": p1,
        "half": half,
        "when": when,
        "variant": variant,
        "tc": tcs,
    }
    for k in _ARRAYS:
        arrays[k] = np.concatenate([arrays[k], new[k]]) if len(arrays[k]) else new[k]


def _fields(text: str | None) -> tuple[str, str, str, str]:
    """``(game, variant, time control, identities as JSON)`` of one record; the
    identities stay text so that equal ones are parsed once per store."""
    try:
        values = json.loads(text) if text else None
    except ValueError:
        values = None
    if not isinstance(values, list) or len(values) != 4:
        return "", "", "", ""
    game, variant, tc, idents = values
    return (
        game if isinstance(game, str) else "",
        variant if isinstance(variant, str) else "",
        tc if isinstance(tc, str) else "",
        json.dumps(idents) if isinstance(idents, list) else "",
    )


def _from_parts(
    directory: Path, meta: dict, arrays: dict[str, np.ndarray], key_file: Path | None = None
) -> StoreGames:
    """Turn raw players (entry, identity) into the store's players.

    A side with no identity (its bot never answered the handshake, or the store
    predates identities) takes the identity its entry showed in other games of
    the store, else the entry name. Two entries of one tournament showing the same
    identity (the same bot under two names, e.g. two seeds) stay two players, each
    marked with its entry name: a player cannot play itself.
    """
    raw: dict[str, int] = meta["raw"]
    pairs = [tuple(k.split("\0", 1)) for k in sorted(raw, key=raw.__getitem__)]
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
        key_array=arrays.get("keys"),
        key_file=key_file,
        p0=remap[arrays["p0"]] if len(arrays["p0"]) else arrays["p0"],
        p1=remap[arrays["p1"]] if len(arrays["p1"]) else arrays["p1"],
        half=arrays["half"],
        when=arrays["when"],
        variant=arrays["variant"],
        tc=arrays["tc"],
        last_rowid=int(meta["last_rowid"]),
        sides=sides,
    )
