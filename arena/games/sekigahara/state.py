"""The referee's state of one Sekigahara battle.

Roles are indices: 0 is the attacker, 1 the defender (player 0 is always the
attacker, who acts first at 0-0). The state is the scenario plus the actions so
far; everything else is derived by applying those actions one by one, which is
also how a position text is read back. Impacts are kept as running totals and
every deployment remembers what it added, because a successful loyalty
challenge takes exactly that back.

Turn structure (``phase``):

- ``act``: the side with the initiative plays ``leader``, ``deploy`` or ``stop``;
- ``challenge``: after every *card* deployment in a battle, the other side
  decides ``challenge <card>`` or ``pass``. Ruling: this turn happens even when
  that side holds no loyalty card (then ``pass`` is its only action, and the
  arena still asks for it: see ``forced_action``), so neither the turn sequence
  nor the clocks tell the deployer whether the opponent holds one;
- ``refute``: after a challenge, the deployer plays ``refute <card>`` or
  ``decline``;
- ``over``: both sides have stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from arena.games.base import TERMINAL, GameError, IllegalAction, Outcome, State
from arena.games.sekigahara.cards import Block, Card, CardKind, Mark
from arena.games.sekigahara.notation import (
    ParsedAction,
    normalize,
    parse_action,
    parse_position_text,
)
from arena.games.sekigahara.scenario import ROLES, Scenario

IMPACT_PER_CASUALTY = 7


@dataclass(slots=True)
class Deployment:
    """One deployment: who, with which card (``None`` for a free leader), which blocks,
    what each block added, and whether it was turned by a loyalty challenge."""

    role: int
    card: str | None
    blocks: tuple[str, ...]
    added: list[int]
    turned: bool = False
    gained: list[int] = field(default_factory=list)
    """What each block added to the challenger when the deployment was turned."""


@dataclass(slots=True)
class Side:
    """What one role holds during the battle."""

    hand: list[str]
    reserve: list[str]
    impact: int = 0
    stopped: bool = False
    card_played: bool = False
    field: list[str] = field(default_factory=list)
    """Blocks deployed on this side, in order of arrival (turned-in blocks included)."""


class SekigaharaState(State):
    """A battle in progress. Mutable; ``clone`` for look-ahead."""

    game_name: ClassVar[str] = "sekigahara"

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.blocks: dict[str, Block] = {}
        self.cards: dict[str, Card] = {}
        self.owner: dict[str, int] = {}
        """Original owner role of every block id."""
        sides = []
        for role in (0, 1):
            army = scenario.army(role)
            for b in army.blocks:
                self.blocks[b.id] = b
                self.owner[b.id] = role
            for c in army.hand:
                self.cards[c.id] = c
            sides.append(Side([c.id for c in army.hand], [b.id for b in army.blocks]))
        self.sides: tuple[Side, Side] = (sides[0], sides[1])
        self.phase = "act"
        self.deployments: list[Deployment] = []
        self.order: dict[str, int] = {}
        """Block id -> index in the sequence of deployed blocks (casualty tie-break)."""
        self.challenge_card: str | None = None
        self.revealed_cards: list[str] = []
        """Card ids the opponent has seen (played, or shown to refute), in order."""
        self.log: list[tuple[int, str]] = []

    # --- derived facts -----------------------------------------------------

    @property
    def siege(self) -> bool:
        return self.scenario.variant == "siege"

    def initiative(self) -> int:
        """Rules 1 and 5: lower impact acts, attacker on a tie, unless one side stopped."""
        a, d = self.sides
        if a.stopped:
            return 1
        if d.stopped:
            return 0
        return 1 if d.impact < a.impact else 0

    def current_player(self) -> int:
        if self.phase == "over":
            return TERMINAL
        if self.phase == "act":
            return self.initiative()
        last = self.deployments[-1].role
        return 1 - last if self.phase == "challenge" else last

    def _count(self, role: int, pred: Any) -> int:
        return sum(1 for b in self.sides[role].field if pred(self.blocks[b]))

    def _matching_reserve(self, role: int, card: Card) -> list[str]:
        return [b for b in self.sides[role].reserve if self.blocks[b].matches(card.mon or "")]

    def _refutes(self, card: Card, deployment: Deployment) -> bool:
        """Ruling: the shown card must match every block of the deployment (so for a
        mixed double, e.g. Ii Naomasa with a Tokugawa block, a Tokugawa card); for
        an any-card block any card counts, a loyalty card included."""
        return all(
            self.blocks[b].any_card or (card.mon is not None and self.blocks[b].mon == card.mon)
            for b in deployment.blocks
        )

    # --- legal actions -----------------------------------------------------

    def legal_actions(self) -> list[str]:
        if self.phase == "over":
            return []
        if self.phase == "challenge":
            side = self.sides[self.current_player()]
            loyal = [c for c in side.hand if self.cards[c].loyalty]
            return [f"challenge {c}" for c in loyal] + ["pass"]
        if self.phase == "refute":
            side = self.sides[self.current_player()]
            last = self.deployments[-1]
            shown = [c for c in side.hand if self._refutes(self.cards[c], last)]
            return [f"refute {c}" for c in shown] + ["decline"]
        return self._act_actions(self.current_player())

    def _act_actions(self, role: int) -> list[str]:
        """Free leaders, then card deployments in hand order, then ``stop``.

        Ruling: a double card lists every single block and every *ordered* pair
        of two different matching blocks, because the rules score the two "one
        after the other" and the order decides the casualty tie-break.
        Ruling: Ishida Mitsunari, being a leader, may also come as a free leader.
        A loyalty card deploys nothing (it has no mon, so not even an any-card block).
        """
        side = self.sides[role]
        actions = []
        if not side.card_played:
            actions += [f"leader {b}" for b in side.reserve if self.blocks[b].mark is Mark.LEADER]
        for cid in side.hand:
            card = self.cards[cid]
            if card.loyalty:
                continue
            matching = self._matching_reserve(role, card)
            actions += [f"deploy {cid} {b}" for b in matching]
            if card.kind is CardKind.DOUBLE:
                actions += [f"deploy {cid} {b},{c}" for b in matching for c in matching if b != c]
        return [*actions, "stop"]

    # --- applying actions --------------------------------------------------

    def apply_action(self, action: str) -> None:
        if self.phase == "over":
            raise IllegalAction("the battle is over")
        text = normalize(action)
        if text not in self.legal_actions():
            raise IllegalAction(f"{text!r} is not legal now")
        role = self.current_player()
        act = parse_action(text)
        self.log.append((role, text))
        getattr(self, f"_do_{act.verb}")(role, act)

    def _do_leader(self, role: int, act: ParsedAction) -> None:
        self._deploy(role, None, act.blocks)
        self.phase = "act"

    def _do_deploy(self, role: int, act: ParsedAction) -> None:
        assert act.card is not None
        side = self.sides[role]
        side.hand.remove(act.card)
        side.card_played = True
        self.revealed_cards.append(act.card)
        self._deploy(role, act.card, act.blocks)
        # Rule 8: no loyalty challenges in a siege, so no challenge turn either.
        self.phase = "act" if self.siege else "challenge"

    def _deploy(self, role: int, card_id: str | None, block_ids: tuple[str, ...]) -> None:
        """Rule 3: score each block in turn against the blocks already on this side."""
        side = self.sides[role]
        card = self.cards[card_id] if card_id else None
        added = []
        for bid in block_ids:
            block = self.blocks[bid]
            gain = block.strength + self._count(role, lambda b, m=block.mon: b.mon == m)
            if (
                card is not None
                and card.kind is CardKind.SWORD
                and block.special_kind
                and block.mon == card.mon
                and not self.siege
            ):
                gain += 2 + 2 * self._count(role, lambda b, k=block.mark: b.mark is k)
            side.reserve.remove(bid)
            side.field.append(bid)
            self.order[bid] = len(self.order)
            side.impact += gain
            added.append(gain)
        self.deployments.append(Deployment(role, card_id, block_ids, added))

    def _do_stop(self, role: int, act: ParsedAction) -> None:
        self.sides[role].stopped = True
        self.phase = "over" if all(s.stopped for s in self.sides) else "act"

    def _do_pass(self, role: int, act: ParsedAction) -> None:
        self.phase = "act"

    def _do_challenge(self, role: int, act: ParsedAction) -> None:
        """Ruling: playing a loyalty challenge card counts as playing a card, so that
        side may no longer deploy free leaders. The loyalty card is spent whether or
        not the challenge is refuted."""
        assert act.card is not None
        side = self.sides[role]
        side.hand.remove(act.card)
        side.card_played = True
        self.revealed_cards.append(act.card)
        self.challenge_card = act.card
        self.phase = "refute"

    def _do_refute(self, role: int, act: ParsedAction) -> None:
        """The shown card is revealed but stays in hand; it may be played or shown
        again later."""
        assert act.card is not None
        if act.card not in self.revealed_cards:
            self.revealed_cards.append(act.card)
        self.challenge_card = None
        self.phase = "act"

    def _do_decline(self, role: int, act: ParsedAction) -> None:
        """Rule 4: the blocks change sides; the owner loses what the deployment added,
        the challenger scores each block in order as a plain deployment."""
        last = self.deployments[-1]
        owner, challenger = self.sides[role], self.sides[1 - role]
        owner.impact -= sum(last.added)
        for bid in last.blocks:
            owner.field.remove(bid)
        for bid in last.blocks:
            block = self.blocks[bid]
            gain = block.strength + self._count(1 - role, lambda b, m=block.mon: b.mon == m)
            challenger.impact += gain
            challenger.field.append(bid)
            last.gained.append(gain)
        last.turned = True
        self.challenge_card = None
        self.phase = "act"

    # --- the end -----------------------------------------------------------

    def winner(self) -> int:
        """Rule 6: higher impact wins, a tie goes to the defender."""
        a, d = self.sides
        return 0 if a.impact > d.impact else 1

    def casualties(self) -> tuple[list[str], list[str]]:
        """Rule 7: the block ids each role loses, in the order they are removed.

        One per full 7 impact of the opponent, one more for the loser; first the
        blocks turned away from it, then its deployed blocks, then its undeployed
        ones. Ruling (from the rules file): within a group weakest first, ties by
        order of deployment; undeployed blocks tie by army order. A side cannot
        lose more blocks than it has.
        """
        result: list[list[str]] = []
        loser = 1 - self.winner()
        for role in (0, 1):
            count = self.sides[1 - role].impact // IMPACT_PER_CASUALTY + (role == loser)
            if self.siege and role == 0:
                count = 0
            mine = [b for b in self.sides[role].field if self.owner[b] == role]
            away = [b for b in self.sides[1 - role].field if self.owner[b] == role]
            army = [b.id for b in self.scenario.army(role).blocks]
            reserve = sorted(self.sides[role].reserve, key=army.index)

            ordered = (
                self._weakest_first(away)
                + self._weakest_first(mine)
                + sorted(reserve, key=lambda b: self.blocks[b].strength)
            )
            result.append(ordered[:count])
        return result[0], result[1]

    def _weakest_first(self, ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda bid: (self.blocks[bid].strength, self.order[bid]))

    def outcome(self) -> Outcome | None:
        if self.phase != "over":
            return None
        win = self.winner()
        lost = self.casualties()
        return Outcome(
            returns=(1.0, 0.0) if win == 0 else (0.0, 1.0),
            reason="battle",
            details={
                "winner": ROLES[win],
                "winner_side": self.scenario.side(win),
                "impacts": {ROLES[r]: self.sides[r].impact for r in (0, 1)},
                "casualties": {ROLES[r]: len(lost[r]) for r in (0, 1)},
                "removed": {ROLES[r]: lost[r] for r in (0, 1)},
            },
        )

    # --- texts and views ---------------------------------------------------

    def clone(self) -> SekigaharaState:
        """Blocks, cards and the scenario are immutable and shared; the rest is copied."""
        copy = object.__new__(SekigaharaState)
        copy.scenario = self.scenario
        copy.blocks, copy.cards, copy.owner = self.blocks, self.cards, self.owner
        first, second = (
            Side(list(s.hand), list(s.reserve), s.impact, s.stopped, s.card_played, list(s.field))
            for s in self.sides
        )
        copy.sides = (first, second)
        copy.phase = self.phase
        copy.deployments = [
            Deployment(d.role, d.card, d.blocks, list(d.added), d.turned, list(d.gained))
            for d in self.deployments
        ]
        copy.order = dict(self.order)
        copy.challenge_card = self.challenge_card
        copy.revealed_cards = list(self.revealed_cards)
        copy.log = list(self.log)
        return copy

    def to_text(self) -> str:
        """``sekigahara <scenario text> moves=<action>;<action>;...`` -- replayable."""
        moves = ";".join(text for _, text in self.log)
        return f"sekigahara {self.scenario.to_text()} moves={moves}"

    @classmethod
    def from_text(cls, text: str) -> SekigaharaState:
        """Read a position text (canonical form only) by replaying its actions."""
        scenario, actions = parse_position_text(text)
        state = cls(scenario)
        for i, action in enumerate(actions):
            try:
                state.apply_action(action)
            except IllegalAction as exc:
                raise GameError(f"moves: move {i + 1} {action!r}: {exc}") from None
        return state

    def forced_action(self) -> str | None:
        """The single legal action, when the opponent can see that it is forced.

        Only counts are public: an empty hand leaves nothing to challenge or refute
        with, an empty reserve nothing to deploy, and an empty hand after a card was
        played (no free leaders any more) nothing either; then ``stop``, ``pass`` or
        ``decline`` is forced for all to see. Any other forced action (no loyalty
        card, no matching card, a reserve the hand cannot deploy) is forced only by
        hidden facts, so the bot is asked and its clock runs as for a choice.
        """
        role = self.current_player()
        if role == TERMINAL:
            return None
        side = self.sides[role]
        if self.phase == "act":
            public = not side.reserve or (not side.hand and side.card_played)
        else:
            public = not side.hand
        legal = self.legal_actions()
        return legal[0] if public and len(legal) == 1 else None

    def player_names(self) -> tuple[str, str]:
        return ROLES

    def figures(self) -> dict[str, str]:
        """Impacts (attacker-defender), and once the battle is over the casualties."""
        a, d = self.sides
        out = {"impact": f"{a.impact}-{d.impact}"}
        if self.phase == "over":
            lost = self.casualties()
            out["casualties"] = f"{len(lost[0])}-{len(lost[1])}"
        return out

    def history(self, player: int) -> list[str]:
        """Every action is a public event (cards and blocks are shown when used), so
        both players see the same history."""
        self._check_player(player)
        return [text for _, text in self.log]

    def _check_player(self, player: int) -> None:
        if player not in (0, 1):
            raise GameError(f"player must be 0 or 1, not {player!r}")

    def _field_view(self, role: int) -> list[dict[str, Any]]:
        added: dict[str, int] = {}
        for dep in self.deployments:
            for i, bid in enumerate(dep.blocks):
                added[bid] = dep.gained[i] if dep.turned and dep.role != role else dep.added[i]
        return [
            {"block": self.blocks[b].token(), "owner": ROLES[self.owner[b]], "added": added[b]}
            for b in self.sides[role].field
        ]

    def observation(self, player: int) -> dict[str, Any]:
        """What ``player`` may know: own hand and reserve in full, the opponent's
        counts, the field, every public event, and what each revealed id is."""
        self._check_player(player)
        me, opp = self.sides[player], self.sides[1 - player]
        to_move = self.current_player()
        revealed_blocks = {b: self.blocks[b].describe() for b in self.order}
        outcome = self.outcome()
        pending = None
        if self.phase in ("challenge", "refute"):
            last = self.deployments[-1]
            assert last.card is not None  # only a card deployment opens a challenge
            pending = {
                "by": ROLES[last.role],
                "card": last.card,
                "blocks": list(last.blocks),
                "added": sum(last.added),
                "challenge": self.challenge_card,
            }
        return {
            "game": "sekigahara",
            "variant": self.scenario.variant,
            "you": ROLES[player],
            "sides": {ROLES[r]: self.scenario.side(r) for r in (0, 1)},
            "phase": self.phase,
            "to_move": None if to_move == TERMINAL else ROLES[to_move],
            "impact": {ROLES[r]: self.sides[r].impact for r in (0, 1)},
            "stopped": {ROLES[r]: self.sides[r].stopped for r in (0, 1)},
            "card_played": {ROLES[r]: self.sides[r].card_played for r in (0, 1)},
            "hand": [self.cards[c].token() for c in me.hand],
            "reserve": [self.blocks[b].token() for b in me.reserve],
            "opponent_hand": len(opp.hand),
            "opponent_reserve": len(opp.reserve),
            "field": {ROLES[r]: self._field_view(r) for r in (0, 1)},
            "pending": pending,
            "revealed_cards": {c: self.cards[c].describe() for c in self.revealed_cards},
            "revealed_blocks": revealed_blocks,
            "log": [{"by": ROLES[r], "action": text} for r, text in self.log],
            "outcome": None if outcome is None else self._outcome_view(outcome, player),
        }

    def _outcome_view(self, outcome: Outcome, player: int) -> dict[str, Any]:
        """The outcome without the opponent's removed block ids: removed undeployed
        blocks were never shown, so only counts of the opponent's losses are given."""
        details = dict(outcome.details)
        details["removed"] = {ROLES[player]: outcome.details["removed"][ROLES[player]]}
        return details

    def observation_text(self, player: int) -> str:
        """One line: ``sekigahara <variant> you=<role>:<side> phase=<phase>:<role>
        impact=<a>-<d> stopped=<a|->/<d|-> hand=<cards> reserve=<blocks>
        opponent=<cards>c/<blocks>b attacker=<field> defender=<field>
        cards=<revealed cards> moves=<actions>``."""
        obs = self.observation(player)
        me = ROLES[player]

        def field_text(role: str) -> str:
            items = [
                f"{f['block']}{'!' if f['owner'] != role else ''}+{f['added']}"
                for f in obs["field"][role]
            ]
            return ",".join(items) or "-"

        stopped = "/".join("s" if obs["stopped"][r] else "-" for r in ROLES)
        cards = ",".join(f"{c}:{d}" for c, d in obs["revealed_cards"].items()) or "-"
        moves = ";".join(text for _, text in self.log)
        return (
            f"sekigahara {self.scenario.variant} you={me}:{obs['sides'][me]}"
            f" phase={self.phase}:{obs['to_move'] or '-'}"
            f" impact={obs['impact']['attacker']}-{obs['impact']['defender']}"
            f" stopped={stopped}"
            f" hand={','.join(obs['hand']) or '-'} reserve={','.join(obs['reserve']) or '-'}"
            f" opponent={obs['opponent_hand']}c/{obs['opponent_reserve']}b"
            f" attacker={field_text('attacker')} defender={field_text('defender')}"
            f" cards={cards} moves={moves}"
        )
