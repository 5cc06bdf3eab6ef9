"""The small game interface every rules core implements.

Modelled on OpenSpiel's ``State``: the referee, the built-in bots and the tests
only ever see whose decision it is, the legal actions as text, how to apply one,
whether the game is over and how it ended, and a per-player view. Everything a
player decides (a move, a regroup choice, a card play) is an *action* in the
game's own text notation, so the orchestrator never reaches into a game's
internals.

Hidden information is part of the contract from the start: ``observation`` and
``history`` take the viewing player, and a game with secrets returns only what
that player may know. The referee sends a bot nothing else.

A new game needs no change outside its own folder. Besides its rules, a
``Game`` says how it is drawn (``show``: a presentation object in the game's
folder, imported only when something is drawn, so the rules stay free of
terminal and web libraries), which built-in bot is its strongest
(``strongest_bot``) and which decisions ``arena check-bot`` asks a bot about
(``check_cases``, ``notable_decision``). The arena finds games in two ways
(``arena/games/__init__.py``):

* a subpackage of ``arena.games`` whose module exports ``GAME``, a ``Game``
  instance (Kamisado and Sekigahara are found so);
* an installed distribution's entry point in the group ``arena.games``, whose
  object is a ``Game`` instance: a game in its own package declares, in its
  ``pyproject.toml``::

      [project.entry-points."arena.games"]
      toy = "toy_game:GAME"

  and is found once installed (or on ``sys.path`` with its ``.dist-info``),
  with no edit to the arena.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from arena.games.show import Show

TERMINAL = -1
"""``current_player()`` of a finished game."""


class GameError(ValueError):
    """A position text, variant or option that the game cannot accept."""


class IllegalAction(GameError):
    """An action text that is not legal in the current state."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended, from the rules' point of view.

    ``returns`` is ``(1, 0)``, ``(0, 1)`` or ``(0.5, 0.5)`` from the players'
    points of view (player 0 first). ``reason`` is a short word such as
    ``"home-row"`` or ``"deadlock"``; ``details`` holds game-specific figures
    (scores, impacts, casualties) for the record.
    """

    returns: tuple[float, float]
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Solution:
    """What a game's exact solver proved about a state, for the player to move.

    A solver proves one *part* of a game at a time (a Kamisado round: the match
    score only counts what rounds add up to), so ``part`` says which (the round
    number) and ``winner`` is the player who wins that part by force, or
    ``None`` when it was not proven within the budget. ``distance`` is the
    plies to the part's end with best play: the quickest win, the longest
    defence; for an unknown value, the plies proven to decide nothing. A state
    where the part has just ended has ``move = None``, distance 0 and the
    part's actual winner.
    """

    winner: int | None
    distance: int
    move: str | None
    part: int
    player: int
    nodes: int = 0

    @property
    def value(self) -> str:
        """``"won"``, ``"lost"`` or ``"unknown"`` for ``player``."""
        if self.winner is None:
            return "unknown"
        return "won" if self.winner == self.player else "lost"


@dataclass(frozen=True, slots=True)
class CheckCase:
    """A decision ``arena check-bot`` asks a bot for, named ``name`` ("Sumo push
    available"), in ``variant``: the position ``position`` (a text) or, without
    one, the deepest decision within ``plies`` seeded random actions from the
    start. ``offers``: an action the position must offer among at least two,
    which is what makes it the case its name claims (checked before use)."""

    name: str
    variant: str
    position: str | None = None
    plies: int = 0
    offers: str | None = None


class State(ABC):
    """One game in progress. Mutable: ``apply_action`` changes it in place."""

    game_name: ClassVar[str]

    @abstractmethod
    def current_player(self) -> int:
        """0 or 1 for the player who decides next, ``TERMINAL`` when over."""

    @abstractmethod
    def legal_actions(self) -> list[str]:
        """Every legal action in notation; empty exactly when terminal."""

    @abstractmethod
    def apply_action(self, action: str) -> None:
        """Play ``action`` for the current player; raise ``IllegalAction`` if not legal."""

    @abstractmethod
    def clone(self) -> State:
        """An independent copy, for look-ahead."""

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    @abstractmethod
    def outcome(self) -> Outcome | None:
        """The outcome of a finished game, ``None`` while it goes on."""

    @abstractmethod
    def to_text(self) -> str:
        """The one-line position text of the whole state (the referee's view)."""

    @abstractmethod
    def observation(self, player: int) -> dict[str, Any]:
        """Structured JSON-ready view of the state as ``player`` may see it."""

    @abstractmethod
    def observation_text(self, player: int) -> str:
        """The one-line position text as ``player`` may see it."""

    @abstractmethod
    def history(self, player: int) -> list[str]:
        """The actions so far, as ``player`` may see them."""

    def forced_action(self) -> str | None:
        """The action the referee may play without asking the bot, or ``None``.

        A decision played without a request is visible to the opponent: no clock
        charge and no increment show in its ``remaining_ms``. So only an action
        that every player can tell is forced may be auto-played; where it is the
        single legal action only because of what the mover hides (a hand without
        a loyalty card), the bot must be asked like for any decision. The default
        always asks, the safe choice for a game with secrets; games override it.
        """
        return None

    def player_names(self) -> tuple[str, str]:
        return ("first", "second")

    def figures(self) -> dict[str, str]:
        """Short labelled figures a report shows for this state, player 0's first
        (e.g. ``{"points": "3-1", "rounds won": "2-1"}``). Reports call this on a
        game's final position instead of reading game-specific outcome details, so a
        new game chooses what its table rows say without any change to the reports."""
        return {}


class Game(ABC):
    """A game family: makes initial states and parses position texts."""

    name: ClassVar[str]
    variants: ClassVar[Sequence[str]]
    default_variant: ClassVar[str]
    description: ClassVar[str] = ""
    deals_openings: ClassVar[bool] = False
    """``True`` when ``random_opening`` is a deal rather than a walk from one start
    (hidden hands, as in Sekigahara): the tournament then deals every pair task its
    own opening even with ``plies = 0``, since a single fixed deal would be one game."""
    observation_type: ClassVar[type | None] = None
    """A msgspec Struct describing ``State.observation`` exactly, published as JSON
    Schema in ``docs/schema/`` (``python -m arena.protocol.schema``); ``None``: undescribed."""
    solves: ClassVar[str | None] = None
    """What ``solve`` proves (Kamisado: ``"round"``); ``None``: the game has no solver."""
    no_solver: ClassVar[str] = "it has no exact solver"
    """Why there is no solver, for one-line messages."""

    strongest_bot: ClassVar[str] = "random"
    """The strongest built-in bot for this game (a name ``arena bots`` lists):
    ``arena check-bot --games`` plays a bot against it and ``random``."""

    def show(self) -> Show:
        """How this game is drawn in the terminal, reports and web pages.

        Games override this to return their own ``arena.games.show.Show`` from a
        module of their folder, imported here, lazily: drawing needs rich and
        friends, the rules do not. The default lists an observation's fields as
        text.
        """
        from arena.games.show import Show

        return Show()

    def check_cases(self) -> list[CheckCase]:
        """Decisions ``arena check-bot`` asks a bot for beyond the start position and
        the second player's first: where bots of this game most often go wrong. The
        default is one decision some 40 random actions into the last variant."""
        variant = self.variants[-1]
        return [CheckCase(f"{variant} game", variant, plies=40)]

    def notable_decision(self, state: State) -> str | None:
        """What kind of decision, worth counting, ``state`` asks of its player, or
        ``None``: ``arena check-bot``'s whole games say how many of each kind a bot
        met (Kamisado: "later rounds opened with a free choice", which only whole
        matches reach). The default counts none."""
        return None

    @abstractmethod
    def new_state(self, variant: str | None = None) -> State:
        """The initial state of ``variant`` (the default variant if ``None``)."""

    @abstractmethod
    def state_from_text(self, text: str) -> State:
        """Parse a position text; raise ``GameError`` naming what is wrong."""

    def variant_of(self, state: State) -> str | None:
        """The variant (match kind) ``state`` belongs to, ``None`` if the game cannot
        tell; an openings file is checked against the tournament's variant with it."""
        return None

    def perft(self, state: State, depth: int) -> int:
        """Number of action sequences of exactly ``depth`` plies from ``state``.

        A generic, slow walk through the text interface; games with a fast core
        override it. Used to check move generators against known tables.
        """
        if depth == 0:
            return 1
        total = 0
        for action in state.legal_actions():
            child = state.clone()
            child.apply_action(action)
            total += self.perft(child, depth - 1)
        return total

    def perft_divide(self, state: State, depth: int) -> list[tuple[str, int]]:
        """``perft`` split by the first action: ``(action, count)`` per legal action.

        The counts always add up to ``perft(state, depth)`` (``depth`` >= 1); a game
        whose perft stops at some boundary (a Kamisado round) overrides this so
        that the split stops there too.
        """
        out = []
        for action in state.legal_actions():
            child = state.clone()
            child.apply_action(action)
            out.append((action, self.perft(child, depth - 1)))
        return out

    def random_decision(self, variant: str, plies: int, seed: int) -> State | None:
        """The deepest state within ``plies`` seeded random actions from the start of
        ``variant`` in which a bot is asked to decide (not one the referee plays by
        itself, ``State.forced_action``); ``None`` when the game offers none."""
        rng = random.Random(seed)
        state = self.new_state(variant)
        deepest = advance_to_decision(state.clone())
        for _ in range(plies):
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
            if not state.is_terminal() and state.forced_action() is None:
                deepest = state.clone()
        return deepest

    def random_opening(self, variant: str | None, plies: int, rng: Any) -> State:
        """A state reached by ``plies`` random actions from the start.

        Games override this when a plain random walk would be a poor opening
        (for example one that ends the game); the default retries a few times
        and returns a non-terminal state.
        """
        for _ in range(100):
            state = self.new_state(variant)
            for _ in range(plies):
                if state.is_terminal():
                    break
                state.apply_action(rng.choice(state.legal_actions()))
            if not state.is_terminal():
                return state
        raise GameError(f"{self.name}: no non-terminal opening of {plies} plies found")

    def solve(
        self,
        state: State,
        budget_ms: float | None,
        *,
        max_nodes: int = 0,
        max_depth: int | None = None,
        table_mb: int | None = None,
    ) -> Solution | None:
        """The exact value of the part of the game ``state`` is in, searched for at
        most ``budget_ms`` milliseconds (``None``: no limit), ``max_nodes`` positions
        (0: no limit) and ``max_depth`` plies; ``table_mb`` sizes the solver's
        memory. ``None`` when nothing is left to solve (the game is over).
        Unknown is a legitimate answer. Optional: a game without a solver raises
        ``GameError``."""
        raise GameError(f"{self.name}: {self.no_solver}")


def advance_to_decision(state: State) -> State | None:
    """Play the actions the referee plays itself (``State.forced_action``) on ``state``,
    in place, until a decision it asks a bot for; ``None`` if the game ends first."""
    while not state.is_terminal():
        forced = state.forced_action()
        if forced is None:
            return state
        state.apply_action(forced)
    return None
