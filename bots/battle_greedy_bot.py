"""battle-greedy: a one-step greedy player of the Sekigahara battle (not Kamisado).

It looks at nothing but its own view (the ``observation`` the arena sends): its
hand and reserve, the field, the opponent's card and block *counts* and every
public event. From the public events it keeps track of which of the opponent's
cards are gone (played) and which are known to be in hand (shown to refute), and
treats the rest of the opponent's published deck as the pool their hidden hand
was drawn from. That gives two probabilities, enough for one-step decisions:

* how likely the opponent holds a loyalty card (the risk of a deployment that
  cannot be refuted), and
* how likely the opponent can refute a challenge (a card of the deployed mon).

Decisions:

* **act**: stop when the opponent has stopped and we are winning (ahead, or tied
  as the defender), since any further deployment only risks a challenge; play
  every free leader first (free impact, never turned, and lost for good once a
  card is played); otherwise make the deployment with the highest expected
  impact: what it adds minus the expected loss to a loyalty challenge, with a
  small preference for special attacks and for keeping a refuting card;
* **challenge**: when the deployment is big and refutation looks unlikely, with
  a lower bar once we have stopped (the card has no other use left);
* **refute**: always when possible (the shown card stays in hand), preferring a
  card the opponent has already seen.

python bots/battle_greedy_bot.py [--seed N]
"""

from __future__ import annotations

import argparse
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games.sekigahara.cards import DECK_COUNTS, Block, Card, CardKind, Mark
from arena.sdk import Request, run

ROLES = ("attacker", "defender")

CHALLENGE_LIKELIHOOD = 0.8
"""How likely an opponent holding a loyalty card uses it on an unrefutable deployment.
Below 1 because a challenge costs the opponent the card (and its free leaders)."""
FREE_LEADER_BONUS = 100.0
"""Free leaders are taken before any card: they cost nothing and expire with the first card."""
SPECIAL_BONUS = 0.25
"""Tie-break towards special attacks: a sword card used on a gun or cavalry block."""
KEEP_REFUTER_BONUS = 0.1
"""Tie-break towards deployments that keep a refuting card in hand."""
CHALLENGE_BAR = 4.0
"""Expected swing (impact) a challenge must bring while the loyalty card may still be
useful later (a bigger deployment may come)."""
CHALLENGE_BAR_LATE = 1.5
"""The bar once the card has little future: we stopped, or the opponent is nearly out."""
MAX_REFUTE_CHANCE = 0.6
"""Never challenge a deployment that is more likely than this to be refuted."""


def parse_block(block_id: str, description: str) -> Block:
    """A block from its id and ``mon:<strength><mark>[*]`` description."""
    return Block.from_token(f"{block_id}:{description}")


def parse_card(card_id: str, description: str) -> Card:
    """A card from its id and ``mon:<p|s|d>`` / ``loyalty`` description."""
    return Card.from_token(f"{card_id}:{description}")


def refutes(card: Card, blocks: Iterable[Block]) -> bool:
    """Whether showing ``card`` refutes a challenge against ``blocks`` (the rules core's
    ruling: every block must match the card, any card for an any-card block)."""
    return all(b.any_card or (card.mon is not None and card.mon == b.mon) for b in blocks)


def at_least_one(pool: int, good: int, draws: int) -> float:
    """P(a hand of ``draws`` cards from ``pool`` holds at least one of ``good`` cards)."""
    good = max(0, min(good, pool))
    draws = max(0, min(draws, pool))
    if good == 0 or draws == 0:
        return 0.0
    if pool - good < draws:
        return 1.0
    return 1.0 - math.comb(pool - good, draws) / math.comb(pool, draws)


