"""Kamisado text notation: actions and the one-line position text.

Actions: ``c1-c5`` (a move), ``e3-e3`` (a zero-length move: the square twice),
``d4-d5`` (a Sumo push: the pusher's one-square step onto the first pushed
tower), ``left`` / ``right`` (the round winner's regroup choice).

Position text, seven fields separated by single spaces (only the canonical form
that ``position_to_text`` prints is accepted, so every accepted text prints back
byte for byte)::

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

The parser checks every field against the others, because a text that play can
never reach is not a harmless curiosity: a free choice in mid-round with every
tower blocked, for example, would be an endless chain of zero-length moves. Each
round ends with exactly one promotion, so the sum of the towers' ranks fixes the
round number; a free choice means a round is about to start, so every tower
stands on its own home row (the start arrangement in round 1, where Black
begins; in a later round the opponent of the starter won the last one); after a
real move the required colour is the colour of a square under one of the
opponent's towers.
"""

from __future__ import annotations

from arena.games.base import GameError
from arena.games.kamisado.board import (
    COLOUR_LETTERS,
    GOAL_RANK,
    HOME_RANK,
    MATCH_KINDS,
    MATCH_MAX_RANK,
    MATCH_TARGET,
    PLAYER_LETTERS,
    SQUARE_COLOUR,
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


_EMPTY_RUNS = "12345678"
_TOWER_LETTERS = COLOUR_LETTERS + COLOUR_LETTERS.lower()
_FIELDS = ("board", "side", "required colour", "match kind", "scores", "round", "pending")


def _parse_board(board: str) -> tuple[list[int], list[int]]:
    ranks = board.split("/")
    if len(ranks) != 8:
        raise GameError(f"board: must have 8 ranks separated by '/', got {len(ranks)}")
    at = [-1] * 64
    rank = [0] * 16
    seen: set[int] = set()
    for i, row in enumerate(ranks):
        r = 7 - i
        f = 0
        j = 0
        digit_before = False
        while j < len(row):
            c = row[j]
            j += 1
            if c in _EMPTY_RUNS:
                if digit_before:
                    raise GameError(
                        f"board: rank {r + 1}: a run of empty squares is one digit, not {row!r}"
                    )
                digit_before = True
                f += int(c)
                continue
            digit_before = False
            colour = _TOWER_LETTERS.find(c)
            if colour < 0:
                raise GameError(
                    f"board: rank {r + 1}: {c!r} is neither a tower letter "
                    f"({COLOUR_LETTERS} or {COLOUR_LETTERS.lower()}) nor a digit 1-8"
                )
            tower = colour  # upper-case letters first: Black's towers 0-7, Gold's 8-15
            if tower in seen:
                raise GameError(f"board: tower {c!r} appears twice")
            seen.add(tower)
            k = 0
            while j < len(row) and row[j] == "+":
                k += 1
                j += 1
            if k > 4:
                raise GameError(f"board: rank {r + 1}: tower {c!r} has rank {k}, at most 4")
            if f >= 8:
                raise GameError(f"board: rank {r + 1} has more than 8 squares")
            at[f + 8 * r] = tower
            rank[tower] = k
            f += 1
        if f != 8:
            raise GameError(f"board: rank {r + 1} has {f} squares, expected 8")
    if len(seen) != 16:
        missing = [tower_token(t, 0) for t in range(16) if t not in seen]
        raise GameError(f"board: every tower must be on the board; missing: {' '.join(missing)}")
    return at, rank


def _split_fields(text: str) -> list[str]:
    fields = text.split(" ")
    if len(fields) != 7:
        raise GameError(
            "position text needs 7 fields separated by single spaces "
            f"({', '.join(_FIELDS)}), got {len(fields)}"
        )
    for name, value in zip(_FIELDS, fields, strict=True):
        if not value:
            raise GameError(f"{name}: empty (fields are separated by single spaces)")
    return fields


def text_to_position(text: str) -> Position:
    """Parse and validate a position text; every error names the field at fault."""
    board, side_s, req_s, kind_s, scores_s, round_s, pending_s = _split_fields(text)
    at, rank = _parse_board(board)
    if side_s not in ("b", "g"):
        raise GameError(f"side to move must be 'b' or 'g', got {side_s!r}")
    side = PLAYER_LETTERS.index(side_s)
    if req_s == "-":
        required = FREE
    elif len(req_s) == 1 and req_s in COLOUR_LETTERS.lower():
        required = COLOUR_LETTERS.lower().index(req_s)
    else:
        raise GameError(
            f"required colour must be one lower-case letter of '{COLOUR_LETTERS.lower()}' "
            f"or '-', got {req_s!r}"
        )
    if kind_s not in MATCH_KINDS:
        raise GameError(f"match kind must be one of {', '.join(MATCH_KINDS)}, got {kind_s!r}")
    kind = MATCH_KINDS.index(kind_s)
    if pending_s == "-":
        phase = PLAY
    elif pending_s == "#":
        phase = OVER
    elif pending_s in ("b", "g"):
        phase = REGROUP
    else:
        raise GameError(f"pending field must be '-', 'b', 'g' or '#', got {pending_s!r}")
    pos = Position(at, rank, side, required, kind, 1, phase)
    _check_scores(pos, scores_s)
    pos.round = _check_round(pos, round_s)
    if phase == PLAY:
        _check_round_in_play(pos)
    else:
        _check_round_over(pos, side_s, req_s, pending_s)
    return pos


def _check_scores(pos: Position, scores_s: str) -> None:
    expected = f"{pos.score(0)}-{pos.score(1)}"
    if scores_s != expected:
        raise GameError(f"scores {scores_s!r} do not match the towers' ranks ({expected})")
    won = [pos.score(p) >= MATCH_TARGET[pos.kind] for p in (0, 1)]
    if all(won):
        raise GameError("scores: both players cannot have reached the match target")
    if any(won) != (pos.phase == OVER):
        raise GameError("pending field must be '#' exactly when a score has reached the target")
    limit = MATCH_MAX_RANK[pos.kind] + (pos.phase == OVER)
    if max(pos.rank) > limit:
        raise GameError(
            f"board: a {MATCH_KINDS[pos.kind]} match has no tower above rank {limit} here"
        )


def _check_round(pos: Position, round_s: str) -> int:
    """Every round ends with exactly one promotion: the ranks fix the round number."""
    promotions = sum(pos.rank)
    if pos.phase == REGROUP and pos.kind == 0:
        raise GameError("pending: a single-round match has no regroup (its first round ends it)")
    if pos.phase != PLAY and promotions == 0:
        raise GameError("pending: a round can only have ended with a promoted tower")
    if pos.kind == 0 and promotions > 1:
        raise GameError(
            f"round: a single-round match ends with its first promotion, got {promotions} "
            "promoted ranks"
        )
    expected = promotions + (pos.phase == PLAY)
    if round_s != str(expected):
        raise GameError(
            f"round must be a whole number from 1 matching the promotions: {promotions} "
            f"promoted rank(s) {'so far' if pos.phase == PLAY else 'after it'} make this "
            f"round {expected}, got {round_s!r}"
        )
    return expected


def _check_round_in_play(pos: Position) -> None:
    for t in range(16):
        if pos.square_of[t] >> 3 == GOAL_RANK[t >> 3]:
            raise GameError(
                f"board: tower {tower_token(t, 0)} stands on the opponent's home row "
                "while the round is still being played"
            )
    at_home = all(pos.square_of[t] >> 3 == HOME_RANK[t >> 3] for t in range(16))
    side = pos.side
    if pos.required == FREE:
        if not at_home:
            raise GameError(
                "required colour: a free choice ('-') only starts a round, with every "
                "tower on its own home row; later moves must name the colour"
            )
        if pos.round == 1:
            start = Position.start(pos.kind)
            if pos.at != start.at:
                raise GameError("board: round 1 starts with every tower on its own colour")
            if side != 0:
                raise GameError("side to move: Black moves first in the first round")
        elif pos.score(side ^ 1) == 0:
            raise GameError(
                "side to move: the loser of the last round starts the next, and the "
                "other player has promoted no tower"
            )
        return
    if at_home:
        raise GameError(
            "required colour: no tower has moved this round, so the choice is free ('-')"
        )
    colours = {SQUARE_COLOUR[pos.square_of[t]] for t in range((side ^ 1) * 8, (side ^ 1) * 8 + 8)}
    if pos.required not in colours:
        raise GameError(
            f"required colour {COLOUR_LETTERS[pos.required].lower()!r}: no tower of the "
            "opponent stands on a square of that colour, so no move can have ended there"
        )
    if pos.chain_deadlocked(side, pos.required):
        raise GameError(
            "required colour: the forced zero-length moves from here repeat for ever "
            "(deadlock; the round would have ended with the move that caused it)"
        )


def _check_round_over(pos: Position, side_s: str, req_s: str, pending_s: str) -> None:
    if req_s != "-":
        raise GameError("required colour: no colour can be required outside a round ('-')")
    if pos.phase == REGROUP:
        if pending_s != side_s:
            raise GameError("pending: a pending regroup choice belongs to the side to move")
        if pos.score(pos.side) == 0:
            raise GameError("pending: the regroup choice is the round winner's, who has no points")
    elif pos.winner() != pos.side ^ 1:
        raise GameError("side to move: a finished match shows the loser to move")
