"""Kamisado text notation: actions and the one-line position text.

Actions: ``c1-c5`` (a move), ``e3-e3`` (a zero-length move: the square twice),
``d4-d5`` (a Sumo push: the pusher's one-square step onto the first pushed
tower), ``left`` / ``right`` (the round winner's regroup choice).

Position text, seven fields separated by single spaces::

    obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -

1. the board from rank 8 down to rank 1, ranks separated by ``/``; a digit is a
   run of empty squares; a tower is its colour letter (``O B V P Y R G N`` for
   orange, blue, purple (violet), pink, yellow, red, green, brown), upper case for
   Black and lower case for Gold, followed by one ``+`` per Sumo rank;
2. the side to move (``b`` or ``g``), or the side whose regroup choice is pending;
3. the required colour as a lower-case letter, or ``-`` for a free choice;
4. the match kind: ``single``, ``standard``, ``long`` or ``marathon``;
5. the scores, Black's then Gold's (``0-0``); they must equal the towers' values;
6. the round number, from 1;
7. ``-`` while a round is being played, ``b`` or ``g`` when that player must
   choose the regroup (``left``/``right``), ``#`` when the match is over.
"""

from __future__ import annotations

from arena.games.base import GameError
from arena.games.kamisado.board import (
    COLOUR_LETTERS,
    GOAL_RANK,
    MATCH_KINDS,
    MATCH_MAX_RANK,
    MATCH_TARGET,
    PLAYER_LETTERS,
    SQUARE_INDEX,
    SQUARE_NAMES,
)
from arena.games.kamisado.position import (
    FREE,
    OVER,
    PLAY,
    REGROUP,
    REGROUP_LEFT,
    REGROUP_RIGHT,
    Position,
)

START_TEXT = "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - {kind} 0-0 1 -"


def move_to_text(move: int) -> str:
    if move == REGROUP_LEFT:
        return "left"
    if move == REGROUP_RIGHT:
        return "right"
    return f"{SQUARE_NAMES[move & 63]}-{SQUARE_NAMES[move >> 6]}"


def text_to_move(text: str) -> int:
    """Parse an action's syntax (not its legality); raise ``GameError`` if malformed."""
    if text == "left":
        return REGROUP_LEFT
    if text == "right":
        return REGROUP_RIGHT
    frm, sep, to = text.partition("-")
    if sep != "-" or frm not in SQUARE_INDEX or to not in SQUARE_INDEX:
        raise GameError(f"not a Kamisado action: {text!r} (expected e.g. 'c1-c5' or 'left')")
    return SQUARE_INDEX[frm] | SQUARE_INDEX[to] << 6


def tower_token(tower: int, rank: int) -> str:
    letter = COLOUR_LETTERS[tower & 7]
    return (letter if tower < 8 else letter.lower()) + "+" * rank


_TOKENS = tuple(tuple(tower_token(t, r) for r in range(5)) for t in range(16))


def position_to_text(pos: Position) -> str:
    # Called once per decision by the referee: kept to table look-ups.
    at = pos.at
    rank = pos.rank
    rows = []
    for base in range(56, -1, -8):
        row = ""
        empty = 0
        for t in at[base : base + 8]:
            if t < 0:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += _TOKENS[t][rank[t]]
        rows.append(row + str(empty) if empty else row)
    required = "-" if pos.required == FREE else COLOUR_LETTERS[pos.required].lower()
    pending = {PLAY: "-", OVER: "#"}.get(pos.phase) or PLAYER_LETTERS[pos.side]
    return (
        f"{'/'.join(rows)} {PLAYER_LETTERS[pos.side]} {required} {MATCH_KINDS[pos.kind]} "
        f"{pos.score(0)}-{pos.score(1)} {pos.round} {pending}"
    )


