"""Scenarios: both armies, both hands, who attacks, and the variant.

A scenario is the whole hidden deal of one battle, so it is what a tournament
fixes per pairing. It has three forms that round-trip: the ``Scenario`` value,
a TOML file (parsed with :mod:`tomllib`), and the one-line text that opens a
position text. :func:`deal` makes a seeded one from the published decks.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from arena.games.base import GameError
from arena.games.sekigahara.cards import (
    SIDES,
    Block,
    Card,
    CardKind,
    Mark,
    check_id,
    deck,
    default_army,
)

VARIANTS = ("battle", "siege")
ROLES = ("attacker", "defender")
HAND_SIZE = 6
"""Ruling: a seeded deal gives each side 6 cards (the seeds do not fix a hand size)."""
SIEGE_BLOCKS = 2
"""Siege variant: the defender has at most two blocks."""


@dataclass(frozen=True, slots=True)
class Army:
    """One side's blocks (in listing order) and hand of cards."""

    blocks: tuple[Block, ...]
    hand: tuple[Card, ...]

    def to_text(self) -> str:
        blocks = ",".join(b.token() for b in self.blocks) or "-"
        hand = ",".join(c.token() for c in self.hand) or "-"
        return f"{blocks}/{hand}"

    @classmethod
    def from_text(cls, text: str) -> Army:
        blocks, sep, hand = text.partition("/")
        if not sep:
            raise GameError(f"bad army {text!r} (want <blocks>/<hand>)")
        return cls(
            tuple(Block.from_token(t) for t in _items(blocks)),
            tuple(Card.from_token(t) for t in _items(hand)),
        )


def _items(text: str) -> list[str]:
    return [] if text in ("", "-") else text.split(",")


@dataclass(frozen=True, slots=True)
class Scenario:
    """One battle's deal. Player 0 is always the attacker (the side that acts first)."""

    variant: str
    attacker: str
    ishida: Army
    tokugawa: Army

    def __post_init__(self) -> None:
        self.validate()

    @property
    def defender(self) -> str:
        return SIDES[1 - SIDES.index(self.attacker)]

    def side(self, role: int) -> str:
        """The side (``ishida``/``tokugawa``) playing ``role`` (0 attacker, 1 defender)."""
        return self.attacker if role == 0 else self.defender

    def army(self, role: int) -> Army:
        return self.ishida if self.side(role) == "ishida" else self.tokugawa

    def validate(self) -> None:
        """Reject what the rules cannot play, naming the problem.

        Ruling: each side has at least one block (a battle needs two armies); a
        siege defender has at most two. In a siege, loyalty cards in hand are dead
        and sword cards deploy like plain cards.
        """
        if self.variant not in VARIANTS:
            raise GameError(f"unknown variant {self.variant!r} (known: {', '.join(VARIANTS)})")
        if self.attacker not in SIDES:
            raise GameError(f"attacker must be one of {', '.join(SIDES)}, not {self.attacker!r}")
        seen: set[str] = set()
        for side in SIDES:
            army = self.ishida if side == "ishida" else self.tokugawa
            if not army.blocks:
                raise GameError(f"{side} has no blocks")
            items: tuple[Block | Card, ...] = (*army.blocks, *army.hand)
            for item in items:
                if item.id in seen:
                    raise GameError(f"id {item.id} used twice (ids are unique per scenario)")
                seen.add(item.id)
        if self.variant == "siege" and len(self.army(1).blocks) > SIEGE_BLOCKS:
            raise GameError(
                f"siege: the defender ({self.defender}) has {len(self.army(1).blocks)} blocks,"
                f" at most {SIEGE_BLOCKS} allowed"
            )

    # --- text form -------------------------------------------------------

    def to_text(self) -> str:
        """``<variant> attacker=<side> ishida=<army> tokugawa=<army>`` (no spaces inside)."""
        return (
            f"{self.variant} attacker={self.attacker}"
            f" ishida={self.ishida.to_text()} tokugawa={self.tokugawa.to_text()}"
        )

    @classmethod
    def from_text(cls, text: str) -> Scenario:
        words = text.split()
        if len(words) != 4:
            raise GameError(f"bad scenario text {text!r} (want 4 words)")
        fields: dict[str, str] = {}
        for word in words[1:]:
            key, sep, value = word.partition("=")
            if not sep or key not in ("attacker", *SIDES) or key in fields:
                raise GameError(f"bad scenario field {word!r}")
            fields[key] = value
        if len(fields) != 3:
            raise GameError("scenario needs attacker=, ishida= and tokugawa=")
        return cls(
            words[0],
            fields["attacker"],
            Army.from_text(fields["ishida"]),
            Army.from_text(fields["tokugawa"]),
        )

    # --- TOML form -------------------------------------------------------

    def to_toml(self) -> str:
        """A TOML document that :func:`load_toml` reads back to an equal scenario."""
        lines = [f'variant = "{self.variant}"', f'attacker = "{self.attacker}"']
        for side in SIDES:
            army = self.ishida if side == "ishida" else self.tokugawa
            lines += ["", f"[{side}]", "blocks = ["]
            lines += [f'  "{b.token()}",' for b in army.blocks]
            lines += ["]", "hand = ["]
            lines += [f'  "{c.token()}",' for c in army.hand]
            lines += ["]"]
        return "\n".join(lines) + "\n"


