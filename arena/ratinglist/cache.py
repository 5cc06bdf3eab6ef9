"""The rating list's cache of every store's groups of games: one file,
``<results>/.ratings-cache/stores.cache``, read in one go (see
:mod:`arena.ratinglist.collect`, which fills it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from arena.storage.safefile import atomic_file, read_own, refuse_link

__all__ = ["CACHE_DIR", "CACHE_NAME", "CACHE_VERSION", "GROUPS", "Cache", "Meta"]

CACHE_DIR = ".ratings-cache"
CACHE_NAME = "stores.cache"
CACHE_VERSION = 7
"""3: identity names and versions with control characters shown as escapes; 4: one
file of groups for every store; 5: both (a cache of 4 may hold raw names); 6: the
players of a store know which entries never gave an identity (not rated); 7: entry
and tournament names shown so too (6 was also the number of that change alone)."""
Meta = dict[str, Any]
"""A store's cache header: JSON, read back from the cache file (what a field holds
depends on its name, which a ``dict`` type cannot say)."""
GROUPS = np.dtype(
    [
        ("p0", "<i4"),
        ("p1", "<i4"),
        ("half", "i1"),
        ("variant", "<i2"),
        ("tc", "i1"),
        ("day", "<i4"),
        ("count", "<i4"),
    ]
)
"""One row per group of a store's games: the players (``p0`` moved first), player
0's score in half points, the variant and time-control class, the UTC day they
started (days since 1970-01-01) and how many games."""


class Cache:
    """Every store's groups in one file, ``<cache dir>/stores.cache``: a JSON
    header line (per store: its path, what the collector's ``_from_parts`` and the
    next read need, and where its rows are), then all rows. One read and one
    ``np.frombuffer`` load hundreds of stores; the file is rewritten (beside,
    then renamed) only when a store changed. Entries of stores this run did not
    ask for are kept while their file exists, so lists over other folders
    sharing the folder keep theirs."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.path = cache_dir / CACHE_NAME if cache_dir is not None else None
        self.entries: dict[str, tuple[Meta, np.ndarray]] = {}
        self.used: set[str] = set()
        self.changed = False
        if self.path is None:
            return
        data = read_own(self.path)  # a cache planted in a received folder is not read
        if data is None:
            return
        try:
            end = data.index(b"\n")
            header = msgspec.json.decode(data[:end])
            if not isinstance(header, dict) or header.get("version") != CACHE_VERSION:
                return
            rows = np.frombuffer(data, GROUPS, offset=end + 1)
            for key, meta in header["stores"].items():
                self.entries[key] = (meta, rows[meta["start"] : meta["end"]])
        except (OSError, ValueError, KeyError, TypeError, msgspec.DecodeError):
            self.entries = {}

    def get(self, key: str) -> tuple[Meta, np.ndarray] | None:
        self.used.add(key)
        return self.entries.get(key)

    def put(self, key: str, meta: Meta, groups: np.ndarray) -> None:
        self.used.add(key)
        self.entries[key] = (meta, groups)
        self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        kept = {
            key: entry
            for key, entry in self.entries.items()
            if key in self.used or os.path.exists(key)
        }
        stores: dict[str, Meta] = {}
        start = 0
        for key, (meta, groups) in kept.items():
            stores[key] = {**meta, "start": start, "end": start + len(groups)}
            start += len(groups)
        header = msgspec.json.encode({"version": CACHE_VERSION, "stores": stores})
        rows = [groups for _, groups in kept.values()]
        try:
            refuse_link(self.path.parent, folder=True)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(self.path, binary=True, unique=True) as f:
                f.write(header + b"\n")
                f.write(np.concatenate(rows).astype(GROUPS).tobytes() if rows else b"")
        except OSError:
            pass  # a read-only results folder: rate without a cache
