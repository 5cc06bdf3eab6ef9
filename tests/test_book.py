"""The shipped proof that Black wins the single round from the start, checked
without the solver that built it.

``bots/books/kamisado-single.txt`` gives a Black move for every position
Black's strategy reaches against any Gold reply; positions it leaves out must
be Black wins within the book's leaf depth. The walk below plays every Gold
reply with the pure-Python rules core and checks each leaf with a plain
exhaustive search (``plain_search.py``): no numba, no table. A book with one
move changed must fail it.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plain_search import wins_within

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.games import get_game
from arena.games.kamisado.book import book_key, parse_book
from arena.games.kamisado.notation import move_to_text, text_to_move, text_to_position
from arena.games.kamisado.position import PLAY, Position
from arena.match.clock import TimeControl
from arena.match.referee import play_game
from arena.plan.builtins import resolve_builtin

BOOK = Path(__file__).resolve().parents[1] / "bots" / "books" / "kamisado-single.txt"
BLACK = 0


class NotAProof(AssertionError):
    pass


def leaf_plies(text: str) -> int:
    found = re.search(r"--leaf-plies (\d+)", text)
    assert found, "the book's header names its leaf depth"
    return int(found.group(1))


def check_proof(book: dict[str, str], leaf: int) -> dict[str, int]:
    """Walk Black's strategy from the start against every Gold reply; raise
    ``NotAProof`` where it fails. Counts of entries and leaves checked."""
    done: set[str] = set()
    counts = {"entries": 0, "leaves": 0}

    def black(pos: Position) -> None:
        key = book_key(pos)
        if key in done:
            return
        done.add(key)
        if key not in book:
            counts["leaves"] += 1
            if not wins_within(pos, BLACK, leaf, [10**6], {"push": 0, "deadlock": 0}):
                raise NotAProof(f"{key}: not in the book and not won within {leaf} plies")
            return
        counts["entries"] += 1
        move = text_to_move(book[key])
        if move not in pos.legal_moves():
            raise NotAProof(f"{key}: {book[key]} is not legal")
        pos.make(move)
        try:
            if pos.phase != PLAY:
                if pos.last_winner != BLACK:
                    raise NotAProof(f"{key}: {book[key]} loses the round")
                return
            for reply in pos.legal_moves():
                pos.make(reply)
                try:
                    if pos.phase != PLAY:
                        if pos.last_winner != BLACK:
                            raise NotAProof(f"{key}: Gold wins with {move_to_text(reply)}")
                    else:
                        assert pos.side == BLACK  # no Sumo towers: no pushes
                        black(pos)
                finally:
                    pos.unmake()
        finally:
            pos.unmake()

    black(Position.start(kind=0))
    return counts


def test_the_shipped_book_proves_black_wins_the_single_round() -> None:
    text = BOOK.read_text()
    book = parse_book(text, str(BOOK))
    start = time.monotonic()
    counts = check_proof(book, leaf_plies(text))
    assert counts["entries"] == len(book)  # every entry is on the strategy's tree
    assert counts["leaves"] > counts["entries"]
    assert time.monotonic() - start < 60


def handing_gold_the_goal(book: dict[str, str], key: str) -> list[str]:
    """Other legal moves of the book position ``key`` after which Gold has a
    move onto its goal row (a strategy playing one cannot be a proof)."""
    board, required = key.split()
    pos = text_to_position(f"{board} b {required} single 0-0 1 -")
    out = []
    for m in pos.legal_moves():
        if move_to_text(m) == book[key]:
            continue
        pos.make(m)
        if pos.phase == PLAY and any(_gold_wins_with(pos, r) for r in pos.legal_moves()):
            out.append(move_to_text(m))
        pos.unmake()
    return out


def _gold_wins_with(pos: Position, move: int) -> bool:
    pos.make(move)
    won = pos.phase != PLAY and pos.last_winner != BLACK
    pos.unmake()
    return won


@pytest.mark.parametrize("where", ["the first move", "a later move"])
def test_a_book_with_one_move_changed_is_no_proof(where: str) -> None:
    text = BOOK.read_text()
    book = parse_book(text, str(BOOK))
    changed = dict(book)
    if where == "the first move":
        key = book_key(Position.start(kind=0))
        changed[key] = next(
            move_to_text(m)
            for m in Position.start(kind=0).legal_moves()
            if move_to_text(m) != book[key]
        )
    else:
        keys = sorted(book)
        random.Random(1).shuffle(keys)
        key = next(k for k in keys if handing_gold_the_goal(book, k))
        changed[key] = handing_gold_the_goal(book, key)[0]
    check_proof(book, leaf_plies(text))  # the book as shipped passes...
    with pytest.raises(NotAProof):  # ...and not with that one move changed
        check_proof(changed, leaf_plies(text))


def test_the_check_needs_no_compiled_code() -> None:
    """The book and the plain search load no numba: the proof is checked by
    code that shares nothing with the solver that built it."""
    code = (
        "import sys; sys.path.insert(0, 'tests');"
        "import arena.games.kamisado.book, plain_search, test_book;"
        "assert 'numba' not in sys.modules, 'numba loaded'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=BOOK.parents[2], timeout=60)


@pytest.mark.parametrize("variant", ["single", "standard"])
async def test_alphabeta_plays_the_book_as_black_from_the_start(variant: str) -> None:
    """A real game from the start against mcts: alphabeta follows the proof
    (its first move is the book's, marked as such) and wins the round."""
    game = get_game("kamisado")
    control = TimeControl.parse("5+0.05")
    async with (
        Engine(EngineConfig(name="alphabeta", command=resolve_builtin("alphabeta"))) as black,
        Engine(EngineConfig(name="mcts", command=resolve_builtin("mcts"))) as gold,
    ):
        record = await play_game(
            game, game.new_state(variant), [black, gold], [control, control], variant=variant
        )
    book = parse_book(BOOK.read_text())
    first = record.actions[0]
    assert first.action == book[book_key(Position.start(kind=0))]
    assert first.info is not None and "book" in first.info.get("text", "")
    state = game.new_state(variant)
    for action in record.actions:
        state.apply_action(action.action)
        if state.pos.phase != PLAY:
            break
    assert state.pos.last_winner == BLACK  # the first round is Black's
