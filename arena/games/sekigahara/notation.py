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
bot's ``"deploy  I12 b07\\n"`` is the same action as ``"deploy I12 b07"``.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.games.base import IllegalAction

VERBS = ("leader", "deploy", "stop", "challenge", "pass", "refute", "decline")


@dataclass(frozen=True, slots=True)
class Action:
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


def parse_action(text: str) -> Action:
    """Parse one action; raise ``IllegalAction`` for a shape no rule could accept."""
    words = text.split()
    if not words or words[0] not in VERBS:
        raise IllegalAction(f"unknown action {text!r} (verbs: {', '.join(VERBS)})")
    verb, args = words[0], words[1:]
    if verb in ("stop", "pass", "decline"):
        if args:
            raise IllegalAction(f"{verb!r} takes no argument")
        return Action(verb)
    if verb == "leader":
        if len(args) != 1 or "," in args[0]:
            raise IllegalAction("want 'leader <block>'")
        return Action(verb, None, (args[0],))
    if verb in ("challenge", "refute"):
        if len(args) != 1:
            raise IllegalAction(f"want '{verb} <card>'")
        return Action(verb, args[0])
    if len(args) != 2:
        raise IllegalAction("want 'deploy <card> <block>[,<block>]'")
    blocks = tuple(args[1].split(","))
    if not 1 <= len(blocks) <= 2 or "" in blocks:
        raise IllegalAction("want 'deploy <card> <block>[,<block>]'")
    return Action(verb, args[0], blocks)


def normalize(text: str) -> str:
    """The canonical spelling of an action text (single spaces, no ends)."""
    return parse_action(text).text()
