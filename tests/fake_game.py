"""A tiny game for tests of the orchestration layers (config, schedule, store).

They must not depend on a real rules core being present or on its details: a
state is the list of actions so far, three actions are legal until ten have
been played, and the position text is ``fake:<variant>:<actions>``.
"""

from __future__ import annotations

from typing import Any

import pytest

import arena.games
from arena.games import TERMINAL, Game, GameError, IllegalAction, Outcome, State


class FakeState(State):
    game_name = "fake"

    def __init__(self, variant: str, actions: list[str] | None = None) -> None:
        self.variant = variant
        self.actions = list(actions or [])

    def current_player(self) -> int:
        return TERMINAL if len(self.actions) >= 10 else len(self.actions) % 2

    def legal_actions(self) -> list[str]:
        return [] if self.is_terminal() else ["a", "b", "c"]

    def apply_action(self, action: str) -> None:
        if action not in self.legal_actions():
            raise IllegalAction(action)
        self.actions.append(action)

    def clone(self) -> FakeState:
        return FakeState(self.variant, self.actions)

    def outcome(self) -> Outcome | None:
        return Outcome((0.5, 0.5), "done") if self.is_terminal() else None

    def to_text(self) -> str:
        return f"fake:{self.variant}:{''.join(self.actions)}"

    def observation(self, player: int) -> dict[str, Any]:
        return {"actions": list(self.actions)}

    def observation_text(self, player: int) -> str:
        return self.to_text()

    def history(self, player: int) -> list[str]:
        return list(self.actions)


class FakeGame(Game):
    name = "fake"
    variants = ("standard", "long")
    default_variant = "standard"

    def new_state(self, variant: str | None = None) -> FakeState:
        variant = variant or self.default_variant
        if variant not in self.variants:
            raise GameError(f"unknown variant {variant!r}")
        return FakeState(variant)

    def state_from_text(self, text: str) -> FakeState:
        parts = text.split(":")
        if len(parts) != 3 or parts[0] != "fake" or parts[1] not in self.variants:
            raise GameError(f"not a fake position: {text!r}")
        if set(parts[2]) - set("abc") or len(parts[2]) > 10:
            raise GameError(f"bad actions in {text!r}")
        return FakeState(parts[1], list(parts[2]))


@pytest.fixture
def fake_registered(monkeypatch: pytest.MonkeyPatch) -> FakeGame:
    """Register ``FakeGame`` as "fake" beside the real games for one test."""
    game = FakeGame()
    try:
        real = arena.games._registry()
    except Exception:  # a rules core being written next door must not break these tests
        real = {}
    monkeypatch.setattr(arena.games, "_registry", lambda: {**real, "fake": game})
    return game
