"""Kamisado: the rules core (``position``), its notation and the ``Game`` adapter."""

from arena.games.kamisado.game import Kamisado, KamisadoState
from arena.games.kamisado.notation import (
    move_to_text,
    position_to_text,
    text_to_move,
    text_to_position,
)
from arena.games.kamisado.position import Position, perft

GAME = Kamisado()

__all__ = [
    "GAME",
    "Kamisado",
    "KamisadoState",
    "Position",
    "move_to_text",
    "perft",
    "position_to_text",
    "text_to_move",
    "text_to_position",
]
