"""The action notation of the Sekigahara battle (see ``protocol.md`` (section 11)).

Every decision is one short line of words separated by single spaces:

=====================================  ==============================================
``leader <block>``                     free leader (no card)
``deploy <card> <block>``              card deployment of one block
``deploy <card> <block>,<block>``      double card, two blocks, scored in this order
``stop``                               deploy nothing more
``challenge <card>``                   loyalty challenge against the last deployment
``pass``                               no challenge
``refute <card>``                      show ``<card>`` to refute the challenge
``decline``                            do not refute: the deployed block(s) turn
=====================================  ==============================================

Parsing is strict about the shape and lenient about surrounding whitespace, so a
bot's ``"deploy  I12 b07\\n"`` is the same action as ``"deploy I12 b07"``. A
*position text* is read strictly (:func:`parse_position_text`): only the canonical
form that ``SekigaharaState.to_text`` prints, so each one has exactly one spelling
and an accepted text prints back byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.games.base import GameError, IllegalAction
from arena.games.sekigahara.cards import SIDES
from arena.games.sekigahara.scenario import Army, Scenario

VERBS = ("leader", "deploy", "stop", "challenge", "pass", "refute", "decline")


@dataclass(frozen=True, slots=True)
class ParsedAction:
    """A parsed action: the verb, the card id (if any) and the block ids (if any)."""

    verb: str
    card: str | None = None
    blocks: tuple[str, ...] = ()

    def text(self) -> str:
        words = [self.verb]
        if self.card is not None:
            words.append(self.card)
        if self.blocks:
            words.append(",".join(self.blocks))
        return " ".join(words)


def parse_action(text: str) -> ParsedAction:
    """Parse one action; raise ``IllegalAction`` for a shape no rule could accept."""
    words = text.split()
    if not words or words[0] not in VERBS:
        raise IllegalAction(f"unknown action {text!r} (verbs: {', '.join(VERBS)})")
    verb, args = words[0], words[1:]
    if verb in ("stop", "pass", "decline"):
        if args:
            raise IllegalAction(f"{verb!r} takes no argument")
        return ParsedAction(verb)
    if verb == "leader":
        if len(args) != 1 or "," in args[0]:
            raise IllegalAction("want 'leader <block>'")
        return ParsedAction(verb, None, (args[0],))
    if verb in ("challenge", "refute"):
        if len(args) != 1:
            raise IllegalAction(f"want '{verb} <card>'")
        return ParsedAction(verb, args[0])
    if len(args) != 2:
        raise IllegalAction("want 'deploy <card> <block>[,<block>]'")
    blocks = tuple(args[1].split(","))
    if not 1 <= len(blocks) <= 2 or "" in blocks:
        raise IllegalAction("want 'deploy <card> <block>[,<block>]'")
    return ParsedAction(verb, args[0], blocks)


def normalize(text: str) -> str:
    """The canonical spelling of an action text (single spaces, no ends)."""
    return parse_action(text).text()


POSITION_FORM = "sekigahara <variant> attacker=<side> ishida=<army> tokugawa=<army> moves=<actions>"


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def parse_position_text(text: str) -> tuple[Scenario, list[str]]:
    """The scenario and the action texts of a position text, canonical form only.

    Single spaces, the keys in their order, ``-`` for an empty list of blocks or
    cards, actions spelled as :func:`normalize` spells them and separated by
    ``;`` (none empty). The actions are not replayed here; every error names
    its field.
    """
    head, sep, moves = text.partition(" moves=")
    if not sep:
        raise GameError(f"moves: missing ' moves=' (a position text is '{POSITION_FORM}')")
    words = head.split(" ")
    if len(words) != 5:
        raise GameError(
            f"position text needs 5 fields before moves=, separated by single spaces "
            f"('{POSITION_FORM}'), got {len(words)}"
        )
    if words[0] != "sekigahara":
        raise GameError(f"game: a position text starts with 'sekigahara', got {_short(words[0])}")
    values = {"variant": words[1]}
    for key, word in zip(("attacker", *SIDES), words[2:], strict=True):
        name, eq, value = word.partition("=")
        if name != key or not eq:
            raise GameError(f"{key}: expected '{key}=...' here, got {_short(word)}")
        values[key] = value
    armies = {}
    for side in SIDES:
        try:
            armies[side] = Army.from_text(values[side])
        except GameError as exc:
            raise GameError(f"{side}: {exc}") from None
        if armies[side].to_text() != values[side]:
            raise GameError(
                f"{side}: not in canonical form: {_short(values[side])} "
                f"(written {_short(armies[side].to_text())})"
            )
    try:
        scenario = Scenario(
            values["variant"], values["attacker"], armies["ishida"], armies["tokugawa"]
        )
    except GameError as exc:
        raise GameError(f"scenario: {exc}") from None
    actions = moves.split(";") if moves else []
    for i, action in enumerate(actions, 1):
        try:
            canonical = normalize(action)
        except IllegalAction as exc:
            raise GameError(f"moves: move {i}: {exc}") from None
        if canonical != action:
            raise GameError(f"moves: move {i} {action!r} is not in canonical form ({canonical!r})")
    return scenario, actions
