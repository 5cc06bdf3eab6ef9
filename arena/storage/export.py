"""``arena export``: every stored game as one self-describing JSON line.

A line is read without the database beside it (by a script, a notebook, another
rating tool), so each carries what its record alone does not say: the export
schema version, the tournament's name, the game's own figures of its final
position (Kamisado round scores, Sekigahara impacts and casualties) and the
bots' identities, next to the record's fields, ``key`` and ``pair_key``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from arena.storage.safefile import atomic_file
from arena.storage.store import Store

__all__ = ["EXPORT_SCHEMA", "export_jsonl", "export_lines", "write_jsonl"]

EXPORT_SCHEMA = 1
"""Version of the line format; raised when a field changes meaning or goes away."""


def export_lines(store: Store) -> Iterator[bytes]:
    """One encoded line (with its newline) per stored game, in stored order."""
    encoder = msgspec.json.Encoder()
    tournament = store.tournament.name
    for key, pair_key, record in store.pair_items():
        line: dict[str, Any] = {
            "schema": EXPORT_SCHEMA,
            "tournament": tournament,
            "key": key,
            "pair_key": pair_key,
            **msgspec.to_builtins(record),
            "figures": record.figures(),
        }
        yield encoder.encode(line) + b"\n"


def write_jsonl(store: Store, stream: BinaryIO) -> int:
    """Write every game to ``stream`` (standard output for ``-o -``); the count."""
    n = 0
    for line in export_lines(store):
        stream.write(line)
        n += 1
    return n


def export_jsonl(store: Store, path: str | os.PathLike[str]) -> int:
    """Write every game to ``path``, beside its final name then renamed into place,
    so a reader never sees half an export; the count."""
    path = Path(path)
    with atomic_file(path, binary=True) as f:
        n = write_jsonl(store, f)
    return n