@dataclass(slots=True)
class View:
    """The observation of one player, parsed into blocks and cards."""

    variant: str
    me: int
    side: str
    opponent_side: str
    impact: tuple[int, int]
    stopped: tuple[bool, bool]
    card_played: tuple[bool, bool]
    hand: list[Card]
    reserve: dict[str, Block]
    field: tuple[list[Block], list[Block]]
    opponent_hand: int
    opponent_used: list[Card] = field(default_factory=list)
    """The opponent's cards that left their hand (deployed or spent on a challenge)."""
    opponent_shown: list[Card] = field(default_factory=list)
    """The opponent's cards shown to refute and not played since: known to be in hand."""
    pending: list[Block] = field(default_factory=list)
    pending_added: int = 0

    @property
    def opp(self) -> int:
        return 1 - self.me

    @property
    def siege(self) -> bool:
        return self.variant == "siege"

    def winning(self) -> bool:
        """Would we win if the battle ended now? (A tie goes to the defender.)"""
        mine, theirs = self.impact[self.me], self.impact[self.opp]
        return mine > theirs or (mine == theirs and self.me == 1)

    def pool(self) -> tuple[Counter[str], int, int]:
        """The opponent's unseen cards by mon (``"loyalty"`` for loyalty cards), the pool
        size, and how many of their hand cards are unknown to us.

        The pool is the published deck of their side minus every card of theirs we
        have seen; a scenario with other cards only makes the estimate rougher.
        """
        loyalty, clans = DECK_COUNTS.get(self.opponent_side, (0, ()))
        counts: Counter[str] = Counter({"loyalty": loyalty})
        for mon, double, sword, plain in clans:
            counts[mon] += double + sword + plain
        for card in (*self.opponent_used, *self.opponent_shown):
            key = card.mon or "loyalty"
            counts[key] = max(0, counts[key] - 1)
        size = sum(counts.values())
        unknown = max(0, self.opponent_hand - len(self.opponent_shown))
        return counts, size, unknown

    def opponent_has_loyalty(self) -> float:
        """P(the opponent holds a loyalty challenge card now)."""
        if self.siege:
            return 0.0
        if any(c.loyalty for c in self.opponent_shown):
            return 1.0
        counts, size, unknown = self.pool()
        return at_least_one(size, counts["loyalty"], unknown)

    def opponent_refutes(self, blocks: Sequence[Block]) -> float:
        """P(the opponent can show a card that refutes a challenge against ``blocks``)."""
        if self.opponent_hand == 0:
            return 0.0
        mons = {b.mon for b in blocks if not b.any_card}
        if not mons:
            return 1.0  # any card refutes an any-card block
        if len(mons) > 1:
            return 0.0  # no single card matches two mons
        (mon,) = mons
        if any(c.mon == mon for c in self.opponent_shown):
            return 1.0
        counts, size, unknown = self.pool()
        return at_least_one(size, counts[mon], unknown)


def parse_view(obs: dict[str, Any]) -> View:
    """Turn the arena's observation into a :class:`View`, replaying the public log to
    learn which opponent cards were played and which were shown and kept."""
    me = ROLES.index(obs["you"])
    sides = obs["sides"]
    revealed_blocks = obs["revealed_blocks"]
    revealed_cards = obs["revealed_cards"]

    def pair(key: str) -> tuple[Any, Any]:
        return obs[key]["attacker"], obs[key]["defender"]

    fields = tuple(
        [Block.from_token(entry["block"]) for entry in obs["field"][role]] for role in ROLES
    )
    view = View(
        variant=obs["variant"],
        me=me,
        side=sides[ROLES[me]],
        opponent_side=sides[ROLES[1 - me]],
        impact=pair("impact"),
        stopped=pair("stopped"),
        card_played=pair("card_played"),
        hand=[Card.from_token(t) for t in obs["hand"]],
        reserve={b.id: b for b in map(Block.from_token, obs["reserve"])},
        field=(fields[0], fields[1]),
        opponent_hand=int(obs["opponent_hand"]),
    )
    shown: dict[str, Card] = {}
    for entry in obs["log"]:
        if entry["by"] == ROLES[me]:
            continue
        verb, *args = entry["action"].split()
        if verb in ("deploy", "challenge", "refute"):
            card = parse_card(args[0], revealed_cards[args[0]])
            if verb == "refute":
                shown[card.id] = card
            else:
                shown.pop(card.id, None)
                view.opponent_used.append(card)
    view.opponent_shown = list(shown.values())
    pending = obs.get("pending")
    if pending:
        view.pending = [parse_block(b, revealed_blocks[b]) for b in pending["blocks"]]
        view.pending_added = int(pending["added"])
    return view


def score_blocks(
    blocks: Sequence[Block], on_field: Sequence[Block], card: Card | None, siege: bool
) -> int:
    """What deploying ``blocks`` one after the other adds to a side holding ``on_field``
    (rule 3; ``card`` ``None`` for a free leader or a turned block: no special attack)."""
    field_now = list(on_field)
    total = 0
    for block in blocks:
        gain = block.strength + sum(1 for b in field_now if b.mon == block.mon)
        if (
            card is not None
            and card.kind is CardKind.SWORD
            and block.special_kind
            and block.mon == card.mon
            and not siege
        ):
            gain += 2 + 2 * sum(1 for b in field_now if b.mark is block.mark)
        field_now.append(block)
        total += gain
    return total