def load_toml(text: str) -> Scenario:
    """Parse a scenario file.

    Blocks and cards are either tokens (``"b03:mori:1g"``, ``"I12:mori:s"``,
    ``"I01:loyalty"``) or tables (``{id = "b03", mon = "mori", strength = 1,
    mark = "gun"}``, ``{id = "I12", mon = "mori", kind = "sword"}``).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GameError(f"scenario TOML: {exc}") from None
    unknown = set(data) - {"variant", "attacker", *SIDES}
    if unknown:
        raise GameError(f"scenario: unknown keys {sorted(unknown)}")
    armies = {}
    for side in SIDES:
        table = data.get(side)
        if not isinstance(table, dict):
            raise GameError(f"scenario: missing table [{side}]")
        armies[side] = Army(
            tuple(_block(item) for item in table.get("blocks", [])),
            tuple(_card(item) for item in table.get("hand", [])),
        )
    return Scenario(
        str(data.get("variant", "battle")),
        str(data.get("attacker", "")),
        armies["ishida"],
        armies["tokugawa"],
    )


T = TypeVar("T")


def _piece(
    item: Any, what: str, token: Callable[[str], T], table: Callable[[dict[str, Any]], T]
) -> T:
    """A block or card of a scenario file: its token (``id:mon:3g``) or its table;
    either way a bad one is a ``GameError`` that shows it."""
    if isinstance(item, str):
        return token(item)
    if not isinstance(item, dict):
        raise GameError(f"scenario: bad {what} {item!r}")
    try:
        return table(item)
    except (KeyError, ValueError) as exc:
        raise GameError(f"scenario: bad {what} {item!r}: {exc}") from None


def _block(item: Any) -> Block:
    return _piece(
        item,
        "block",
        Block.from_token,
        lambda t: Block(
            check_id(str(t["id"]), "block"),
            str(t["mon"]),
            int(t["strength"]),
            Mark(t.get("mark", "none")),
            bool(t.get("any_card", False)),
        ),
    )


def _card(item: Any) -> Card:
    return _piece(
        item,
        "card",
        Card.from_token,
        lambda t: Card(check_id(str(t["id"]), "card"), CardKind(t["kind"]), t.get("mon")),
    )


# --- making scenarios ----------------------------------------------------------


def deal(rng: Any, variant: str = "battle", hand_size: int = HAND_SIZE) -> Scenario:
    """A seeded deal: random attacker, ``hand_size`` cards from each side's shuffled deck,
    default armies (in a siege the defender keeps two random blocks of its army).

    Only ``rng.choice`` and ``rng.sample`` are used, so a ``random.Random(seed)``
    gives the same deal on every run.
    """
    if variant not in VARIANTS:
        raise GameError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    attacker = rng.choice(SIDES)
    armies = {}
    for side in SIDES:
        cards = deck(side)
        hand = sorted(rng.sample(range(len(cards)), hand_size))
        blocks = default_army(side)
        if variant == "siege" and side != attacker:
            blocks = tuple(blocks[i] for i in sorted(rng.sample(range(len(blocks)), 2)))
        armies[side] = Army(blocks, tuple(cards[i] for i in hand))
    return Scenario(variant, attacker, armies["ishida"], armies["tokugawa"])


def swap_roles(scenario: Scenario) -> Scenario:
    """The same armies and hands with the other side attacking.

    Player 0 stays the attacker, so this hands the first move to the other army.
    A siege cannot be swapped when the new defender has more than two blocks.
    """
    return Scenario(scenario.variant, scenario.defender, scenario.ishida, scenario.tokugawa)


_DEFAULT_HANDS = {
    "ishida": ("I02", "I09", "I20", "I27", "I45", "I49"),
    "tokugawa": ("T03", "T09", "T18", "T26", "T38", "T44"),
}
_DEFAULT_SIEGE_DEFENDERS = ("b38", "b42")


def default_scenario(variant: str = "battle") -> Scenario:
    """The fixed scenario of ``GAME.new_state``: Ishida attacks with the default armies.

    The hands are spelled out (not drawn from a seed) so the default never changes
    with the random module. In a siege Tokugawa holds the castle with its
    Tokugawa 3-mon block and Ii Naomasa.
    """
    if variant not in VARIANTS:
        raise GameError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    armies = {}
    for side in SIDES:
        cards = {c.id: c for c in deck(side)}
        blocks = default_army(side)
        if variant == "siege" and side == "tokugawa":
            blocks = tuple(b for b in blocks if b.id in _DEFAULT_SIEGE_DEFENDERS)
        armies[side] = Army(blocks, tuple(cards[i] for i in _DEFAULT_HANDS[side]))
    return Scenario(variant, "ishida", armies["ishida"], armies["tokugawa"])
