"""The shape of a Sekigahara ``observation`` (the JSON object in every ``go``).

The state builds the observation as plain dicts; these types describe it exactly,
for the JSON Schema in ``docs/schema/`` and the test that holds the two together.
Only what the receiving player may know is in it: its own hand and reserve, the
opponent's counts, and public events.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

Role = Literal["attacker", "defender"]
Side = Literal["ishida", "tokugawa"]
Count = Annotated[int, Meta(ge=0)]


class PerRoleInt(msgspec.Struct, frozen=True, kw_only=True):
    attacker: Count
    defender: Count


class PerRoleBool(msgspec.Struct, frozen=True, kw_only=True):
    attacker: bool
    defender: bool


class PerRoleSide(msgspec.Struct, frozen=True, kw_only=True):
    """Which army each role commands."""

    attacker: Side
    defender: Side


class FieldBlock(msgspec.Struct, frozen=True, kw_only=True):
    """A deployed block on one side's field, in order of arrival."""

    block: Annotated[str, Meta(description="block token id:mon:<strength><g|c|l>[*]")]
    owner: Annotated[Role, Meta(description="original owner; differs when turned by a challenge")]
    added: Annotated[int, Meta(description="what it added to this side's impact")]


class PerRoleField(msgspec.Struct, frozen=True, kw_only=True):
    attacker: list[FieldBlock]
    defender: list[FieldBlock]


class Pending(msgspec.Struct, frozen=True, kw_only=True):
    """The card deployment open to a challenge (phase challenge) or to refutation
    (phase refute); ``null`` in the other phases."""

    by: Role
    card: Annotated[
        str, Meta(description="the card played; never null: a free leader opens no challenge")
    ]
    blocks: Annotated[list[str], Meta(description="the block ids it deployed, in order")]
    added: Annotated[int, Meta(description="what it added to the deployer's impact")]
    challenge: Annotated[str | None, Meta(description="the loyalty card played against it")]


class LogEntry(msgspec.Struct, frozen=True, kw_only=True):
    by: Role
    action: str


class BattleOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """The result once both sides stopped. ``removed`` holds only your own lost block
    ids (the opponent's undeployed blocks were never shown)."""

    winner: Role
    winner_side: Side
    impacts: PerRoleInt
    casualties: PerRoleInt
    removed: dict[Role, list[str]]


class SekigaharaObservation(msgspec.Struct, frozen=True, kw_only=True):
    """What a Sekigahara bot sees in ``go.observation``."""

    game: Literal["sekigahara"]
    variant: Literal["battle", "siege"]
    you: Role
    sides: PerRoleSide
    phase: Literal["act", "challenge", "refute", "over"]
    to_move: Role | None
    impact: PerRoleInt
    stopped: PerRoleBool
    card_played: Annotated[
        PerRoleBool,
        Meta(description="whether each side has played a card (free leaders only while false)"),
    ]
    hand: Annotated[list[str], Meta(description="your cards: id:mon:<p|s|d> or id:loyalty")]
    reserve: Annotated[list[str], Meta(description="your undeployed blocks, as tokens")]
    opponent_hand: Count
    opponent_reserve: Count
    field: PerRoleField
    pending: Annotated[
        Pending | None,
        Meta(description="the deployment open to a challenge or refutation; null in act and over"),
    ]
    revealed_cards: Annotated[
        dict[str, str],
        Meta(description="card id -> mon:<p|s|d> or loyalty, for every card shown so far"),
    ]
    revealed_blocks: Annotated[
        dict[str, str],
        Meta(description="block id -> mon:<strength><mark>[*], for every block deployed so far"),
    ]
    log: list[LogEntry]
    outcome: BattleOutcome | None


__all__ = ["BattleOutcome", "SekigaharaObservation"]
