"""A proof book: a winning strategy for one side of a round, as data.

The single round from the start is a first-player (Black) win. The proof is a
strategy tree: a Black move for every position Black's strategy reaches
against any Gold reply, down to *leaves*, positions Black wins within a few
plies whatever Gold plays (which the round solver proves in microseconds and
a plain search of the rules core checks in milliseconds). Written as text,
one line per Black position: the board and the required colour (Black is to
move, all towers unpromoted, so nothing else matters) and Black's move::

    obvpyrgn/8/8/8/8/8/8/NGRYPVBO - g1-g7

The book is built by ``arena solve --book FILE`` with the round solver and
checked by ``tests/test_book.py`` without it (the pure-Python rules core and a
plain search at the leaves). Pure computation: reading and writing the file
is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from arena.games.base import GameError
from arena.games.kamisado.board import COLOUR_LETTERS
from arena.games.kamisado.notation import move_to_text, position_to_text, text_to_move
from arena.games.kamisado.position import FREE, PLAY, Position

BLACK = 0

Prover = Callable[[Position, int], tuple[bool, int, int]]
"""``prove(pos, max_plies)``: ``(won, distance, move)`` for the side to move of an
in-play position: whether it wins the round by force (within ``max_plies``
plies when that is not 0), in how many plies, and a winning move."""


def book_key(pos: Position) -> str:
    """The board and the required colour: what a book line is keyed by."""
    board = position_to_text(pos).split()[0]
    required = "-" if pos.required == FREE else COLOUR_LETTERS[pos.required].lower()
    return f"{board} {required}"


def in_book_scope(pos: Position) -> bool:
    """Whether ``pos`` can be a book position: in play, Black to move, no Sumo
    tower (the first round of any match from the start looks the same)."""
    return pos.phase == PLAY and pos.side == BLACK and not any(pos.rank)


def parse_book(text: str, where: str = "book") -> dict[str, str]:
    """``{key: move}`` from a book's text; '#' starts a comment line.

    Raises ``GameError`` naming the line of a malformed entry.
    """
    book: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 3:
            raise GameError(f"{where}:{number}: expected 'BOARD REQUIRED MOVE', got {line!r}")
        try:
            text_to_move(fields[2])
        except GameError as exc:
            raise GameError(f"{where}:{number}: {exc}") from None
        book[f"{fields[0]} {fields[1]}"] = fields[2]
    return book


def format_book(book: dict[str, str], header: list[str]) -> str:
    """The book's text: ``header`` as comment lines, then one line per entry
    (sorted, so that the same proof is always the same file)."""
    lines = [f"# {h}".rstrip() for h in header]
    lines += [f"{key} {move}" for key, move in sorted(book.items())]
    return "\n".join(lines) + "\n"


def build_book(
    start: Position,
    prove: Prover,
    leaf_plies: int,
    on_entry: Callable[[int], None] | None = None,
) -> dict[str, str]:
    """A Black move for every Black position the strategy reaches from ``start``
    (Black to move, a proven win) against every Gold reply, down to positions
    Black wins within ``leaf_plies`` plies, which are left out.

    ``prove`` must be an exact solver (the round solver); every move written is
    one it proved winning. Transpositions share one entry.
    """
    book: dict[str, str] = {}
    done: set[str] = set()

    def grow(pos: Position) -> None:
        key = book_key(pos)
        if key in done:
            return
        done.add(key)
        won, distance, move = prove(pos, leaf_plies)
        if won and distance <= leaf_plies:
            return  # a leaf
        won, distance, move = prove(pos, 0)
        if not won:
            raise GameError(f"the book's strategy reached a position Black does not win: {key}")
        book[key] = move_to_text(move)
        if on_entry is not None:
            on_entry(len(book))
        pos.make(move)
        try:
            if pos.phase == PLAY:
                for black in _black_positions(pos):
                    grow(black)
        finally:
            pos.unmake()

    if not in_book_scope(start):
        raise GameError("a book starts from a position with Black to move and no Sumo tower")
    grow(start.copy())
    return book


def _black_positions(pos: Position) -> Iterator[Position]:
    """The positions with Black to move after each Gold reply (Gold to move in
    ``pos``), as copies; a reply that ends the round yields nothing (a Black
    win by deadlock; a Gold win would have been refuted by the proof)."""
    for reply in pos.legal_moves():
        pos.make(reply)
        try:
            if pos.phase == PLAY:
                if pos.side == BLACK:
                    yield pos.copy()
                else:  # a Sumo push cannot happen here; kept total
                    yield from _black_positions(pos)
        finally:
            pos.unmake()