def deployment_value(view: View, action: str) -> float:
    """The expected impact of a ``leader``/``deploy`` action: what it adds, minus the
    expected swing of a successful challenge, plus small tie-breaks."""
    verb, *args = action.split()
    mine = view.field[view.me]
    if verb == "leader":
        block = view.reserve[args[0]]
        return FREE_LEADER_BONUS + score_blocks([block], mine, None, view.siege)
    card = next(c for c in view.hand if c.id == args[0])
    blocks = [view.reserve[b] for b in args[1].split(",")]
    added = score_blocks(blocks, mine, card, view.siege)
    value = float(added)
    if (
        card.kind is CardKind.SWORD
        and any(b.special_kind and b.mon == card.mon for b in blocks)
        and not view.siege
    ):
        value += SPECIAL_BONUS
    rest = [c for c in view.hand if c.id != card.id]
    if any(refutes(c, blocks) for c in rest):
        value += KEEP_REFUTER_BONUS
    else:
        turned_gain = score_blocks(blocks, view.field[view.opp], None, view.siege)
        risk = view.opponent_has_loyalty() * CHALLENGE_LIKELIHOOD
        value -= risk * (added + turned_gain)
    return value


def choose_act(view: View, legal: Sequence[str], rng: random.Random) -> str:
    if "stop" in legal and view.stopped[view.opp] and view.winning():
        return "stop"
    options = [a for a in legal if a != "stop"]
    if not options:
        return "stop"
    scored = [(deployment_value(view, a), a) for a in options]
    best = max(v for v, _ in scored)
    return rng.choice([a for v, a in scored if v >= best - 1e-9])


def free_leader_value(view: View) -> float:
    """What a challenge would cost us in free leaders (playing a card ends them)."""
    if view.card_played[view.me]:
        return 0.0
    leaders = [b for b in view.reserve.values() if b.mark is Mark.LEADER]
    return float(sum(b.strength for b in leaders))


def choose_challenge(view: View, legal: Sequence[str]) -> str:
    challenges = [a for a in legal if a.startswith("challenge ")]
    if not challenges or not view.pending:
        return "pass"
    refute = view.opponent_refutes(view.pending)
    if refute > MAX_REFUTE_CHANCE:
        return "pass"
    gained = score_blocks(view.pending, view.field[view.me], None, view.siege)
    expected = (1.0 - refute) * (view.pending_added + gained)
    late = view.stopped[view.me] or view.opponent_hand <= 1 or len(challenges) > 1
    bar = (CHALLENGE_BAR_LATE if late else CHALLENGE_BAR) + free_leader_value(view)
    return challenges[0] if expected >= bar else "pass"


def choose_refute(view: View, legal: Sequence[str], seen: set[str]) -> str:
    refutations = [a for a in legal if a.startswith("refute ")]
    if not refutations:
        return "decline"
    # Show a card the opponent has already seen when we can: it tells them nothing new.
    known = [a for a in refutations if a.split()[1] in seen]
    return (known or refutations)[0]


def choose_action(
    observation: dict[str, Any], legal: Sequence[str], rng: random.Random | None = None
) -> str:
    """The greedy bot's decision for one request: the arena's observation and legal list.

    Pure apart from ``rng`` (ties between equally valued deployments), so tests can
    call it in-process with ``state.observation(player)`` and ``state.legal_actions()``.
    """
    rng = rng or random.Random(0)
    view = parse_view(observation)
    phase = observation["phase"]
    if phase == "challenge":
        return choose_challenge(view, legal)
    if phase == "refute":
        return choose_refute(view, legal, set(observation["revealed_cards"]))
    return choose_act(view, legal, rng)


def main() -> None:
    parser = argparse.ArgumentParser(description="greedy Sekigahara battle bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    def choose(request: Request) -> str:
        return choose_action(request.observation, request.legal, rng)

    run(
        choose,
        name="battle-greedy",
        author="Kamisado Arena",
        version="1",
        games=("sekigahara",),
    )


if __name__ == "__main__":
    main()