def _parse_board(board: str) -> tuple[list[int], list[int]]:
    ranks = board.split("/")
    if len(ranks) != 8:
        raise GameError(f"board must have 8 ranks separated by '/', got {len(ranks)}")
    at = [-1] * 64
    rank = [0] * 16
    seen: set[int] = set()
    for i, row in enumerate(ranks):
        r = 7 - i
        f = 0
        j = 0
        while j < len(row):
            c = row[j]
            j += 1
            if c.isdigit():
                f += int(c)
                continue
            colour = COLOUR_LETTERS.find(c.upper())
            if colour < 0:
                raise GameError(f"rank {r + 1}: unknown tower letter {c!r}")
            tower = colour + (0 if c.isupper() else 8)
            if tower in seen:
                raise GameError(f"tower {c!r} appears twice")
            seen.add(tower)
            k = 0
            while j < len(row) and row[j] == "+":
                k += 1
                j += 1
            if k > 4:
                raise GameError(f"rank {r + 1}: tower {c!r} has rank {k}, at most 4")
            if f >= 8:
                raise GameError(f"rank {r + 1} has more than 8 squares")
            at[f + 8 * r] = tower
            rank[tower] = k
            f += 1
        if f != 8:
            raise GameError(f"rank {r + 1} has {f} squares, expected 8")
    if len(seen) != 16:
        missing = [tower_token(t, 0) for t in range(16) if t not in seen]
        raise GameError(f"every tower must be on the board; missing: {' '.join(missing)}")
    return at, rank


def text_to_position(text: str) -> Position:
    """Parse and validate a position text; every error names the field at fault."""
    fields = text.split()
    if len(fields) != 7:
        raise GameError(
            f"position text needs 7 fields (board side required kind scores round pending), "
            f"got {len(fields)}"
        )
    board, side_s, req_s, kind_s, scores_s, round_s, pending_s = fields
    at, rank = _parse_board(board)
    if side_s not in ("b", "g"):
        raise GameError(f"side to move must be 'b' or 'g', got {side_s!r}")
    side = PLAYER_LETTERS.index(side_s)
    if req_s == "-":
        required = FREE
    elif len(req_s) == 1 and req_s.upper() in COLOUR_LETTERS:
        required = COLOUR_LETTERS.index(req_s.upper())
    else:
        raise GameError(f"required colour must be one of '{COLOUR_LETTERS.lower()}' or '-'")
    if kind_s not in MATCH_KINDS:
        raise GameError(f"match kind must be one of {', '.join(MATCH_KINDS)}, got {kind_s!r}")
    kind = MATCH_KINDS.index(kind_s)
    if not round_s.isdigit() or int(round_s) < 1:
        raise GameError(f"round must be a whole number from 1, got {round_s!r}")
    if pending_s == "-":
        phase = PLAY
    elif pending_s == "#":
        phase = OVER
    elif pending_s in ("b", "g"):
        phase = REGROUP
        if pending_s != side_s:
            raise GameError("a pending regroup choice belongs to the side to move")
    else:
        raise GameError(f"pending field must be '-', 'b', 'g' or '#', got {pending_s!r}")
    pos = Position(at, rank, side, required, kind, int(round_s), phase)
    _validate(pos, scores_s)
    if phase != PLAY:
        pos.required = FREE
        if req_s != "-":
            raise GameError("no colour can be required outside a round")
    return pos


def _validate(pos: Position, scores_s: str) -> None:
    expected = f"{pos.score(0)}-{pos.score(1)}"
    if scores_s != expected:
        raise GameError(f"scores {scores_s!r} do not match the towers' ranks ({expected})")
    target = MATCH_TARGET[pos.kind]
    max_rank = MATCH_MAX_RANK[pos.kind]
    won = [pos.score(p) >= target for p in (0, 1)]
    if all(won):
        raise GameError("both players cannot have reached the match target")
    if any(won) != (pos.phase == OVER):
        raise GameError("pending field must be '#' exactly when a score has reached the target")
    limit = max_rank + 1 if pos.phase == OVER else max_rank
    if max(pos.rank) > limit:
        raise GameError(f"a {MATCH_KINDS[pos.kind]} match has no tower above rank {limit} here")
    if pos.kind == 0 and pos.round != 1:
        raise GameError("a single-round match has only round 1")
    if pos.phase == PLAY:
        for t in range(16):
            if pos.square_of[t] >> 3 == GOAL_RANK[t >> 3]:
                raise GameError(
                    f"tower {tower_token(t, 0)} stands on the opponent's home row "
                    "while the round is still being played"
                )
        if pos.required != FREE and pos.chain_deadlocked(pos.side, pos.required):
            raise GameError("the forced zero-length moves from here repeat for ever (deadlock)")
