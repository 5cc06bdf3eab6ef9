"""The shape of a Kamisado ``observation`` (the JSON object in every ``go``).

The rules core builds the observation as plain dicts (fast, no conversion on the
hot path); these types describe it exactly, so that ``docs/schema/`` can publish
it as JSON Schema (``msgspec.json.schema``) and a test can hold the two together.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

PlayerName = Literal["black", "gold"]
Colour = Literal["orange", "blue", "purple", "pink", "yellow", "red", "green", "brown"]
Square = Annotated[str, Meta(pattern="^[a-h][1-8]$", description="a1 ... h8, as in chess")]


class Tower(msgspec.Struct, frozen=True, kw_only=True):
    """One dragon tower. ``rank`` 0 plain, 1 Sumo, 2 Double, 3 Triple (4 only as a
    finished marathon's final score)."""

    square: Square
    owner: PlayerName
    colour: Colour
    rank: Annotated[int, Meta(ge=0, le=4)]


class Scores(msgspec.Struct, frozen=True, kw_only=True):
    """Match points: each the sum of the player's tower values (1, 3, 7, 15 by rank)."""

    black: Annotated[int, Meta(ge=0)]
    gold: Annotated[int, Meta(ge=0)]


class KamisadoObservation(msgspec.Struct, frozen=True, kw_only=True):
    """What a Kamisado bot sees in ``go.observation``: the whole position (nothing
    is hidden in Kamisado), in the same terms as the position text."""

    towers: Annotated[
        list[Tower],
        Meta(min_length=16, max_length=16, description="all 16 towers: Black's, then Gold's"),
    ]
    to_move: Annotated[PlayerName, Meta(description="who decides: moves, or the regroup choice")]
    required_colour: Annotated[
        Colour | None,
        Meta(description="colour of the tower that must move; null: any (a round's first move)"),
    ]
    phase: Annotated[
        Literal["play", "regroup", "over"],
        Meta(description="regroup: to_move (the round's winner) chooses 'left' or 'right'"),
    ]
    match: Literal["single", "standard", "long", "marathon"]
    target: Annotated[int, Meta(description="points that win the match: 1, 3, 7 or 15")]
    scores: Scores
    round: Annotated[int, Meta(ge=1, description="the round being played, from 1")]
    you: Annotated[PlayerName, Meta(description="the side you play")]


__all__ = ["KamisadoObservation", "Scores", "Tower"]
