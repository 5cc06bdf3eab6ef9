"""The Sekigahara battle: one attack between two armies, hidden blocks and hidden hands.

The rules are ``docs/rules/sekigahara-battle.md``; the action notation,
position text and scenario format are in ``protocol.md`` (section 11).
"""

from arena.games.sekigahara.game import GAME, SekigaharaGame
from arena.games.sekigahara.scenario import (
    Army,
    Scenario,
    deal,
    default_scenario,
    load_toml,
    swap_roles,
)
from arena.games.sekigahara.state import SekigaharaState

__all__ = [
    "GAME",
    "Army",
    "Scenario",
    "SekigaharaGame",
    "SekigaharaState",
    "deal",
    "default_scenario",
    "load_toml",
    "swap_roles",
]
