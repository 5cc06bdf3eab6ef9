"""The solver's value of every position of a stored game.

A game record holds its opening and every action; replaying them through the
``Game``/``State`` interface gives each position, and ``Game.solve`` its exact
value within a budget: who wins the part of the game it is in (a Kamisado
round) by force, or unknown. Nothing here knows a game's internals, and the
record is only read.
"""

from __future__ import annotations

import time

import msgspec

from arena.games import Game, GameError, State
from arena.match.record import GameRecord

UNKNOWN = -1
"""``PlyValue.winner`` when the solver proved nothing within the budget."""


class PlyValue(msgspec.Struct, array_like=True, frozen=True):
    """The solver's verdict on one position (before the action of that ply; the
    last one is the final position).

    ``winner`` wins the ``part`` (round) by force, or :data:`UNKNOWN`;
    ``distance`` is the plies to the part's end with best play (unknown: the
    depth proven undecided); ``best`` a best action, empty once the part is
    over (the position between two rounds, or the end); ``choices`` how many
    legal actions the mover had.
    """

    part: int
    player: int
    winner: int
    distance: int
    best: str
    choices: int
    nodes: int = 0


class GameValues(msgspec.Struct, frozen=True):
    """Every position's value of one game, and what it cost."""

    values: list[PlyValue]
    budget_ms: float
    seconds: float

    @property
    def positions(self) -> int:
        """Positions with something to solve (a part in play)."""
        return sum(1 for v in self.values if v.best)

    @property
    def proven(self) -> int:
        return sum(1 for v in self.values if v.best and v.winner != UNKNOWN)

    @property
    def nodes(self) -> int:
        return sum(v.nodes for v in self.values)


class ReplayError(GameError):
    """A stored game that cannot be replayed (its opening or an action)."""


def solve_game(game: Game, record: GameRecord, budget_ms: float) -> GameValues:
    """Replay ``record`` from its opening and solve every position within
    ``budget_ms`` milliseconds each."""
    start = time.monotonic()
    try:
        state = game.state_from_text(record.opening)
    except GameError as exc:
        raise ReplayError(f"its opening does not parse ({exc})") from None
    values: list[PlyValue] = []
    for ply, action in enumerate(record.actions, 1):
        values.append(_value(game, state, budget_ms))
        try:
            state.apply_action(action.action)
        except GameError as exc:
            raise ReplayError(f"ply {ply}: {exc}") from None
    values.append(_value(game, state, budget_ms))
    return GameValues(values, budget_ms, round(time.monotonic() - start, 3))


def _value(game: Game, state: State, budget_ms: float) -> PlyValue:
    solution = game.solve(state, budget_ms)
    player = max(state.current_player(), 0)
    if solution is None:
        return PlyValue(0, player, UNKNOWN, 0, "", 0)
    winner = UNKNOWN if solution.winner is None else solution.winner
    choices = 0 if solution.move is None else len(state.legal_actions())
    return PlyValue(
        solution.part,
        solution.player,
        winner,
        solution.distance,
        solution.move or "",
        choices,
        solution.nodes,
    )
