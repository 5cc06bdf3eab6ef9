"""How a game is drawn: the presentation companion of a rules core.

A game's rules stay pure (no terminal or web library in them); what a person
sees of it lives beside them in the game's own folder, in a :class:`Show` that
``Game.show()`` imports lazily. The reports, ``arena show``, the web view and
the live page draw every game through this one interface, so a new game brings
its pictures with it and needs no change outside its folder.

Every picture is drawn from a state's public ``observation`` (or the merged view
of both players, for reports written after the game), never from a game's
internals, so what a page shows is what the protocol documents.

A ``Show`` with no arguments draws any game as its observation's fields in
text; a game gives what it draws better:

* ``terminal``: the picture ``arena show`` prints (a rich ``Text``, colours
  allowed: every square also carries a letter, so it reads without them);
* ``frame``: the replay frame of a report view, compact because a report holds
  a frame per ply of every listed game, and because consecutive frames are
  stored as differences of top-level keys (one key per thing that changes);
* ``page``: what an HTML page needs to draw frames in the browser: the script
  that registers the game's picture with ``ArenaReplay.register(picture, ...)``
  (``arena/report/templates/replay.js`` says what a picture provides), its CSS,
  and the ``<template>`` elements and JSON data blocks the script reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["PageAssets", "Show", "fields_text", "package_text"]


@dataclass(frozen=True, slots=True)
class PageAssets:
    """What a page embeds to draw a game's frames: ``templates`` (element id ->
    HTML, each placed in a ``<template>``), ``data`` (element id -> a JSON value,
    each in a ``<script type="application/json">``), the ``script`` that registers
    the picture, and the ``css`` its elements use."""

    script: str
    css: str = ""
    templates: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)


def fields_text(observation: dict[str, Any]) -> Text:
    """An observation's fields as text, one per line: any game's terminal picture."""
    from rich.text import Text

    return Text(
        "\n".join(
            f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in observation.items()
        )
    )


def _same(view: dict[str, Any]) -> dict[str, Any]:
    return view


def _no_page() -> PageAssets | None:
    return None


@dataclass(frozen=True, slots=True)
class Show:
    """How one game is drawn; the defaults list an observation's fields as text."""

    picture: str = "text"
    """The name the page script registers this game's picture under (``"text"``:
    the built-in field listing, which needs no script)."""
    terminal: Callable[[dict[str, Any]], Text] = fields_text
    """The picture of one player's observation for a terminal."""
    frame: Callable[[dict[str, Any]], dict[str, Any]] = _same
    """A report view (both players' observations merged) as a replay frame."""
    page: Callable[[], PageAssets | None] = _no_page
    """What a page needs to draw this game's frames; ``None``: the field listing."""


def package_text(package: str, name: str) -> str:
    """A file shipped in ``package`` (a game's ``show.js``), read as it is."""
    return files(package).joinpath(name).read_text(encoding="utf-8")
