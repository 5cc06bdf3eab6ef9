"""A toy third game, for tests/test_third_game.py: the arena must take it with no
edit outside this folder (found through its ``arena.games`` entry point).

Two runners race along their own lanes of ``goal`` cells: a turn advances the
mover's runner by one or two cells (never past the goal); whoever reaches the
goal first wins. The position text is ``toy:VARIANT:RED,BLUE:MOVER``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.games import TERMINAL, Game, GameError, IllegalAction, Outcome, State

if TYPE_CHECKING:
    from arena.games.show import Show

GOALS = {"short": 6, "long": 10}
NAMES = ("red", "blue")


class ToyState(State):
    game_name = "toy"

    def __init__(self, variant: str, lanes: list[int], mover: int) -> None:
        self.variant, self.lanes, self.mover = variant, lanes, mover
        self.actions: list[str] = []

    @property
    def goal(self) -> int:
        return GOALS[self.variant]

    def current_player(self) -> int:
        return TERMINAL if self.goal in self.lanes else self.mover

    def legal_actions(self) -> list[str]:
        if self.is_terminal():
            return []
        return [f"+{n}" for n in (1, 2) if self.lanes[self.mover] + n <= self.goal]

    def apply_action(self, action: str) -> None:
        if action not in self.legal_actions():
            raise IllegalAction(f"illegal action {action!r} in {self.to_text()}")
        self.lanes[self.mover] += int(action[1:])
        self.actions.append(action)
        self.mover = 1 - self.mover

    def clone(self) -> ToyState:
        copy = ToyState(self.variant, list(self.lanes), self.mover)
        copy.actions = list(self.actions)
        return copy

    def outcome(self) -> Outcome | None:
        if not self.is_terminal():
            return None
        red_won = self.lanes[0] == self.goal
        return Outcome((1.0, 0.0) if red_won else (0.0, 1.0), "finish", {})

    def to_text(self) -> str:
        return f"toy:{self.variant}:{self.lanes[0]},{self.lanes[1]}:{NAMES[self.mover]}"

    def observation(self, player: int) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "goal": self.goal,
            "lanes": {"red": self.lanes[0], "blue": self.lanes[1]},
            "to_move": NAMES[self.mover],
            "you": NAMES[player],
        }

    def observation_text(self, player: int) -> str:
        return self.to_text()

    def history(self, player: int) -> list[str]:
        return list(self.actions)

    def player_names(self) -> tuple[str, str]:
        return NAMES

    def figures(self) -> dict[str, str]:
        return {"cells": f"{self.lanes[0]}-{self.lanes[1]}"}


class ToyGame(Game):
    name = "toy"
    variants = ("short", "long")
    default_variant = "short"
    description = "Toy race: two runners, one or two cells a turn"

    def show(self) -> Show:
        from toy_game.show import SHOW

        return SHOW

    def new_state(self, variant: str | None = None) -> ToyState:
        variant = variant or self.default_variant
        if variant not in GOALS:
            raise GameError(f"unknown toy variant {variant!r}")
        return ToyState(variant, [0, 0], 0)

    def state_from_text(self, text: str) -> ToyState:
        try:
            tag, variant, lanes, mover = text.split(":")
            red, blue = (int(n) for n in lanes.split(","))
            state = ToyState(variant, [red, blue], NAMES.index(mover))
            ok = tag == "toy" and all(0 <= n <= state.goal for n in state.lanes)
        except (ValueError, KeyError):
            ok = False
        if not ok:
            raise GameError(f"not a toy position: {text!r}")
        return state

    def variant_of(self, state: State) -> str | None:
        assert isinstance(state, ToyState)
        return state.variant


GAME = ToyGame()
