"""Kamisado behind the generic ``Game``/``State`` interface (text actions)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from arena.games.base import (
    TERMINAL,
    CheckCase,
    Game,
    GameError,
    IllegalAction,
    Outcome,
    Solution,
    State,
)
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
    from arena.games.kamisado.round_solver import RoundValue, Solver
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
        """A match of more than one round: its points (black-gold; a Double Sumo's
        round counts 3) and the rounds each won, which differ and were once both
        called rounds."""
        pos = self.pos
        if MATCH_TARGET[pos.kind] <= 1:
            return {}
        return {
            "points": f"{pos.score(0)}-{pos.score(1)}",
            "rounds won": f"{pos.rounds_won(0)}-{pos.rounds_won(1)}",
        }


class Kamisado(Game):
    name = "kamisado"
    variants = MATCH_KINDS
    default_variant = "standard"
    description = "Kamisado: single round, standard, long and marathon matches"
    observation_type = KamisadoObservation
    solves: ClassVar[str | None] = "round"
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

    def __init__(self) -> None:
        self._solver: Solver | None = None

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

    def solver(self, table_mb: int | None = None) -> Solver:
        """The process's round solver (its table kept across calls: entries are
        facts about positions, true in every game); a new one for another size.

        Imported on first use: loading the compiled kernels costs a fraction of a
        second that only analysis and the solving bots should pay.
        """
        from arena.games.kamisado.round_solver import TABLE_BITS, Solver, table_bits

        bits = TABLE_BITS if table_mb is None else table_bits(table_mb)
        if self._solver is None or self._solver.keys.shape[0] != 1 << bits:
            self._solver = None  # free the old table before taking the new one
            self._solver = Solver(bits)
        return self._solver

    def solve(
        self,
        state: State,
        budget_ms: float | None,
        *,
        max_nodes: int = 0,
        max_depth: int | None = None,
        table_mb: int | None = None,
    ) -> Solution | None:
        """The round's exact value: who wins the round being played by force
        (Sumo pushes, deadlocks and ranks as in play; the match score does not
        change who wins a round). Between rounds, the round just ended."""
        assert isinstance(state, KamisadoState)
        pos = state.pos
        if pos.phase != PLAY:
            winner = pos.last_winner if pos.last_winner >= 0 else None
            return Solution(winner, 0, None, pos.round, pos.side)
        solver = self.solver(table_mb)
        value = _solve(
            solver,
            pos,
            deadline=None if budget_ms is None else time.monotonic() + budget_ms / 1000,
            max_nodes=max_nodes,
            max_depth=max_depth or solver.max_depth,
        )
        winner = {1: pos.side, 0: pos.side ^ 1}.get(value.result)
        return Solution(
            winner, value.distance, move_to_text(value.move), pos.round, pos.side, value.nodes
        )

    def proof_book(
        self,
        state: State,
        leaf_plies: int,
        *,
        table_mb: int | None = None,
        on_entry: Callable[[int], None] | None = None,
    ) -> str:
        """The text of a proof book from ``state`` (Black to move, no Sumo tower,
        a Black win): a Black move for every position Black's strategy reaches
        against any Gold reply, down to positions Black wins within
        ``leaf_plies`` plies (see :mod:`arena.games.kamisado.book`)."""
        from arena.games.kamisado.book import build_book, format_book
        from arena.games.kamisado.solver import WON

        assert isinstance(state, KamisadoState)
        solver = self.solver(table_mb)

        def prove(pos: Position, max_plies: int) -> tuple[bool, int, int]:
            value = _solve(solver, pos, max_depth=max_plies or solver.max_depth)
            return value.result == WON, value.distance, value.move

        book = build_book(state.pos, prove, leaf_plies, on_entry)
        header = [
            "A proof that Black wins this Kamisado round: Black's move in every position",
            "its strategy reaches against any Gold reply. One line per position:",
            "BOARD REQUIRED-COLOUR MOVE (Black to move, no Sumo tower). Positions not",
            f"listed that the strategy reaches are won by Black within {leaf_plies} plies",
            "whatever Gold plays.",
            f"from: {position_to_text(state.pos)}",
            f"built by: arena solve --book FILE --leaf-plies {leaf_plies}",
            f"entries: {len(book)}",
        ]
        return format_book(book, header)


def _solve(solver: Solver, pos: Position, **limits: Any) -> RoundValue:
    """``solver.solve`` of the round ``pos`` is in (the solver takes the rules
    core's arrays, not its ``Position``: it imports no rules)."""
    return solver.solve(pos.at, pos.square_of, pos.rank, pos.side, pos.required, **limits)
