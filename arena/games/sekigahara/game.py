"""The ``Game`` object of the Sekigahara battle: variants, openings, position texts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from arena.games.base import Game, GameError, State
from arena.games.sekigahara.observation import SekigaharaObservation
from arena.games.sekigahara.scenario import VARIANTS, Scenario, deal, default_scenario
from arena.games.sekigahara.state import SekigaharaState

if TYPE_CHECKING:
    from arena.games.show import Show


class SekigaharaGame(Game):
    """One attack between two armies with hidden blocks and hidden hands.

    ``battle`` is the field battle; ``siege`` gives the defender at most two
    blocks and allows no loyalty challenges and no special attacks.
    """

    name: ClassVar[str] = "sekigahara"
    variants: ClassVar[tuple[str, ...]] = VARIANTS
    default_variant: ClassVar[str] = "battle"
    deals_openings: ClassVar[bool] = True
    observation_type: ClassVar[type | None] = SekigaharaObservation
    no_solver: ClassVar[str] = (
        "no exact solver: hidden information (each side's hand and blocks are secret)"
    )
    description: ClassVar[str] = (
        "Sekigahara battle: deploy blocks with cards, special attacks, loyalty challenges"
    )
    strongest_bot: ClassVar[str] = "battle-greedy"

    def show(self) -> Show:
        from arena.games.sekigahara.show import SHOW

        return SHOW

    def _variant(self, variant: str | None) -> str:
        variant = variant or self.default_variant
        if variant not in self.variants:
            raise GameError(f"unknown variant {variant!r} (known: {', '.join(self.variants)})")
        return variant

    def new_state(self, variant: str | None = None) -> SekigaharaState:
        """The fixed default scenario (Ishida attacks, default armies, fixed hands)."""
        return SekigaharaState(default_scenario(self._variant(variant)))

    def state_from_scenario(self, scenario: Scenario) -> SekigaharaState:
        return SekigaharaState(scenario)

    def state_from_text(self, text: str) -> SekigaharaState:
        return SekigaharaState.from_text(text)

    def variant_of(self, state: State) -> str | None:
        assert isinstance(state, SekigaharaState)
        return state.scenario.variant

    def random_opening(self, variant: str | None, plies: int, rng: Any) -> SekigaharaState:
        """A seeded deal (``plies`` is ignored): a random walk from one fixed deal would
        vary little, while a new deal varies hands, attacker and siege garrison."""
        return SekigaharaState(deal(rng, self._variant(variant)))


GAME = SekigaharaGame()
