"""Game registry: every subpackage of ``arena.games`` that exports ``GAME`` is a game.

Discovery is by package scan, so adding a game means adding a folder here and
nothing else.

May import: nothing else of the arena (the rules are pure: no I/O, processes or clocks).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from arena.games.base import (
    TERMINAL,
    Game,
    GameError,
    IllegalAction,
    Outcome,
    State,
)

__all__ = [
    "TERMINAL",
    "Game",
    "GameError",
    "IllegalAction",
    "Outcome",
    "State",
    "get_game",
    "game_names",
]


@cache
def _registry() -> dict[str, Game]:
    games: dict[str, Game] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            games[game.name] = game
    return games


def game_names() -> list[str]:
    return sorted(_registry())


def get_game(name: str) -> Game:
    try:
        return _registry()[name]
    except KeyError:
        known = ", ".join(game_names()) or "none"
        raise GameError(f"unknown game {name!r} (known: {known})") from None
