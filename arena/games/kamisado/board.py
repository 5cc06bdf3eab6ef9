"""Board geometry and colours, precomputed once so move generation is table look-ups.

Squares are integers 0–63: ``file + 8 * rank_index`` with a1 = 0, h1 = 7, a8 = 56
(rank 1 is Black's home row). Player 0 is Black and moves towards rank 8;
player 1 is Gold and moves towards rank 1. Tower ids are ``player * 8 + colour``.
"""

from __future__ import annotations

BLACK, GOLD = 0, 1
PLAYER_NAMES = ("black", "gold")
PLAYER_LETTERS = "bg"

# Colour indices follow Gold's home row, a8 to h8.
COLOURS = ("orange", "blue", "purple", "pink", "yellow", "red", "green", "brown")
# One letter each, distinct even for colour-blind readers: V for purple (violet),
# P for pink, N for brown (B is blue).
COLOUR_LETTERS = "OBVPYRGN"
ORANGE, BLUE, PURPLE, PINK, YELLOW, RED, GREEN, BROWN = range(8)

_ROWS_TOP_DOWN = (
    "orange blue   purple pink   yellow red    green  brown",
    "red    orange pink   green  blue   yellow brown  purple",
    "green  pink   orange red    purple brown  yellow blue",
    "pink   purple blue   orange brown  green  red    yellow",
    "yellow red    green  brown  orange blue   purple pink",
    "blue   yellow brown  purple red    orange pink   green",
    "purple brown  yellow blue   green  pink   orange red",
    "brown  green  red    yellow pink   purple blue   orange",
)

SQUARE_COLOUR: tuple[int, ...] = tuple(
    COLOURS.index(name) for row in reversed(_ROWS_TOP_DOWN) for name in row.split()
)

SQUARE_NAMES: tuple[str, ...] = tuple(f"{'abcdefgh'[s & 7]}{(s >> 3) + 1}" for s in range(64))
SQUARE_INDEX: dict[str, int] = {name: s for s, name in enumerate(SQUARE_NAMES)}

# Home rows: the rank a player starts on; reaching the opponent's wins the round.
HOME_RANK = (0, 7)
GOAL_RANK = (7, 0)

# Distance limit by tower rank: plain unlimited, Sumo 5, Double 3, Triple 1.
# Rank 4 exists only as a final marathon score and never moves.
DISTANCE_LIMIT = (7, 5, 3, 1, 0)
# What a tower of each rank is worth in points (promotions score 1, 2, 4, 8).
RANK_VALUE = (0, 1, 3, 7, 15)

MATCH_KINDS = ("single", "standard", "long", "marathon")
MATCH_TARGET = (1, 3, 7, 15)
# The highest tower rank in play during a round of each match kind.
MATCH_MAX_RANK = (0, 1, 2, 3)

# Forward directions per player as (file step, rank step): diagonal left,
# straight, diagonal right, from that player's own point of view.
_STEPS = (((-1, 1), (0, 1), (1, 1)), ((1, -1), (0, -1), (-1, -1)))


def _ray(player: int, square: int, step: tuple[int, int]) -> tuple[int, ...]:
    f, r = square & 7, square >> 3
    df, dr = step
    out = []
    f, r = f + df, r + dr
    while 0 <= f < 8 and 0 <= r < 8:
        out.append(f + 8 * r)
        f, r = f + df, r + dr
    return tuple(out)


RAYS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    tuple(tuple(_ray(p, s, step) for step in _STEPS[p]) for s in range(64)) for p in (0, 1)
)
"""``RAYS[player][square]`` = (left, straight, right) rays, nearest square first."""

LIMITED_RAYS: tuple[tuple[tuple[tuple[tuple[int, ...], ...], ...], ...], ...] = tuple(
    tuple(
        tuple(tuple(ray[:limit] for ray in RAYS[p][s] if ray[:limit]) for s in range(64))
        for limit in DISTANCE_LIMIT
    )
    for p in (0, 1)
)
"""``LIMITED_RAYS[player][rank][square]``: non-empty rays cut to the rank's distance limit."""

FIRST_STEPS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(ray[0] for ray in RAYS[p][s] if ray) for s in range(64)) for p in (0, 1)
)
"""``FIRST_STEPS[player][square]``: the squares one step forward, for blocked tests."""

STRAIGHT: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(RAYS[p][s][1] for s in range(64)) for p in (0, 1)
)
