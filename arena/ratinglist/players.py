"""Who a player is across tournaments: the bot's identity, then the aliases file.

By default a player is what the bot said of itself in its handshake (name and
version) with the engine options its tournament file set, not the entry name a
tournament happened to give it (see :mod:`arena.ratinglist.collect`). An aliases
file (TOML) renames, merges and splits::

    "alphabeta 1.2" = ["ab-old", "alphabeta 1.1"]    # merge two players into one
    "random (fast)" = ["cup-3/random"]               # split: only this tournament's entry

Each key is the name the list shows; each value lists what it takes in: a
player's default name (``alphabeta 1.1``), an entry name (``ab-old``, in every
tournament), or ``TOURNAMENT/ENTRY`` (that entry of that tournament only, which
splits it off). The most specific match wins: ``TOURNAMENT/ENTRY``, then the
default name, then the entry name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from arena.ratinglist.collect import RatingInputError

__all__ = ["Aliases", "load_aliases"]


@dataclass(frozen=True)
class Aliases:
    targets: dict[str, str] = field(default_factory=dict)
    """Each source (a name, an entry or ``TOURNAMENT/ENTRY``) -> the list's name."""

    def resolve(self, tournament: str, entry: str, label: str) -> str:
        for source in (f"{tournament}/{entry}", label, entry):
            if source in self.targets:
                return self.targets[source]
        return label


def load_aliases(path: str | Path | None) -> Aliases:
    """Read an aliases file; any mistake is one line naming the file (and the key)."""
    if path is None:
        return Aliases()
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RatingInputError(f"aliases file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RatingInputError(f"aliases file {path}: not valid TOML ({exc})") from None
    targets: dict[str, str] = {}
    for name, sources in data.items():
        if isinstance(sources, str):
            sources = [sources]
        if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            raise RatingInputError(
                f'aliases file {path}: {name!r} must list names, e.g. {name!r} = ["old-name"]'
            )
        if not name.strip():
            raise RatingInputError(f"aliases file {path}: an empty player name")
        for source in sources:
            if source in targets and targets[source] != name:
                raise RatingInputError(
                    f"aliases file {path}: {source!r} is given to both "
                    f"{targets[source]!r} and {name!r}"
                )
            targets[source] = name
    return Aliases(targets)
