"""Game registry: the games found by package scan and by entry point.

Every subpackage of ``arena.games`` that exports ``GAME`` is a game, and so is
every ``Game`` an installed distribution declares in the entry-point group
``arena.games`` (``arena/games/base.py`` shows the declaration). Either way,
adding a game means adding its folder and nothing else.

May import: nothing else of the arena (the rules are pure: no I/O, processes or clocks;
a game's pictures, in its ``show.py``, use rich but no part of the arena either).
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import cache

from arena.games.base import (
    TERMINAL,
    CheckCase,
    Game,
    GameError,
    IllegalAction,
    Outcome,
    Solution,
    State,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "TERMINAL",
    "CheckCase",
    "Game",
    "GameError",
    "IllegalAction",
    "Outcome",
    "Solution",
    "State",
    "get_game",
    "game_names",
]

ENTRY_POINT_GROUP = "arena.games"


@cache
def _packaged() -> dict[str, Game]:
    """The games under ``arena/games/``."""
    games: dict[str, Game] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            games[game.name] = game
    return games


@cache
def _named(name: str) -> Game | None:
    """The packaged game ``name`` when its folder bears its name, importing that
    folder only: every process of a tournament (the arena, each worker) needs its
    one game, and importing the others cost each a tenth of a second and more."""
    if not name.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(f"{__name__}.{name}")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    game = getattr(importlib.import_module(spec.name), "GAME", None)
    return game if isinstance(game, Game) and game.name == name else None


@cache
def _registry() -> dict[str, Game]:
    """Every game: the packaged ones and those installed under the entry point
    group (a packaged game's name is never taken by an installed one)."""
    # Imported here: importlib.metadata and its scan of every installed
    # distribution cost a bot's start-up a tenth of a second, and a bot only
    # needs them for a game of another package.
    from importlib.metadata import entry_points

    games = dict(_packaged())
    for point in entry_points(group=ENTRY_POINT_GROUP):
        where = f"the {ENTRY_POINT_GROUP} entry point {point.name} = {point.value!r}"
        try:
            game = point.load()
        except Exception as exc:  # noqa: BLE001 - a broken game package is one line
            raise GameError(f"cannot load {where}: {type(exc).__name__}: {exc}") from None
        if not isinstance(game, Game):
            raise GameError(f"{where} is not a Game but a {type(game).__name__}")
        games.setdefault(game.name, game)
    return games


def game_names() -> list[str]:
    return sorted(_registry())


def get_game(name: str) -> Game:
    named = _named(name)
    if named is not None:
        return named
    packaged = _packaged()
    if name in packaged:
        return packaged[name]
    try:
        return _registry()[name]
    except KeyError:
        known = ", ".join(game_names()) or "none"
        raise GameError(f"unknown game {name!r} (known: {known})") from None
