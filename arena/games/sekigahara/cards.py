"""Blocks, cards and the two published decks of the Sekigahara battle.

These are plain frozen values: the state never mutates a block or a card, it
only moves ids between hands, reserves and the field. Each value has a compact
text *token* (``b08:mori:1g``, ``I19:mori:s``) used in position texts, scenario
strings and observations, so a bot can read what a revealed id stands for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from arena.games.base import GameError

SIDES = ("ishida", "tokugawa")
"""The two sides of the battle. A scenario says which of them attacks."""

ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,15}$")
MON_RE = re.compile(r"^[a-z][a-z0-9-]{0,23}$")


class Mark(Enum):
    """The one mark a block may carry. Gun and cavalry feed the special attack."""

    NONE = "none"
    GUN = "gun"
    CAVALRY = "cavalry"
    LEADER = "leader"


_MARK_LETTER = {Mark.NONE: "", Mark.GUN: "g", Mark.CAVALRY: "c", Mark.LEADER: "l"}
_LETTER_MARK = {v: k for k, v in _MARK_LETTER.items() if v}


class CardKind(Enum):
    """What a card does: plain, sword (special attack), double, or loyalty challenge."""

    PLAIN = "plain"
    SWORD = "sword"
    DOUBLE = "double"
    LOYALTY = "loyalty"


_KIND_LETTER = {CardKind.PLAIN: "p", CardKind.SWORD: "s", CardKind.DOUBLE: "d"}
_LETTER_KIND = {v: k for k, v in _KIND_LETTER.items()}


def check_id(token: str, what: str) -> str:
    """Ids are short opaque tokens so that notation stays one whitespace-free word."""
    if not ID_RE.fullmatch(token):  # not match: its $ would let a final newline through
        raise GameError(f"bad {what} id {token!r} (letter, then up to 15 of A-Z a-z 0-9 _ -)")
    return token


def check_mon(token: str) -> str:
    if not MON_RE.fullmatch(token):
        raise GameError(f"bad mon {token!r} (lower-case word such as 'mori')")
    return token


@dataclass(frozen=True, slots=True)
class Block:
    """One block: its mon, strength (mon icons), mark, and whether any card deploys it.

    ``any_card`` marks the two special blocks (Ishida Mitsunari, Ii Naomasa): they
    are deployed with a card of any mon and refuted by showing any card.
    """

    id: str
    mon: str
    strength: int
    mark: Mark = Mark.NONE
    any_card: bool = False

    def __post_init__(self) -> None:
        check_id(self.id, "block")
        check_mon(self.mon)
        if not 1 <= self.strength <= 4:
            raise GameError(f"block {self.id}: strength {self.strength} not in 1-4")
        if self.mark in (Mark.GUN, Mark.CAVALRY) and self.strength != 1:
            raise GameError(f"block {self.id}: a {self.mark.value} block has exactly 1 mon icon")

    @property
    def special_kind(self) -> bool:
        """Gun and cavalry blocks may make a special attack."""
        return self.mark in (Mark.GUN, Mark.CAVALRY)

    def matches(self, mon: str) -> bool:
        """May a card of ``mon`` deploy this block (or, shown, refute its turning)?"""
        return self.any_card or self.mon == mon

    def token(self) -> str:
        """``id:mon:<strength><mark letter>[*]``, e.g. ``b08:mori:1g`` or ``b42:ii:4*``."""
        star = "*" if self.any_card else ""
        return f"{self.id}:{self.mon}:{self.strength}{_MARK_LETTER[self.mark]}{star}"

    def describe(self) -> str:
        """``mon:<strength><mark letter>[*]`` without the id (what a revealed block is)."""
        return self.token().split(":", 1)[1]

    @classmethod
    def from_token(cls, token: str) -> Block:
        m = re.fullmatch(r"([^:]+):([^:]+):([1-4])([gcl]?)(\*?)", token)
        if not m:
            raise GameError(f"bad block token {token!r} (want id:mon:<1-4>[g|c|l][*])")
        mark = _LETTER_MARK.get(m.group(4), Mark.NONE)
        return cls(m.group(1), m.group(2), int(m.group(3)), mark, m.group(5) == "*")


@dataclass(frozen=True, slots=True)
class Card:
    """One card: a mon and a kind, or a loyalty challenge (``mon`` is ``None``)."""

    id: str
    kind: CardKind
    mon: str | None = None

    def __post_init__(self) -> None:
        check_id(self.id, "card")
        if self.kind is CardKind.LOYALTY:
            if self.mon is not None:
                raise GameError(f"card {self.id}: a loyalty challenge card has no mon")
        elif self.mon is None:
            raise GameError(f"card {self.id}: a {self.kind.value} card needs a mon")
        else:
            check_mon(self.mon)

    @property
    def loyalty(self) -> bool:
        return self.kind is CardKind.LOYALTY

    def token(self) -> str:
        """``id:mon:<p|s|d>`` or ``id:loyalty``, e.g. ``T18:date:s``."""
        return f"{self.id}:{self.describe()}"

    def describe(self) -> str:
        if self.kind is CardKind.LOYALTY:
            return "loyalty"
        return f"{self.mon}:{_KIND_LETTER[self.kind]}"

    @classmethod
    def from_token(cls, token: str) -> Card:
        m = re.fullmatch(r"([^:]+):loyalty", token)
        if m:
            return cls(m.group(1), CardKind.LOYALTY)
        m = re.fullmatch(r"([^:]+):([^:]+):([psd])", token)
        if not m:
            raise GameError(f"bad card token {token!r} (want id:mon:<p|s|d> or id:loyalty)")
        return cls(m.group(1), _LETTER_KIND[m.group(3)], m.group(2))


# --- the published decks -----------------------------------------------------

DECK_COUNTS: dict[str, tuple[int, tuple[tuple[str, int, int, int], ...]]] = {
    # side: (loyalty cards, ((mon, double, sword, plain), ...)) -- from the rules file.
    "tokugawa": (
        4,
        (("fukushima", 1, 4, 7), ("date", 1, 4, 6), ("maeda", 1, 4, 7), ("tokugawa", 1, 5, 10)),
    ),
    "ishida": (
        3,
        (("kobayakawa", 1, 5, 8), ("mori", 1, 5, 10), ("uesugi", 1, 3, 4), ("ukita", 1, 5, 8)),
    ),
}
DECK_PREFIX = {"ishida": "I", "tokugawa": "T"}


def deck(side: str) -> tuple[Card, ...]:
    """The 55-card deck of ``side``, ids ``I01``-``I55`` / ``T01``-``T55`` in listing order:
    loyalty cards, then per clan (in ``DECK_COUNTS`` order) double, swords, plain. The
    rules page (docs/rules/sekigahara-battle.md) states this order as a table, checked
    by tests/test_rules_docs.py, so a change here must change it there too.

    The ids are fixed so that a record can be audited against the published deck;
    they reveal nothing while a card stays in hand, because hidden cards' ids are
    never shown to the opponent.
    """
    loyalty, clans = DECK_COUNTS[side]
    kinds: list[tuple[CardKind, str | None]] = [(CardKind.LOYALTY, None)] * loyalty
    for mon, double, sword, plain in clans:
        kinds += [(CardKind.DOUBLE, mon)] * double
        kinds += [(CardKind.SWORD, mon)] * sword
        kinds += [(CardKind.PLAIN, mon)] * plain
    prefix = DECK_PREFIX[side]
    return tuple(Card(f"{prefix}{i:02d}", kind, mon) for i, (kind, mon) in enumerate(kinds, 1))


SPECIAL_BLOCKS = {"ishida": ("ishida", 1, Mark.LEADER), "tokugawa": ("ii", 4, Mark.NONE)}
"""Ishida Mitsunari (1 Ishida mon, leader) and Ii Naomasa (4 Ii mon), any-card blocks."""


def default_army(side: str) -> tuple[Block, ...]:
    """The default army of ``side``: per clan a 2-mon, 3-mon, gun, cavalry and leader block,
    then the side's special block (21 blocks).

    Ruling: the per-clan block counts are not published in the seeds; one block of
    each kind per clan is the smallest army that has every kind of every clan.
    Ids: Ishida ``b01``-``b21``, Tokugawa ``b22``-``b42`` (clans in deck order).
    """
    start = 1 if side == "ishida" else 22
    shapes = ((2, Mark.NONE), (3, Mark.NONE), (1, Mark.GUN), (1, Mark.CAVALRY), (1, Mark.LEADER))
    blocks: list[Block] = []
    for mon, *_ in DECK_COUNTS[side][1]:
        for strength, mark in shapes:
            blocks.append(Block(f"b{start + len(blocks):02d}", mon, strength, mark))
    mon, strength, mark = SPECIAL_BLOCKS[side]
    blocks.append(Block(f"b{start + len(blocks):02d}", mon, strength, mark, any_card=True))
    return tuple(blocks)
