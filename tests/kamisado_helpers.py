"""Building hand-made Kamisado positions for rule tests."""

from __future__ import annotations

from arena.games.kamisado import GAME, KamisadoState
from arena.games.kamisado.board import COLOUR_LETTERS, RANK_VALUE, SQUARE_INDEX


def position_text(
    towers: dict[str, str],
    side: str = "b",
    required: str = "-",
    kind: str = "standard",
    round_no: int | None = None,
    pending: str = "-",
) -> str:
    """A position text with ``towers`` (square -> token such as ``'G+'``) placed.

    Towers not named stand on the free squares of their owner's home row, from
    the a-file on, then on the next row out: far from most tested squares. The
    round number defaults to the one the promotions imply (one per round won).
    """
    at: dict[int, str] = {}
    for square, token in towers.items():
        at[SQUARE_INDEX[square]] = token
    placed = {token[0] for token in towers.values()}
    for letter in COLOUR_LETTERS + COLOUR_LETTERS.lower():
        if letter in placed:
            continue
        rows = (0, 1, 2) if letter.isupper() else (7, 6, 5)
        square = next(f + 8 * r for r in rows for f in range(8) if f + 8 * r not in at)
        at[square] = letter
    rows = []
    for r in range(7, -1, -1):
        row, empty = "", 0
        for f in range(8):
            token = at.get(f + 8 * r)
            if token is None:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += token
        rows.append(row + (str(empty) if empty else ""))
    scores = [0, 0]
    for token in at.values():
        scores[0 if token[0].isupper() else 1] += RANK_VALUE[token.count("+")]
    if round_no is None:
        round_no = sum(token.count("+") for token in at.values()) + (pending == "-")
    return f"{'/'.join(rows)} {side} {required} {kind} {scores[0]}-{scores[1]} {round_no} {pending}"


def state(towers: dict[str, str], **kwargs: object) -> KamisadoState:
    return GAME.state_from_text(position_text(towers, **kwargs))  # type: ignore[arg-type]
