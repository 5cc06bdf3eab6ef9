"""``rounds.json``: the draw of a Swiss or knockout, beside the results database.

The tournament writes it after every draw (a whole new file renamed into place,
so a reader never sees half of one); the reports and the web view read it to
show the round-by-round table and the bracket. It is a record, not a source:
a resumed run draws every round again from the stored games and the seed, and
writes it anew. Read from a results folder it is untrusted data: bounded in
size, decoded into typed values, never followed if it is a symlink.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from arena.storage.safefile import write_atomic

__all__ = ["ROUNDS_FILE", "Board", "DrawnRound", "RoundsRecord", "read_rounds", "write_rounds"]

ROUNDS_FILE = "rounds.json"
MAX_ROUNDS_BYTES = 16 << 20


class Board(msgspec.Struct, frozen=True, kw_only=True):
    """One pairing of a round (``b`` is ``None`` for a bye, or a knockout side not
    known yet, as ``a`` may be). ``pair_keys`` are its pair tasks' keys;
    ``winner`` and ``how`` say who went through a knockout match and why
    (``""`` when decided on points, else ``bye``, ``walkover`` or the tie rule)."""

    a: str | None
    b: str | None
    pair_keys: list[str] = []
    winner: str | None = None
    how: str = ""


class DrawnRound(msgspec.Struct, frozen=True, kw_only=True):
    number: int
    boards: list[Board]


class RoundsRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The draw so far. ``entrants`` are in seed order (knockout) or in the seeded
    initial order (Swiss); ``rounds`` is how many rounds the tournament has;
    ``drawn`` holds each round drawn so far (a knockout's later rounds with
    their sides not known yet as ``None``)."""

    format: str
    entrants: list[str]
    rounds: int
    bye_points: float = 0.0
    pairs: int = 1
    extra_pairs: int = 0
    drawn: list[DrawnRound] = []
    withdrawn: list[str] = []
    champion: str | None = None


def write_rounds(directory: str | os.PathLike[str], record: RoundsRecord) -> Path:
    # Never through a link a received results folder may hold (safefile).
    return write_atomic(Path(directory) / ROUNDS_FILE, msgspec.json.encode(record))


def read_rounds(directory: str | os.PathLike[str]) -> RoundsRecord | None:
    """The record in ``directory``, or ``None`` if there is none or it cannot be used."""
    path = Path(directory) / ROUNDS_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_ROUNDS_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_ROUNDS_BYTES:
        return None
    try:
        return msgspec.json.decode(data, type=RoundsRecord)
    except msgspec.DecodeError:
        return None
