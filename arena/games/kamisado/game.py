"""Kamisado behind the generic ``Game``/``State`` interface (text actions)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.games.base import TERMINAL, CheckCase, Game, GameError, IllegalAction, Outcome, State
from arena.games.kamisado.board import (
    COLOURS,
    MATCH_KINDS,
    MATCH_TARGET,
    PLAYER_NAMES,
    SQUARE_NAMES,
)
from arena.games.kamisado.notation import (
    START_TEXT,
    move_to_text,
    position_to_text,
    text_to_move,
    text_to_position,
)
from arena.games.kamisado.observation import KamisadoObservation
from arena.games.kamisado.position import FREE, OVER, PHASE_NAMES, PLAY, Position, perft

if TYPE_CHECKING:
    from arena.games.show import Show

# Hand-built positions for check-bot (see protocol.md and notation.py).
PUSH_CHECK = "obvprgn1/8/8/3y4/3G+4/8/8/OBVPYRN1 b g standard 1-0 2 -"
"""Black's green Sumo on d4 may push Gold's yellow on d5 (``d4-d5``) or move diagonally."""
REGROUP_CHECK = "oO+vpyrgn/8/8/1b6/8/8/2G5/N2YPVBR b - standard 1-0 1 b"
"""Black won the round and must choose how to regroup: ``left`` or ``right``."""


class KamisadoState(State):
    """A match in progress; all information is public, so every view is the whole state."""

    game_name = "kamisado"

    __slots__ = ("pos", "actions", "_legal")

    def __init__(self, pos: Position, actions: list[str] | None = None) -> None:
        self.pos = pos
        self.actions: list[str] = actions or []
        self._legal: dict[str, int] | None = None

    def _legal_map(self) -> dict[str, int]:
        if self._legal is None:
            self._legal = {move_to_text(m): m for m in self.pos.legal_moves()}
        return self._legal

    def current_player(self) -> int:
        return TERMINAL if self.pos.phase == OVER else self.pos.side

    def legal_actions(self) -> list[str]:
        return list(self._legal_map())

    def apply_action(self, action: str) -> None:
        move = self._legal_map().get(action)
        if move is None:
            text_to_move(action)  # a syntax error gets its own clearer message
            raise IllegalAction(f"illegal action {action!r} in {self.to_text()}")
        self.pos.make(move)
        self.actions.append(action)
        self._legal = None

    def forced_action(self) -> str | None:
        """Everything is public, so a single legal action (a zero-length move, a
        push that is the only move) is forced for all to see: the referee plays it."""
        legal = self._legal_map()
        return next(iter(legal)) if len(legal) == 1 else None

    def clone(self) -> KamisadoState:
        return KamisadoState(self.pos.copy(), self.actions[:])

    def outcome(self) -> Outcome | None:
        winner = self.pos.winner()
        if winner < 0:
            return None
        returns = (1.0, 0.0) if winner == 0 else (0.0, 1.0)
        return Outcome(
            returns,
            self.pos.last_reason or "score",
            {
                "scores": [self.pos.score(0), self.pos.score(1)],
                "rounds": self.pos.round,
                "winner": PLAYER_NAMES[winner],
            },
        )

    def to_text(self) -> str:
        return position_to_text(self.pos)

    def observation_text(self, player: int) -> str:
        return position_to_text(self.pos)

    def observation(self, player: int) -> dict[str, Any]:
        pos = self.pos
        towers = [
            {
                "square": SQUARE_NAMES[pos.square_of[t]],
                "owner": PLAYER_NAMES[t >> 3],
                "colour": COLOURS[t & 7],
                "rank": pos.rank[t],
            }
            for t in range(16)
        ]
        return {
            "towers": towers,
            "to_move": PLAYER_NAMES[pos.side],
            "required_colour": None if pos.required == FREE else COLOURS[pos.required],
            "phase": PHASE_NAMES[pos.phase],
            "match": MATCH_KINDS[pos.kind],
            "target": MATCH_TARGET[pos.kind],
            "scores": {"black": pos.score(0), "gold": pos.score(1)},
            "round": pos.round,
            "you": PLAYER_NAMES[player],
        }

    def history(self, player: int) -> list[str]:
        return list(self.actions)

    def player_names(self) -> tuple[str, str]:
        return PLAYER_NAMES

    def figures(self) -> dict[str, str]:
        """The round score (black-gold) of a match of more than one round."""
        if MATCH_TARGET[self.pos.kind] <= 1:
            return {}
        return {"rounds": f"{self.pos.score(0)}-{self.pos.score(1)}"}


class Kamisado(Game):
    name = "kamisado"
    variants = MATCH_KINDS
    default_variant = "standard"
    description = "Kamisado: single round, standard, long and marathon matches"
    observation_type = KamisadoObservation
    strongest_bot = "alphabeta"

    def show(self) -> Show:
        from arena.games.kamisado.show import SHOW

        return SHOW

    def check_cases(self) -> list[CheckCase]:
        """A Sumo push among the legal actions, a pending regroup choice and a marathon
        match well advanced (a long history, high Sumo ranks)."""
        return [
            CheckCase("Sumo push available", "standard", PUSH_CHECK, offers="d4-d5"),
            CheckCase("regroup choice", "standard", REGROUP_CHECK, offers="left"),
            CheckCase("marathon match", "marathon", plies=150),
        ]

    def notable_decision(self, state: State) -> str | None:
        """A later round opened with a free choice (no required colour): the loser of
        a round opens the next among a hundred moves, from a board regrouped."""
        assert isinstance(state, KamisadoState)
        pos = state.pos
        if pos.phase == PLAY and pos.required == FREE and pos.round > 1:
            return "later rounds opened with a free choice"
        return None

    def new_state(self, variant: str | None = None) -> KamisadoState:
        variant = variant or self.default_variant
        if variant not in MATCH_KINDS:
            raise GameError(
                f"unknown Kamisado variant {variant!r} (known: {', '.join(MATCH_KINDS)})"
            )
        return KamisadoState(Position.start(MATCH_KINDS.index(variant)))

    def state_from_text(self, text: str) -> KamisadoState:
        return KamisadoState(text_to_position(text))

    def variant_of(self, state: State) -> str | None:
        assert isinstance(state, KamisadoState)
        return MATCH_KINDS[state.pos.kind]

    def perft(self, state: State, depth: int) -> int:
        """Perft within the current round (the rules file's definition), on the fast core."""
        assert isinstance(state, KamisadoState)
        return perft(state.pos.copy(), depth)

    def perft_divide(self, state: State, depth: int) -> list[tuple[str, int]]:
        """Zero for every action once the round is over: a regroup choice starts the
        next round, which perft does not enter, so the split agrees with ``perft``."""
        assert isinstance(state, KamisadoState)
        if state.pos.phase != PLAY:
            return [(action, 0) for action in state.legal_actions()]
        return super().perft_divide(state, depth)

    def start_text(self, variant: str | None = None) -> str:
        return START_TEXT.format(kind=variant or self.default_variant)
